package strictyaml

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

type inner struct {
	Wait  time.Duration `yaml:"wait"`
	Ratio float64       `yaml:"ratio"`
}

type config struct {
	Name   string  `yaml:"name"`
	Count  int     `yaml:"count"`
	On     bool    `yaml:"on"`
	Sizes  []int   `yaml:"sizes"`
	Inner  inner   `yaml:"inner"`
	Items  []inner `yaml:"items"`
	hidden int
}

func decode(t *testing.T, doc string, into *config) error {
	t.Helper()
	root, err := Parse([]byte(doc), "config")
	if err != nil {
		return err
	}
	if root == nil {
		return nil
	}
	d := &Decoder{Doc: "config", NewElem: func(t reflect.Type) (reflect.Value, bool) {
		if t == reflect.TypeOf(inner{}) {
			return reflect.ValueOf(inner{Ratio: 0.5}), true
		}
		return reflect.Value{}, false
	}}
	return d.DecodeStruct(root, reflect.ValueOf(into).Elem(), "")
}

func TestDecodeMergesIntoDefaults(t *testing.T) {
	c := config{Name: "default", Count: 3, Inner: inner{Ratio: 1}}
	err := decode(t, "count: 0x10\ninner: {wait: 40ms}\nsizes: [1, 2]\nitems:\n  - wait: 1s\n", &c)
	if err != nil {
		t.Fatal(err)
	}
	want := config{Name: "default", Count: 16, Sizes: []int{1, 2},
		Inner: inner{Wait: 40 * time.Millisecond, Ratio: 1},
		Items: []inner{{Wait: time.Second, Ratio: 0.5}}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
}

// Each of these is something yaml.Unmarshal accepts silently (a fraction
// truncated, a null keeping the default) or reports without a field path.
func TestDecodeErrorsNameLinePathAndValue(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"count: 1.5\n", `line 1: count = "1.5": want an integer`},
		{"count: null\n", `line 1: count = null: want an integer (to keep the default, leave the key out)`},
		{"name: a\nname: b\n", `line 2: name: duplicate key (first at line 1)`},
		{"inner: {wiat: 1s}\n", `line 1: inner.wiat: unknown field; did you mean wait?`},
		{"inner: {wait: 40}\n", `inner.wait = "40": want a duration like 40ms (a bare number has no unit)`},
		{"items: [{ratio: .inf}]\n", `items[0].ratio = ".inf": want a finite number`},
		{"sizes: {a: 1}\n", `sizes: want a list of integers, not a mapping`},
		{"[1]\n", `config: want a mapping of name, count, on, sizes, inner, items, not a list`},
		{"a: 1\n---\nb: 2\n", `a second YAML document: a config file holds exactly one`},
		{"<<: {name: x}\n", `merge keys are not supported`},
	} {
		var c config
		var err error
		if tc.doc == "[1]\n" {
			root, _ := Parse([]byte(tc.doc), "config")
			err = (&Decoder{Doc: "config"}).DecodeStruct(root, reflect.ValueOf(&c).Elem(), "")
		} else {
			err = decode(t, tc.doc, &c)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want it to contain %q", tc.doc, err, tc.want)
		}
	}
}

func TestLookupAndSetNode(t *testing.T) {
	c := config{}
	v, path, err := Lookup(reflect.ValueOf(&c).Elem(), "items[0].wait", nil)
	if err != nil || path != "items[0].wait" || len(c.Items) != 1 {
		t.Fatalf("Lookup appended? path=%q err=%v items=%v", path, err, c.Items)
	}
	n, msg := SetNode(path, "2s", v.Type())
	if msg != "" {
		t.Fatal(msg)
	}
	if err := (&Decoder{Set: true}).Decode(n, v, path); err != nil || c.Items[0].Wait != 2*time.Second {
		t.Fatalf("err=%v wait=%v", err, c.Items[0].Wait)
	}
	if _, _, err := Lookup(reflect.ValueOf(&c).Elem(), "items[5].wait", nil); err == nil ||
		!strings.Contains(err.Error(), "index out of range; items has 1 elements (an index of 1 appends)") {
		t.Errorf("out of range: %v", err)
	}
	if _, _, err := Lookup(reflect.ValueOf(&c).Elem(), "inner.rato", nil); err == nil ||
		!strings.Contains(err.Error(), "unknown field inner.rato; did you mean ratio?") {
		t.Errorf("typo: %v", err)
	}
	if _, msg := SetNode("items", "x", reflect.TypeOf(c.Items)); !strings.Contains(msg, "set one field at a time, like items[0].wait=") {
		t.Errorf("list of mappings: %q", msg)
	}
	if n, _ := SetNode("sizes", "1, 2,3", reflect.TypeOf(c.Sizes)); len(n.Content) != 3 {
		t.Errorf("list: %d elements", len(n.Content))
	}
	if n, _ := SetNode("name", "null", reflect.TypeOf("")); n.Tag != "!!str" {
		t.Errorf("a string field takes the text as it is, got tag %q", n.Tag)
	}
}
