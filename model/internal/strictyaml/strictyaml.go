package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// FieldError is one bad key or value. It keeps the parts apart so that a
// file error can lead with its line and a --set error with the assignment.
type FieldError struct {
	Line  int    // 1-based; 0 when there is no file (a --set value)
	Path  string // dotted field path; "" is the whole document
	Value string // the value as written, quoted (Quote); "" when not a scalar
	Msg   string // what was expected
	Doc   string // what the whole document is called, for Path == ""
}

func (e *FieldError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	switch {
	case e.Path != "":
		b.WriteString(e.Path)
	case e.Doc != "":
		b.WriteString(e.Doc)
	default:
		b.WriteString("document")
	}
	if e.Value != "" {
		b.WriteString(" = ")
		b.WriteString(e.Value)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// Quote quotes a value for an error message, cut short so that a huge scalar
// does not drown the message.
func Quote(v string) string {
	const max = 60
	if r := []rune(v); len(r) > max {
		v = string(r[:max]) + "..."
	}
	return strconv.Quote(v)
}

// DurationType is time.Duration, which the decoder reads from "40ms"-style
// strings rather than as the integer it is.
var DurationType = reflect.TypeOf(time.Duration(0))

// Parse returns data's only document's top-level node, or nil for an empty
// document (nothing, comments only, or "---"). doc names what the file holds
// ("a scenario file holds exactly one").
func Parse(data []byte, doc string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var first yaml.Node
	if err := decodeDocument(dec, &first); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	// A second document would otherwise be silently ignored, and whoever
	// wrote it presumably meant it to count.
	var extra yaml.Node
	switch err := decodeDocument(dec, &extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, err
	default:
		return nil, fmt.Errorf("line %d: a second YAML document: a %s file holds exactly one", extra.Line, doc)
	}
	if first.Kind != yaml.DocumentNode || len(first.Content) != 1 {
		return nil, nil
	}
	root := first.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil
	}
	return root, nil
}

// decodeDocument turns a panic inside the YAML library into an error: files
// come from the command line, and no file may crash the CLI. Only the library
// call is covered, so that panics in this package's own code still surface
// (and get fixed) under the fuzzer.
func decodeDocument(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot parse the document: %v", r)
		}
	}()
	return dec.Decode(n)
}

// Decoder walks a YAML node against a Go value by reflection. It does this
// itself rather than through yaml.Unmarshal so that every error can name the
// dotted path, and so that it is strict where yaml.v3 is lenient (Unmarshal
// truncates 1.5 into an int and lets a null keep the old value) and lenient
// where yaml.v3 is strict (durations). yaml.v3 does reject duplicate keys
// when decoding into a struct or map, but only through Unmarshal and with no
// field path; walking nodes, this decoder checks them itself (CheckKeys).
type Decoder struct {
	// Doc is what the whole document is called in errors ("scenario").
	Doc string
	// Set is true while decoding a --set value: errors carry no line, and a
	// null is not offered "leave the key out".
	Set bool
	// NewElem, if set, gives the starting value of a new element of a list
	// of t (ok false: the zero value), so that a one-line element can be
	// complete.
	NewElem func(t reflect.Type) (v reflect.Value, ok bool)
	// CheckString, if set, may refuse a string value at path; it returns
	// what was expected, or "" to accept.
	CheckString func(path, value string) string
	// ExtraKeys, if set, names keys of struct t that the caller handles
	// before the walk, so that did-you-mean can suggest them.
	ExtraKeys func(t reflect.Type) []string
}

// Deref follows aliases to the anchored node. The loop is bounded although
// the parser only makes aliases point at non-alias nodes: a malformed node
// graph must end in an error, not a hang.
func Deref(n *yaml.Node, path string) (*yaml.Node, error) {
	for i := 0; n.Kind == yaml.AliasNode; i++ {
		if n.Alias == nil || i > 100 {
			return nil, &FieldError{Line: n.Line, Path: path, Value: Quote("*" + n.Value),
				Msg: "alias does not lead to a value"}
		}
		n = n.Alias
	}
	return n, nil
}

// Decode stores node n into v, whose dotted path is path. The recursion
// follows v's type, not the node graph, so its depth is bounded by the
// struct nesting whatever the document holds (aliases included).
func (d *Decoder) Decode(n *yaml.Node, v reflect.Value, path string) error {
	n, err := Deref(n, path)
	if err != nil {
		return err
	}
	t := v.Type()
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		if d.Set {
			return d.fail(&FieldError{Path: path, Msg: Want(t)})
		}
		return d.fail(&FieldError{Line: n.Line, Path: path, Value: "null",
			Msg: Want(t) + " (to keep the default, leave the key out)"})
	}
	switch {
	case t == DurationType:
		return d.decodeDuration(n, v, path)
	case t.Kind() == reflect.Slice:
		return d.decodeSlice(n, v, path)
	case t.Kind() == reflect.Struct:
		return d.DecodeStruct(n, v, path)
	}
	if n.Kind != yaml.ScalarNode {
		return d.wrongKind(n, path, t)
	}
	bad := &FieldError{Line: n.Line, Path: path, Value: Quote(n.Value), Msg: Want(t), Doc: d.Doc}
	if t.Kind() == reflect.String {
		// Any scalar is text: `name: 2024` names it "2024".
		if d.CheckString != nil {
			if msg := d.CheckString(path, n.Value); msg != "" {
				bad.Msg = msg
				return bad
			}
		}
		v.SetString(n.Value)
		return nil
	}
	// Let YAML itself resolve the scalar (0x10, 1_000, 1e3, true, ...), then
	// accept only values of the field's kind.
	var x any
	if err := n.Decode(&x); err != nil {
		return bad
	}
	switch t.Kind() {
	case reflect.Bool:
		b, ok := x.(bool)
		if !ok {
			return bad
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		var i int64
		switch x := x.(type) {
		case int:
			i = int64(x)
		case int64:
			i = x
		case uint64:
			bad.Msg = fmt.Sprintf("want an integer at most %d", int64(math.MaxInt64))
			return bad
		default:
			return bad
		}
		if v.OverflowInt(i) {
			bad.Msg = "want a smaller integer"
			return bad
		}
		v.SetInt(i)
	case reflect.Float64:
		var f float64
		switch x := x.(type) {
		case int:
			f = float64(x)
		case int64:
			f = float64(x)
		case uint64:
			f = float64(x)
		case float64:
			f = x
		default:
			return bad
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			bad.Msg = "want a finite number"
			return bad
		}
		v.SetFloat(f)
	default:
		// A field type this decoder does not know: a programming error,
		// reported rather than panicking.
		bad.Msg = fmt.Sprintf("field type %v cannot be read from a file", t)
		return bad
	}
	return nil
}

func (d *Decoder) fail(e *FieldError) error {
	e.Doc = d.Doc
	return e
}

// decodeDuration accepts Go duration strings and a bare 0. Any other bare
// number is rejected: a unit is never implied.
func (d *Decoder) decodeDuration(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.ScalarNode {
		return d.wrongKind(n, path, DurationType)
	}
	bad := &FieldError{Line: n.Line, Path: path, Value: Quote(n.Value), Msg: Want(DurationType), Doc: d.Doc}
	switch n.ShortTag() {
	case "!!str":
		dur, err := time.ParseDuration(n.Value)
		if err != nil {
			return bad
		}
		v.SetInt(int64(dur))
		return nil
	case "!!int":
		var x any
		if err := n.Decode(&x); err == nil && x == 0 {
			v.SetInt(0)
			return nil
		}
		bad.Msg += " (a bare number has no unit)"
	case "!!float":
		bad.Msg += " (a bare number has no unit)"
	}
	return bad
}

func (d *Decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) error {
	t := v.Type()
	if n.Kind != yaml.SequenceNode {
		return d.wrongKind(n, path, t)
	}
	out := reflect.MakeSlice(t, len(n.Content), len(n.Content))
	for i, el := range n.Content {
		ev := out.Index(i)
		if d.NewElem != nil {
			if start, ok := d.NewElem(t.Elem()); ok {
				ev.Set(start)
			}
		}
		if err := d.Decode(el, ev, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	v.Set(out)
	return nil
}

// DecodeStruct merges a mapping into v: present keys override, absent keys
// keep v's value.
func (d *Decoder) DecodeStruct(n *yaml.Node, v reflect.Value, path string) error {
	t := v.Type()
	if n.Kind != yaml.MappingNode {
		return d.wrongKind(n, path, t)
	}
	if err := d.CheckKeys(n, path); err != nil {
		return err
	}
	fields := Fields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		name := KeyName(k)
		fi := fieldIndex(fields, name)
		if fi < 0 {
			names := FieldNames(t)
			if d.ExtraKeys != nil {
				names = append(names, d.ExtraKeys(t)...)
			}
			return d.fail(&FieldError{Line: k.Line, Path: Join(path, name), Msg: Unknown(name, names)})
		}
		if err := d.Decode(n.Content[i+1], v.Field(fields[fi].Index), Join(path, name)); err != nil {
			return err
		}
	}
	return nil
}

// CheckKeys rejects keys that are not plain names, merge keys and duplicate
// keys.
func (d *Decoder) CheckKeys(n *yaml.Node, path string) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, err := Deref(n.Content[i], path)
		if err != nil {
			return err
		}
		if k.Kind != yaml.ScalarNode {
			return d.fail(&FieldError{Line: k.Line, Path: path, Msg: "a key must be a field name, not " + kindName(k)})
		}
		if k.ShortTag() == "!!merge" {
			return d.fail(&FieldError{Line: k.Line, Path: Join(path, "<<"),
				Msg: "merge keys are not supported; alias a whole value instead"})
		}
		if first, dup := seen[k.Value]; dup {
			return d.fail(&FieldError{Line: k.Line, Path: Join(path, k.Value),
				Msg: fmt.Sprintf("duplicate key (first at line %d)", first)})
		}
		seen[k.Value] = k.Line
	}
	return nil
}

// KeyName is a mapping key's text; CheckKeys has made sure it is a scalar,
// possibly behind an alias.
func KeyName(k *yaml.Node) string {
	if k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	return k.Value
}

// Join appends a field name to a dotted path.
func Join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// WrongKind is the error for a node of the wrong kind (a list where a
// mapping belongs, ...).
func (d *Decoder) WrongKind(n *yaml.Node, path string, t reflect.Type) error {
	return d.wrongKind(n, path, t)
}

func (d *Decoder) wrongKind(n *yaml.Node, path string, t reflect.Type) error {
	return d.fail(&FieldError{Line: n.Line, Path: path, Msg: Want(t) + ", not " + kindName(n)})
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "the value " + Quote(n.Value)
	}
	return "a YAML node of another kind"
}

// Want says what a field of type t accepts.
func Want(t reflect.Type) string {
	if t == DurationType {
		return "want a duration like 40ms"
	}
	switch t.Kind() {
	case reflect.String:
		return "want a string"
	case reflect.Bool:
		return "want true or false"
	case reflect.Int, reflect.Int64:
		return "want an integer"
	case reflect.Float64:
		return "want a number"
	case reflect.Slice:
		switch t.Elem().Kind() {
		case reflect.Int, reflect.Int64:
			return "want a list of integers"
		case reflect.String:
			return "want a list of strings"
		}
		return "want a list of mappings"
	case reflect.Struct:
		return "want a mapping of " + strings.Join(FieldNames(t), ", ")
	}
	return "want " + t.String()
}

// Unknown explains an unknown field name, suggesting the nearest known ones
// when they are likely typos (p95: "did you mean p90 or p99?").
func Unknown(name string, known []string) string {
	var best []string
	bestD := 2 // suggest only within two edits
	for _, k := range known {
		switch dist := editDistance(name, k); {
		case dist > bestD || dist >= len(k):
		case dist < bestD || len(best) == 0:
			best, bestD = []string{k}, dist
		case dist == bestD:
			best = append(best, k)
		}
	}
	if len(best) > 0 {
		return "unknown field; did you mean " + strings.Join(best, " or ") + "?"
	}
	return "unknown field; want one of " + strings.Join(known, ", ")
}

// editDistance is the Levenshtein distance between a and b. Field names are
// short; a name longer than any field cannot be a typo of one, so long input
// is cut off rather than costing quadratic time.
func editDistance(a, b string) int {
	const max = 64
	if len(a) > max {
		a = a[:max]
	}
	if len(b) > max {
		b = b[:max]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Field is one struct field under its yaml name, which is the file format's
// and --set's name for it.
type Field struct {
	Name  string // the yaml tag
	Index int
}

// Fields lists a struct's exported, yaml-tagged fields in order.
func Fields(t reflect.Type) []Field {
	var out []Field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		out = append(out, Field{name, i})
	}
	return out
}

// FieldNames is the yaml names of Fields(t).
func FieldNames(t reflect.Type) []string {
	var names []string
	for _, f := range Fields(t) {
		names = append(names, f.Name)
	}
	return names
}

func fieldIndex(fields []Field, name string) int {
	for j, f := range fields {
		if f.Name == name {
			return j
		}
	}
	return -1
}

// Lookup finds the field a --set key (workflow.max_inline,
// deployments[1].share) names inside root, which must be addressable. An
// index one past the end of a list appends an element, started by newElem
// when it is set. It returns the field and its canonical path.
func Lookup(root reflect.Value, key string, newElem func(reflect.Type) (reflect.Value, bool)) (reflect.Value, string, error) {
	v, path := root, ""
	for _, seg := range strings.Split(key, ".") {
		name, index, hasIndex := strings.Cut(seg, "[")
		if name == "" {
			return reflect.Value{}, "", fmt.Errorf("want a dotted field path like workflow.max_inline")
		}
		if v.Kind() != reflect.Struct || v.Type() == DurationType {
			return reflect.Value{}, "", fmt.Errorf("%s has no field %s", path, name)
		}
		fields := Fields(v.Type())
		fi := fieldIndex(fields, name)
		full := Join(path, name)
		if fi < 0 {
			msg := Unknown(name, FieldNames(v.Type()))
			return reflect.Value{}, "", fmt.Errorf("unknown field %s%s", full, strings.TrimPrefix(msg, "unknown field"))
		}
		v, path = v.Field(fields[fi].Index), full
		if !hasIndex {
			continue
		}
		index, ok := strings.CutSuffix(index, "]")
		i, err := strconv.Atoi(index)
		if !ok || err != nil || i < 0 {
			return reflect.Value{}, "", fmt.Errorf("%s[%s: want an index like %s[0]", path, index, path)
		}
		if v.Kind() != reflect.Slice {
			return reflect.Value{}, "", fmt.Errorf("%s is not a list", path)
		}
		switch {
		case i == v.Len():
			el := reflect.New(v.Type().Elem()).Elem()
			if newElem != nil {
				if start, ok := newElem(v.Type().Elem()); ok {
					el.Set(start)
				}
			}
			v.Set(reflect.Append(v, el))
		case i > v.Len():
			return reflect.Value{}, "", fmt.Errorf("%s[%d]: index out of range; %s has %d elements (an index of %d appends)",
				path, i, path, v.Len(), v.Len())
		}
		v, path = v.Index(i), fmt.Sprintf("%s[%d]", path, i)
	}
	return v, path, nil
}

// SetNode makes the node a --set value stands for, for a field of type t at
// path: a comma-separated list for a list of scalars (empty: the empty
// list), the text itself for a string, a scalar YAML resolves for anything
// else. A list of mappings or a group of fields cannot be set at once; the
// message then says what to set instead.
func SetNode(path, value string, t reflect.Type) (*yaml.Node, string) {
	switch {
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		return nil, fmt.Sprintf("%s is a list of mappings; set one field at a time, like %s[0].%s=...",
			path, path, Fields(t.Elem())[0].Name)
	case t.Kind() == reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		if value != "" {
			for _, v := range strings.Split(value, ",") {
				n.Content = append(n.Content, scalarFor(strings.TrimSpace(v), t.Elem()))
			}
		}
		return n, ""
	case t.Kind() == reflect.Struct && t != DurationType:
		var names []string
		for _, f := range Fields(t) {
			names = append(names, path+"."+f.Name)
		}
		return nil, fmt.Sprintf("%s is a group of fields; set one of %s", path, strings.Join(names, ", "))
	}
	return scalarFor(value, t), ""
}

// scalarFor makes the node for one --set scalar. A string field takes the
// text as it is (the tag says so, or "null" and "123" would resolve to other
// types); any other field lets YAML resolve it, as in a file.
func scalarFor(value string, t reflect.Type) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: value}
	if t.Kind() == reflect.String {
		n.Tag = "!!str"
	}
	return n
}
