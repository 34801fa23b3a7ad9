package model

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/simlab/simlab/model/program"

	"github.com/simlab/simlab/model/internal/strictyaml"
)

// withBuiltinHooks points the built-in hooks at a small fixed set for one
// test, whatever another file registers, and restores them afterwards.
func withBuiltinHooks(t *testing.T) {
	t.Helper()
	oldS, oldN := builtinScenario, builtinScenarioNames
	t.Cleanup(func() { builtinScenario, builtinScenarioNames = oldS, oldN })
	builtinScenario = func(name string) (Scenario, bool) {
		switch name {
		case "fanout":
			return DefaultScenario(), true
		case "bench":
			s := DefaultScenario()
			s.Name = "bench"
			s.World = "world-vercel"
			s.Store = VercelProfile()
			s.Store.MaxConcurrentReads = 4
			s.Workflow.Fanouts = []int{256}
			return s, true
		}
		return Scenario{}, false
	}
	builtinScenarioNames = func() []string { return []string{"fanout", "bench"} }
}

func mustParse(t *testing.T, doc string) Scenario {
	t.Helper()
	s, err := ParseScenario([]byte(doc))
	if err != nil {
		t.Fatalf("ParseScenario(%q): %v", doc, err)
	}
	return s
}

// {} is the defaults; a document with nothing in it is refused, not run as
// the defaults in the file's name (a file not yet written, or the wrong one).
func TestParseScenarioEmptyIsRefusedAndBracesAreDefault(t *testing.T) {
	for _, doc := range []string{"{}", "{}\n...\n"} {
		if got := mustParse(t, doc); !reflect.DeepEqual(got, DefaultScenario()) {
			t.Errorf("ParseScenario(%q) = %+v, want DefaultScenario()", doc, got)
		}
	}
	for _, doc := range []string{"", "\n", "# only a comment\n", "---\n"} {
		if _, err := ParseScenario([]byte(doc)); err == nil || !strings.Contains(err.Error(), "holds no scenario") {
			t.Errorf("ParseScenario(%q): %v, want it refused as empty", doc, err)
		}
	}
}

func TestParseScenarioJSON(t *testing.T) {
	got := mustParse(t, `{
  "name": "j",
  "runs": 3,
  "run_interval": "250ms",
  "workflow": {"fanouts": [4, 2], "resilient_dispatch": false, "body": {"p50": "10ms"}},
  "deployments": [{"name": "a"}, {"name": "b", "producer": "v1", "share": 0.5}],
  "faults": {"crash": 0.25, "until": "1m"},
  "variants": ["atomic-fan-in"]
}`)
	want := DefaultScenario()
	want.Name = "j"
	want.Runs = 3
	want.RunInterval = 250 * time.Millisecond
	want.Workflow.Fanouts = []int{4, 2}
	want.Workflow.ResilientDispatch = false
	want.Workflow.Body.P50 = 10 * time.Millisecond
	want.Deployments = []DeploymentConfig{
		{Name: "a", Producer: "v2", Consumer: "v2", Share: 1},
		{Name: "b", Producer: "v1", Consumer: "v2", Share: 0.5},
	}
	want.Faults.Crash = 0.25
	want.Faults.Until = time.Minute
	want.Variants = []string{"atomic-fan-in"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseScenarioNestedOverrideKeepsSiblings(t *testing.T) {
	got := mustParse(t, "workflow:\n  max_inline: 1\nstore:\n  runs_get:\n    p50: 0.7ms\nlimits: {max_time: 90s}\n")
	want := DefaultScenario()
	want.Workflow.MaxInline = 1
	want.Store.RunsGet.P50 = 700 * time.Microsecond
	want.Limits.MaxTime = 90 * time.Second
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseScenarioScalarForms(t *testing.T) {
	got := mustParse(t, `
name: &n 2024          # any scalar is a string
description: *n        # aliases are followed
runs: 0x10             # YAML integer forms
run_interval: 0        # a bare 0 is a duration
workflow: {chunk_size: 1_000, quickjs_share: 1}  # an integer is a number
rollout: {at: "1.5s"}
`)
	if got.Name != "2024" || got.Description != "2024" || got.Runs != 16 || got.RunInterval != 0 ||
		got.Workflow.ChunkSize != 1000 || got.Workflow.QuickJSShare != 1 || got.Rollout.At != 1500*time.Millisecond {
		t.Errorf("got %+v", got)
	}
}

func TestParseScenarioWorldResetsStore(t *testing.T) {
	// store before world: world still applies first.
	got := mustParse(t, "store:\n  stale_lag: 1s\n  max_deliveries: 7\nworld: world-vercel\n")
	want := VercelProfile()
	want.StaleLag = time.Second
	want.MaxDeliveries = 7
	if got.World != "world-vercel" || !reflect.DeepEqual(got.Store, want) {
		t.Errorf("store = %+v, want %+v", got.Store, want)
	}

	// Naming the world the base already has keeps the base's store.
	withBuiltinHooks(t)
	got = mustParse(t, "base: bench\nworld: world-vercel\n")
	if got.Store.MaxConcurrentReads != 4 {
		t.Errorf("store.max_concurrent_reads = %d, want the base's 4", got.Store.MaxConcurrentReads)
	}
	// A different world resets it; store.name follows world.
	got = mustParse(t, "base: bench\nworld: world-postgres\n")
	if !reflect.DeepEqual(got.Store, PostgresProfile()) {
		t.Errorf("store = %+v, want world-postgres's profile", got.Store)
	}
}

func TestParseScenarioBase(t *testing.T) {
	withBuiltinHooks(t)
	got := mustParse(t, "base: bench\nruns: 2\n")
	want, _ := builtinScenario("bench")
	want.Runs = 2
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	_, err := ParseScenario([]byte("runs: 2\nbase: nope\n"))
	if err == nil || err.Error() != `line 2: base = "nope": unknown scenario; want one of fanout, bench` {
		t.Errorf("unknown base: %v", err)
	}
}

func TestParseScenarioDeploymentDefaults(t *testing.T) {
	got := mustParse(t, "deployments:\n  - name: a\n  - {name: b, producer: v1, consumer: v1, share: 0}\n")
	want := []DeploymentConfig{
		{Name: "a", Producer: "v2", Consumer: "v2", Share: 1},
		{Name: "b", Producer: "v1", Consumer: "v1", Share: 0},
	}
	if !reflect.DeepEqual(got.Deployments, want) {
		t.Errorf("deployments = %+v, want %+v", got.Deployments, want)
	}
}

func TestParseScenarioBadDocuments(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"unknown top-level field", "runs: 1\nrunz: 2\n", "line 2: runz: unknown field; did you mean runs?"},
		{"unknown field, no near name", "colour: red\n", "line 1: colour: unknown field; want one of name, description, world"},
		{"unknown nested field", "workflow:\n  max_inlin: 2\n", "line 2: workflow.max_inlin: unknown field; did you mean max_inline?"},
		{"unknown dist field", "store:\n  runs_get: {p95: 1ms}\n", "line 2: store.runs_get.p95: unknown field; did you mean p90 or p99?"},
		{"int list element", "workflow:\n  fanouts: [16, abc]\n", `line 2: workflow.fanouts[1] = "abc": want an integer`},
		{"int given a float", "runs: 1.5\n", `line 1: runs = "1.5": want an integer`},
		{"int too large", "runs: 99999999999999999999999\n", `line 1: runs = "99999999999999999999999": want an integer`},
		{"int past int64", "limits: {max_events: 18446744073709551615}", "limits.max_events = \"18446744073709551615\": want an integer at most"},
		{"float", "\n\nfaults:\n  swarm: true\n\n\n  crash: high\n", `line 7: faults.crash = "high": want a number`},
		{"float nan", "faults: {crash: .nan}", `faults.crash = ".nan": want a finite number`},
		{"bool", "workflow: {resilient_dispatch: yes}", `line 1: workflow.resilient_dispatch = "yes": want true or false`},
		{"duration bare number", "run_interval: 40\n", `line 1: run_interval = "40": want a duration like 40ms (a bare number has no unit)`},
		{"duration word", "rollout:\n  at: soon\n", `line 2: rollout.at = "soon": want a duration like 40ms`},
		{"duration overflow", "limits: {max_time: 9999999999h}", `limits.max_time = "9999999999h": want a duration like 40ms`},
		{"list given a scalar", "workflow:\n  fanouts: 16\n", `line 2: workflow.fanouts: want a list of integers, not the value "16"`},
		{"mapping given a list", "faults: [crash]\n", "line 1: faults: want a mapping of swarm, until, crash"},
		{"deployment not a mapping", "deployments: [dpl-a]\n", `line 1: deployments[0]: want a mapping of name, producer, consumer, share, not the value "dpl-a"`},
		{"top level not a mapping", "just words\n", `line 1: scenario: want a mapping of name, description`},
		{"negative width", "workflow: {fanouts: [4, -1]}\n", "scenario: workflow.fanouts[1] = -1: want a width between 1 and 100000"},
		{"negative max_inline", "workflow: {max_inline: -1}\n", "scenario: workflow.max_inline = -1: must not be negative"},
		{"bad dist order", "store: {runs_get: {p50: 1h}}\n", "scenario: store: profile world-local: runs_get.p90"},
		{"bad producer", "deployments: [{name: a, producer: v3}]\n", `scenario: deployments[0].producer = "v3": want v1 or v2`},
		{"unknown variant", "variants: [pre-fix-fence, nope]\n", `scenario: variants[1] = "nope": unknown variant`},
		{"unknown world", "world: world-mars\n", `line 1: world = "world-mars": unknown world; want one of world-local, world-postgres, world-vercel`},
		{"unknown base", "base: no-such-scenario\n", `line 1: base = "no-such-scenario": unknown scenario`},
		{"null", "runs:\n", "line 1: runs = null: want an integer (to keep the default, leave the key out)"},
		{"explicit null", "workflow:\n  body: null\n", "line 2: workflow.body = null: want a mapping of min, p50"},
		{"null list element", "variants: [~]\n", "line 1: variants[0] = null: want a string"},
		{"duplicate key", "runs: 1\nname: x\nruns: 2\n", "line 3: runs: duplicate key (first at line 1)"},
		{"duplicate nested key", "faults:\n  crash: 0.1\n  crash: 0.2\n", "line 3: faults.crash: duplicate key (first at line 2)"},
		{"duplicate world", "world: world-local\nworld: world-vercel\n", "line 2: world: duplicate key (first at line 1)"},
		{"two documents", "runs: 1\n---\nruns: 2\n", "line 2: a second YAML document: a scenario file holds exactly one"},
		{"syntax error", "runs: [1\n", "yaml: line 1"},
		{"tab indentation", "workflow:\n\tmax_inline: 1\n", "yaml: line 2"},
		{"merge key", "workflow: &w {max_inline: 1}\nfaults:\n  <<: *w\n", "line 3: faults.<<: merge keys are not supported"},
		{"complex key", "? [runs]\n: 1\n", "line 1: scenario: a key must be a field name, not a list"},
		{"store.name not the world", "store: {name: world-vercel}\n", `line 1: store.name = "world-vercel": store.name is always the world's name (world-local); set world instead`},
		{"unknown anchor", "runs: *x\n", "yaml: "},
		{"cancel without window", "faults: {cancel: 0.5}\n", "scenario: faults.cancel_within = 0s: must be positive when faults.cancel is set"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseScenario([]byte(tc.doc))
			if err == nil {
				t.Fatalf("ParseScenario(%q) succeeded, want an error containing %q", tc.doc, tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseScenario(%q):\n got error %q\nwant it to contain %q", tc.doc, err, tc.want)
			}
			// Nothing runs: the caller gets no scenario to run.
			if !reflect.DeepEqual(s, Scenario{}) {
				t.Errorf("ParseScenario(%q) returned %+v with its error, want the zero Scenario", tc.doc, s)
			}
		})
	}
}

func TestParseScenarioValidateErrorWraps(t *testing.T) {
	_, err := ParseScenario([]byte("runs: 0\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "scenario: runs = 0") {
		t.Fatalf("err = %v", err)
	}
	var fe *strictyaml.FieldError
	if errors.As(err, &fe) {
		t.Errorf("a Validate error is not a decode error: %#v", fe)
	}
}

func TestScenarioSet(t *testing.T) {
	s := DefaultScenario()
	for _, a := range []string{
		"workflow.max_inline=1",
		"store.runs_get.p50=0.9ms",
		"workflow.fanouts=16, 16,64",
		"faults.crash=0.1",
		"deployments[1].name=dpl-b", // one past the end appends
		"deployments[1].share=0.5",
		"deployments[0].producer=v1",
		"variants=pre-fix-fence,atomic-fan-in",
		"workflow.fanouts[2]=8",
		"name=null", // a string field takes the text as it is
		"rollout.at=0",
		"limits.max_events=1_000",
	} {
		if err := s.Set(a); err != nil {
			t.Fatalf("Set(%q): %v", a, err)
		}
	}
	want := DefaultScenario()
	want.Workflow.MaxInline = 1
	want.Store.RunsGet.P50 = 900 * time.Microsecond
	want.Workflow.Fanouts = []int{16, 16, 8}
	want.Faults.Crash = 0.1
	want.Deployments = []DeploymentConfig{
		{Name: "dpl-a", Producer: "v1", Consumer: "v2", Share: 1},
		{Name: "dpl-b", Producer: "v2", Consumer: "v2", Share: 0.5},
	}
	want.Variants = []string{"pre-fix-fence", "atomic-fan-in"}
	want.Name = "null"
	want.Limits.MaxEvents = 1000
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got  %+v\nwant %+v", s, want)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate after the sets: %v", err)
	}

	// world resets store to that world's profile, then store.* overrides.
	for _, a := range []string{"world=world-vercel", "store.stale_lag=1s"} {
		if err := s.Set(a); err != nil {
			t.Fatalf("Set(%q): %v", a, err)
		}
	}
	wantStore := VercelProfile()
	wantStore.StaleLag = time.Second
	if !reflect.DeepEqual(s.Store, wantStore) {
		t.Errorf("store = %+v, want %+v", s.Store, wantStore)
	}
	if err := s.Set("variants="); err != nil || len(s.Variants) != 0 {
		t.Errorf("Set(variants=): %v, variants = %v", err, s.Variants)
	}
}

func TestScenarioSetDoesNotShareBuiltinSlices(t *testing.T) {
	base := DefaultScenario()
	s := base
	if err := s.Set("workflow.fanouts[0]=3"); err != nil {
		t.Fatal(err)
	}
	if base.Workflow.Fanouts[0] != 16 {
		t.Errorf("Set wrote through into the original's slice: %v", base.Workflow.Fanouts)
	}
}

func TestScenarioSetErrors(t *testing.T) {
	tests := []struct{ assignment, want string }{
		{"workflow.max_inline=x", "--set workflow.max_inline=x: want an integer"},
		{"nosuch=1", "--set nosuch=1: unknown field nosuch; want one of name, description,"},
		{"workflow.max_inlin=1", "--set workflow.max_inlin=1: unknown field workflow.max_inlin; did you mean max_inline?"},
		{"runs", "--set runs: want key=value, like workflow.max_inline=1"},
		{"runs=", "--set runs=: want an integer"},
		{"workflow.fanouts=1,,2", "--set workflow.fanouts=1,,2: workflow.fanouts[1]: want an integer"},
		{"store.runs_get.p50=40", "--set store.runs_get.p50=40: want a duration like 40ms (a bare number has no unit)"},
		{"faults.crash=high", "--set faults.crash=high: want a number"},
		{"workflow.resilient_dispatch=maybe", "--set workflow.resilient_dispatch=maybe: want true or false"},
		{"workflow.fanouts=16,x", `--set workflow.fanouts=16,x: workflow.fanouts[1] = "x": want an integer`},
		{"workflow.fanouts[5]=1", "--set workflow.fanouts[5]=1: workflow.fanouts[5]: index out of range; workflow.fanouts has 1 elements (an index of 1 appends)"},
		{"workflow.fanouts[x]=1", "--set workflow.fanouts[x]=1: workflow.fanouts[x: want an index like workflow.fanouts[0]"},
		{"runs[0]=1", "--set runs[0]=1: runs is not a list"},
		{"runs.x=1", "--set runs.x=1: runs has no field x"},
		{"deployments=a", "--set deployments=a: deployments is a list of mappings; set one field at a time, like deployments[0].name=..."},
		{"store.runs_get=40ms", "--set store.runs_get=40ms: store.runs_get is a group of fields; set one of store.runs_get.min,"},
		{"world=world-mars", "--set world=world-mars: unknown world; want one of world-local, world-postgres, world-vercel"},
		{"store.name=x", "--set store.name=x: store.name is always the world's name (world-local); set world instead"},
		{"base=fanout", "--set base=fanout: base can only be given in a scenario file"},
		{".runs=1", "--set .runs=1: want a dotted field path like workflow.max_inline"},
	}
	for _, tc := range tests {
		s := DefaultScenario()
		err := s.Set(tc.assignment)
		if err == nil {
			t.Errorf("Set(%q) succeeded, want %q", tc.assignment, tc.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Set(%q):\n got %q\nwant %q", tc.assignment, err, tc.want)
		}
		if !reflect.DeepEqual(s, DefaultScenario()) {
			t.Errorf("Set(%q) failed but changed the scenario", tc.assignment)
		}
	}
}

func TestLoadScenario(t *testing.T) {
	withBuiltinHooks(t)
	files := map[string]string{"x.yaml": "runs: 2\n", "dir/bad": "runs: [\n", "bad.json": `{"runs": "two"}`}
	read := func(name string) ([]byte, error) {
		if doc, ok := files[name]; ok {
			return []byte(doc), nil
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	if s, err := LoadScenario("bench", read); err != nil || s.Name != "bench" {
		t.Errorf("LoadScenario(bench) = %v, %v", s.Name, err)
	}
	if s, err := LoadScenario("x.yaml", read); err != nil || s.Runs != 2 {
		t.Errorf("LoadScenario(x.yaml) = %v, %v", s.Runs, err)
	}
	for name, want := range map[string]string{
		"dir/bad":      "scenario file dir/bad: yaml: line ",
		"bad.json":     `scenario file bad.json: line 1: runs = "two": want an integer`,
		"missing.yml":  "scenario file missing.yml: file does not exist",
		"benhc":        `scenario "benhc": not a built-in scenario (want one of fanout, bench) and not a file`,
		"./benhc.yaml": "scenario file ./benhc.yaml: file does not exist",
	} {
		_, err := LoadScenario(name, read)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("LoadScenario(%q) = %v, want %q", name, err, want)
		}
	}
	if _, err := LoadScenario("missing.yml", read); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file's error does not wrap fs.ErrNotExist: %v", err)
	}
}

func TestScenarioExampleFiles(t *testing.T) {
	paths, err := filepath.Glob("testdata/scenarios/*")
	if err != nil || len(paths) < 2 {
		t.Fatalf("example scenarios: %v, %v", paths, err)
	}
	for _, p := range paths {
		s, err := LoadScenario(p, os.ReadFile)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		switch filepath.Base(p) {
		case "vercel-skew.yaml":
			if s.World != "world-vercel" || s.Store.StaleLag != 500*time.Millisecond ||
				s.Store.VisibilityTimeout != VercelProfile().VisibilityTimeout ||
				len(s.Deployments) != 2 || s.Deployments[1].Producer != "v2" || s.Rollout.To != "dpl-new" {
				t.Errorf("%s: %+v", p, s)
			}
		case "small.json":
			if s.Runs != 3 || !reflect.DeepEqual(s.Workflow.Fanouts, []int{4, 2}) || s.Workflow.Body.P50 != 10*time.Millisecond ||
				s.Workflow.Body.Max != DefaultScenario().Workflow.Body.Max {
				t.Errorf("%s: %+v", p, s)
			}
		}
	}
}

// scenarioFieldNames is every yaml field name a scenario can hold, plus the
// words the parser uses for the document itself and for base.
func scenarioFieldNames() []string {
	names := []string{"scenario", "base"}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		if seen[t] { // program statements nest
			return
		}
		seen[t] = true
		for _, f := range strictyaml.Fields(t) {
			names = append(names, f.Name)
			ft := t.Field(f.Index).Type
			if ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walk(ft)
			}
		}
	}
	walk(reflect.TypeOf(Scenario{}))
	return names
}

var lineN = regexp.MustCompile(`\bline [0-9]+\b`)

func FuzzParseScenario(f *testing.F) {
	for _, doc := range []string{
		"",
		"runs: 3\nworkflow:\n  fanouts: [8, 8]\n",
		`{"world": "world-postgres", "store": {"max_deliveries": 5}, "faults": {"crash": 0.1}}`,
		"world: world-vercel\nstore:\n  stale_lag: 1s\n  runs_get: {p50: 41ms}\n",
		"deployments:\n  - name: a\n    producer: v1\n  - name: b\n    share: 0\nrollout: {at: 1s, to: b}\n",
		"variants: [pre-fix-fence, atomic-fan-in]\n",
		"base: fanout\nruns: 2\n",
		"workflow:\n  fanouts: [16, abc]\n",
		"runs: 1\nruns: 2\n",
		"runs: 1\n---\nruns: 2\n",
		"a: &a [*a]\n",
		"workflow: &w {max_inline: 1}\nfaults: *w\n",
		"name: &x hello\ndescription: *x\n",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
		"runs: 99999999999999999999999999999999\nrun_interval: 1e400\n",
		"faults: {crash: .inf, until: -1s}\n",
		"? {a: b}\n: c\n",
		"workflow:\n  body: {min: 0, p50: 1ms, p90: 1ms, p99: 1ms, max: 0}\n",
		"\xff\xfe",
	} {
		f.Add([]byte(doc))
	}
	paths, _ := filepath.Glob("testdata/scenarios/*")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	names := scenarioFieldNames()
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScenario(data)
		if err == nil {
			if verr := s.Validate(); verr != nil {
				t.Fatalf("accepted a scenario that does not validate: %v", verr)
			}
			if s.Store.Name != s.World {
				t.Fatalf("store.name = %q, world = %q", s.Store.Name, s.World)
			}
			return
		}
		msg := err.Error()
		if strings.Contains(msg, "yaml") || lineN.MatchString(msg) {
			return
		}
		for _, n := range names {
			if strings.Contains(msg, n) {
				return
			}
		}
		t.Fatalf("error names neither a field, a line nor yaml: %q", msg)
	})
}

// --- docs/SCENARIOS.md ---

var updateScenarioDoc = flag.Bool("update-scenario-doc", false, "rewrite the field table in docs/SCENARIOS.md")

const (
	scenarioDocPath  = "../docs/SCENARIOS.md"
	scenarioDocBegin = "<!-- BEGIN FIELDS: generated by go test ./model -run TestScenarioDoc -update-scenario-doc -->"
	scenarioDocEnd   = "<!-- END FIELDS -->"
)

type scenarioDocRow struct {
	path, typ, def string
	goName         string // Type.Field, to find the field's comment
}

// prefix is the part of a row the drift test checks: the meaning column is
// prose and may be edited by hand, the rest is what the code says.
func (r scenarioDocRow) prefix() string {
	return fmt.Sprintf("| `%s` | %s | %s |", r.path, r.typ, r.def)
}

// scenarioDocRows lists every settable field of a scenario by reflection:
// its dotted path, type and default (store: per world).
func scenarioDocRows() []scenarioDocRow {
	def := reflect.ValueOf(DefaultScenario())
	var profiles []reflect.Value
	for _, n := range ProfileNames() {
		profiles = append(profiles, reflect.ValueOf(Profiles()[n]))
	}
	var rows []scenarioDocRow
	var walk func(t reflect.Type, vals []reflect.Value, path string)
	walk = func(t reflect.Type, vals []reflect.Value, path string) {
		for _, f := range strictyaml.Fields(t) {
			sf := t.Field(f.Index)
			p := strictyaml.Join(path, f.Name)
			sub := make([]reflect.Value, len(vals))
			for i, v := range vals {
				sub[i] = v.Field(f.Index)
			}
			if p == "store" {
				sub = profiles // the default store depends on the world
			}
			row := scenarioDocRow{path: p, typ: scenarioDocType(sf.Type), def: scenarioDocDefault(sub), goName: t.Name() + "." + sf.Name}
			switch {
			case sf.Type == strictyaml.DurationType:
				rows = append(rows, row)
			case sf.Type.Kind() == reflect.Struct:
				walk(sf.Type, sub, p)
			case sf.Type == reflect.TypeOf([]program.Node(nil)):
				// Statements nest: the section "Programs" documents them.
				row.typ = "program"
				rows = append(rows, row)
			case sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.Struct:
				rows = append(rows, row)
				walk(sf.Type.Elem(), []reflect.Value{reflect.ValueOf(newDeploymentConfig())}, p+"[i]")
			default:
				rows = append(rows, row)
			}
		}
	}
	walk(def.Type(), []reflect.Value{def}, "")
	return rows
}

func scenarioDocType(t reflect.Type) string {
	if t == strictyaml.DurationType {
		return "duration"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "int"
	case reflect.Float64:
		return "float"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "list of mappings"
		}
		return "list of " + scenarioDocType(t.Elem())
	}
	return t.Kind().String()
}

// scenarioDocDefault formats a default; several values (one per world) are
// joined with " / " unless they agree.
func scenarioDocDefault(vals []reflect.Value) string {
	var out []string
	for _, v := range vals {
		out = append(out, scenarioDocValue(v))
	}
	same := true
	for _, o := range out {
		same = same && o == out[0]
	}
	if same {
		out = out[:1]
	}
	return "`" + strings.Join(out, "` / `") + "`"
}

func scenarioDocValue(v reflect.Value) string {
	if v.Type() == strictyaml.DurationType {
		return scenarioDocDuration(time.Duration(v.Int()))
	}
	switch v.Kind() {
	case reflect.String:
		if v.String() == "" {
			return `""`
		}
		return v.String()
	case reflect.Slice:
		var els []string
		for i := 0; i < v.Len(); i++ {
			els = append(els, scenarioDocValue(v.Index(i)))
		}
		return "[" + strings.Join(els, ", ") + "]"
	case reflect.Struct:
		var kv []string
		for _, f := range strictyaml.Fields(v.Type()) {
			kv = append(kv, f.Name+": "+scenarioDocValue(v.Field(f.Index)))
		}
		return "{" + strings.Join(kv, ", ") + "}"
	}
	return fmt.Sprint(v.Interface())
}

// scenarioDocDuration writes a duration the way a file would: 1h, not 1h0m0s.
func scenarioDocDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	if s == "0s" {
		return "0"
	}
	return s
}

func TestScenarioDocDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0", time.Hour: "1h", 24 * time.Hour: "24h", 5 * time.Minute: "5m", 90 * time.Minute: "1h30m",
		time.Second: "1s", 1500 * time.Millisecond: "1.5s", 500 * time.Microsecond: "500µs", 10 * time.Second: "10s",
	} {
		got := scenarioDocDuration(d)
		if got != want {
			t.Errorf("scenarioDocDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(got); err != nil || back != d {
			t.Errorf("%q does not parse back to %v: %v, %v", got, d, back, err)
		}
	}
}

// TestScenarioDoc keeps docs/SCENARIOS.md from drifting: every field the
// structs have must have its row, with the type and default the code has.
func TestScenarioDoc(t *testing.T) {
	rows := scenarioDocRows()
	if *updateScenarioDoc {
		writeScenarioDocTable(t, rows)
	}
	data, err := os.ReadFile(scenarioDocPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	// The examples are quoted whole, so they must still parse as shown.
	examples, _ := filepath.Glob("testdata/scenarios/*")
	for _, p := range examples {
		ex, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(doc, string(ex)) {
			t.Errorf("docs/SCENARIOS.md does not quote %s as it is", p)
		}
	}
	for _, r := range rows {
		if !strings.Contains(doc, "`"+r.path+"`") {
			t.Errorf("docs/SCENARIOS.md does not mention field %s; run go test ./model -run TestScenarioDoc -update-scenario-doc", r.path)
		} else if !strings.Contains(doc, r.prefix()) {
			t.Errorf("docs/SCENARIOS.md has no row %q (type or default changed?); run go test ./model -run TestScenarioDoc -update-scenario-doc", r.prefix())
		}
	}
}

// writeScenarioDocTable regenerates the table between the markers, taking
// each field's meaning from its comment in the Go source.
func writeScenarioDocTable(t *testing.T, rows []scenarioDocRow) {
	comments := scenarioFieldComments(t, "scenario.go", "profile.go", "../sim/chooser.go")
	var b strings.Builder
	b.WriteString(scenarioDocBegin + "\n\n")
	b.WriteString("| Field | Type | Default | Meaning |\n|---|---|---|---|\n")
	for _, r := range rows {
		meaning := scenarioDocMeanings[r.path]
		if meaning == "" {
			meaning = comments[r.goName]
		}
		if meaning == "" {
			t.Errorf("field %s (%s) has no comment and no meaning in scenarioDocMeanings", r.path, r.goName)
		}
		fmt.Fprintf(&b, "%s %s |\n", r.prefix(), strings.ReplaceAll(meaning, "|", `\|`))
	}
	b.WriteString("\n" + scenarioDocEnd)
	data, err := os.ReadFile(scenarioDocPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i, j := strings.Index(doc, scenarioDocBegin), strings.Index(doc, scenarioDocEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: markers %q and %q not found", scenarioDocPath, scenarioDocBegin, scenarioDocEnd)
	}
	doc = doc[:i] + b.String() + doc[j+len(scenarioDocEnd):]
	if err := os.WriteFile(scenarioDocPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
}

// scenarioDocMeanings gives the meaning of fields whose Go comment is missing
// or does not read well on its own.
var scenarioDocMeanings = map[string]string{
	"name":                        "the scenario's name, shown in reports and naming its schedule files; a file without one is named after the file (mine.yaml: mine), not after its base",
	"description":                 "one line saying what the scenario exercises",
	"world":                       "the World profile: world-local, world-postgres or world-vercel; changing it resets `store` to that profile",
	"store.name":                  "always equal to `world`; it cannot be set",
	"store.runs_get.min":          "runs.get latency: the fastest draw (choice 0)",
	"store.runs_get.p50":          "runs.get latency: median",
	"store.runs_get.p90":          "runs.get latency: 90th percentile",
	"store.runs_get.p99":          "runs.get latency: 99th percentile",
	"store.runs_get.max":          "runs.get latency: the slowest draw",
	"store.events_create.min":     "events.create latency: the fastest draw",
	"store.events_create.p50":     "events.create latency: median",
	"store.events_create.p90":     "events.create latency: 90th percentile",
	"store.events_create.p99":     "events.create latency: 99th percentile",
	"store.events_create.max":     "events.create latency: the slowest draw",
	"store.events_list.min":       "events.list latency: the fastest draw",
	"store.events_list.p50":       "events.list latency: median",
	"store.events_list.p90":       "events.list latency: 90th percentile",
	"store.events_list.p99":       "events.list latency: 99th percentile",
	"store.events_list.max":       "events.list latency: the slowest draw",
	"store.publish.min":           "queue publish latency: the fastest draw",
	"store.publish.p50":           "queue publish latency: median",
	"store.publish.p90":           "queue publish latency: 90th percentile",
	"store.publish.p99":           "queue publish latency: 99th percentile",
	"store.publish.max":           "queue publish latency: the slowest draw",
	"store.deliver.min":           "queue delivery delay: the fastest draw",
	"store.deliver.p50":           "queue delivery delay: median",
	"store.deliver.p90":           "queue delivery delay: 90th percentile",
	"store.deliver.p99":           "queue delivery delay: 99th percentile",
	"store.deliver.max":           "queue delivery delay: the slowest draw",
	"workflow.body.min":           "step body duration: the fastest draw",
	"workflow.body.p50":           "step body duration: median",
	"workflow.body.p90":           "step body duration: 90th percentile",
	"workflow.body.p99":           "step body duration: 99th percentile",
	"workflow.body.max":           "step body duration: the slowest draw",
	"store.max_concurrent_reads":  "how many reads (runs.get, events.list) the store serves at once; the rest wait in arrival order; 0 means unbounded",
	"store.max_concurrent_writes": "how many writes (events.create) the store serves at once; the rest wait in arrival order; 0 means unbounded",
	"deployments":                 "the deployments; a list replaces the default whole",
	"deployments[i].name":         "the deployment's name (required, unique)",
	"deployments[i].producer":     "producer version: v1 or v2 (v2 if absent)",
	"deployments[i].consumer":     "consumer version: v1 or v2 (v2 if absent)",
	"deployments[i].share":        "share of runs that start on it, in [0, 1] (1 if absent)",
	"workflow.flaky_times":        "how many times each flaky step fails before it succeeds",
	"faults.swarm":                "switch each fault site on for the whole run with probability 0.25 before its rate applies (FoundationDB BUGGIFY)",
	"faults.cancel_within":        "cancellations (faults.cancel) happen at a time drawn in [0, cancel_within)",
	"limits.max_events":           "the simulation stops after this many events: 1 to 10000000, a bound on the memory a run's recorded history takes (about 4 GB at the most)",
	"limits.max_time":             "the simulation stops at this virtual time; 0 means no limit",
	"variants":                    "protocol variants to switch on, by name (see `simlab variants`)",
	"rollout.at":                  "runs started at or after this time start on `rollout.to`",
	"rollout.to":                  "the deployment new runs move to (\"\": no rollout)",
	"runs":                        "how many workflow runs are started: 1 to 100000, and at most 1000000 fan-outs in all (runs × the length of workflow.fanouts)",
	"run_interval":                "time between run starts",
}

// scenarioFieldComments maps Type.Field to the field's comment, one line,
// with Go field names turned into yaml names. A field without a comment
// directly under a commented one (no blank line) shares its comment.
func scenarioFieldComments(t *testing.T, files ...string) map[string]string {
	out := map[string]string{}
	fset := token.NewFileSet()
	goToYAML := map[string]string{}
	var structs []*ast.TypeSpec
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if _, ok := ts.Type.(*ast.StructType); ok {
					structs = append(structs, ts)
				}
			}
			return true
		})
	}
	tagName := regexp.MustCompile(`yaml:"([^",]+)`)
	for _, ts := range structs {
		for _, fld := range ts.Type.(*ast.StructType).Fields.List {
			if fld.Tag == nil || len(fld.Names) == 0 {
				continue
			}
			if m := tagName.FindStringSubmatch(fld.Tag.Value); m != nil {
				goToYAML[fld.Names[0].Name] = m[1]
			}
		}
	}
	word := regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*\b`)
	for _, ts := range structs {
		// This struct's own field names, even one-word ones like Crash, are
		// its yaml names in its comments; other structs' only if CamelCase.
		local := map[string]string{}
		tagged := map[string]bool{}
		for _, fld := range ts.Type.(*ast.StructType).Fields.List {
			for _, n := range fld.Names {
				if y, ok := goToYAML[n.Name]; ok && fld.Tag != nil {
					local[n.Name], tagged[n.Name] = y, true
				}
			}
		}
		prevText, prevLine := "", -10
		for _, fld := range ts.Type.(*ast.StructType).Fields.List {
			text := ""
			if fld.Doc != nil {
				text = fld.Doc.Text()
			} else if fld.Comment != nil {
				text = fld.Comment.Text()
			}
			line := fset.Position(fld.Pos()).Line
			if text == "" && line == prevLine+1 {
				text = prevText
			}
			prevText, prevLine = text, fset.Position(fld.End()).Line
			if fld.Doc == nil && fld.Comment != nil {
				prevText = "" // a line comment belongs to its own line only
			}
			text = strings.Join(strings.Fields(text), " ")
			text = word.ReplaceAllStringFunc(text, func(w string) string {
				if y, ok := local[w]; ok {
					return y
				}
				if y, ok := goToYAML[w]; ok && w[1:] != strings.ToLower(w[1:]) {
					return y
				}
				return w
			})
			text = strings.TrimSuffix(text, ".")
			for _, n := range fld.Names {
				y := goToYAML[n.Name]
				text := strings.TrimPrefix(strings.TrimPrefix(text, y+": "), y+" is ")
				out[ts.Name.Name+"."+n.Name] = text
			}
		}
	}
	return out
}

// A scenario file that does not name itself is named after its file, not
// after the built-in it starts from: otherwise its schedules and traces
// would carry the built-in's name and overwrite the built-in's schedules.
func TestAScenarioFileWithoutANameIsNamedAfterItsFile(t *testing.T) {
	dir := t.TempDir()
	for file, want := range map[string]string{
		"mine.yaml":       "mine",
		"t5-longer.yml":   "t5-longer",
		"plain.json":      "plain",
		"named.yaml":      "chosen",
		"sub/nested.yaml": "nested",
	} {
		doc := "base: golden-t5\nruns: 2\n"
		if file == "plain.json" {
			doc = `{"runs": 2}`
		}
		if file == "named.yaml" {
			doc += "name: chosen\n"
		}
		p := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		sc, err := LoadScenario(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Name != want {
			t.Errorf("%s: name %q, want %q", file, sc.Name, want)
		}
	}
}
