package model

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
)

// The built-in scenarios live in another file; these hooks let the parser
// start a file from one (`base: <name>`) and let LoadScenario resolve a name
// without this file depending on how the built-ins are registered. Both are
// assigned in an init() elsewhere; while they are nil, no built-in is known.
var (
	builtinScenario      func(name string) (Scenario, bool)
	builtinScenarioNames func() []string
)

// ParseScenario reads a scenario file: one YAML document (JSON is accepted,
// being YAML) whose keys are the yaml tags of Scenario's fields. Every field
// has a default, so the file only names what it changes:
//
//   - The starting point is DefaultScenario(), or the built-in named by a
//     top-level `base:` key.
//   - If `world:` names a world other than the starting point's, `store` is
//     first reset to that world's profile; `store:` keys in the same file then
//     override single parameters. store.name always ends up equal to world.
//   - Mappings merge: a key present overrides, an absent key keeps its value.
//     Lists replace the starting list whole. An element of `deployments`
//     starts from producer v2, consumer v2, share 1 and an empty name.
//   - Durations are strings like "40ms" or "1.5s"; a bare 0 is accepted.
//
// Unknown keys, duplicate keys, nulls, values of the wrong type and a second
// document are errors that name the line, the dotted field path and the
// value. The result is validated (Validate); on any error the returned
// Scenario is the zero value, so nothing can run from a half-read file.
func ParseScenario(data []byte) (Scenario, error) {
	root, err := parseScenarioYAML(data)
	if err != nil {
		return Scenario{}, err
	}
	s, err := decodeScenarioDocument(root)
	if err != nil {
		return Scenario{}, err
	}
	if err := s.Validate(); err != nil {
		return Scenario{}, fmt.Errorf("scenario: %w", err)
	}
	return s, nil
}

// Set applies one `--set key=value` assignment, e.g. workflow.max_inline=1,
// store.runs_get.p50=40ms, deployments[1].share=0.5. The key is a dotted path
// of yaml field names with optional [i] indexes; an index one past the end of
// a list appends an element (for deployments, one with the file defaults).
// A list value is comma-separated (workflow.fanouts=16,16,64; an empty value
// is the empty list) and replaces the list whole. world=<name> resets store
// to that world's profile, as in a file. Values go through the same decoder
// as files, so they are checked the same way.
//
// Set does not call Validate: a value may only make sense once a later --set
// has been applied, so the caller validates once after the last one. On
// error the scenario is left unchanged.
func (s *Scenario) Set(assignment string) error {
	key, value, ok := strings.Cut(assignment, "=")
	if !ok {
		return fmt.Errorf("--set %s: want key=value, like workflow.max_inline=1", assignment)
	}
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	fail := func(msg string) error { return fmt.Errorf("--set %s=%s: %s", key, value, msg) }

	// Work on a copy whose slices are not shared, so that a failed
	// assignment (or an append) never leaves s half changed.
	c := cloneScenario(*s)
	switch key {
	case "world":
		p, ok := Profiles()[value]
		if !ok {
			return fail("unknown world; want one of " + strings.Join(ProfileNames(), ", "))
		}
		if value != c.World {
			c.Store = p
		}
		c.World = value
		c.Store.Name = value
		*s = c
		return nil
	case "base":
		return fail("base can only be given in a scenario file (start from it with --scenario)")
	}

	target, path, err := scenarioLookup(reflect.ValueOf(&c).Elem(), key)
	if err != nil {
		return fail(err.Error())
	}
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: value}
	switch t := target.Type(); {
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		return fail(fmt.Sprintf("%s is a list of mappings; set one field at a time, like %s[0].%s=...",
			path, path, scenarioFields(t.Elem())[0].name))
	case t.Kind() == reflect.Slice:
		n = &yaml.Node{Kind: yaml.SequenceNode}
		if value != "" {
			for _, v := range strings.Split(value, ",") {
				n.Content = append(n.Content, setScalar(strings.TrimSpace(v), t.Elem()))
			}
		}
	case t.Kind() == reflect.Struct && t != durationType:
		var names []string
		for _, f := range scenarioFields(t) {
			names = append(names, path+"."+f.name)
		}
		return fail(fmt.Sprintf("%s is a group of fields; set one of %s", path, strings.Join(names, ", ")))
	default:
		n = setScalar(value, t)
	}
	d := &scenarioDecoder{world: c.World, set: true}
	if err := d.decode(n, target, path); err != nil {
		var fe *scenarioFieldError
		if errors.As(err, &fe) && fe.path == path {
			return fail(fe.msg)
		}
		return fail(err.Error())
	}
	c.Store.Name = c.World
	*s = c
	return nil
}

// setScalar makes the node a --set value stands for. A string field takes
// the text as it is (the tag says so, or "null" and "123" would resolve to
// other types); any other field lets YAML resolve it, as in a file.
func setScalar(value string, t reflect.Type) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: value}
	if t.Kind() == reflect.String {
		n.Tag = "!!str"
	}
	return n
}

// LoadScenario resolves the --scenario argument: a built-in scenario's name,
// or else a path (it contains a path separator or ends in .yaml, .yml or
// .json) that is read with readFile (os.ReadFile if nil) and parsed.
func LoadScenario(nameOrPath string, readFile func(string) ([]byte, error)) (Scenario, error) {
	if builtinScenario != nil {
		if s, ok := builtinScenario(nameOrPath); ok {
			return s, nil
		}
	}
	if !looksLikeScenarioPath(nameOrPath) {
		return Scenario{}, fmt.Errorf("scenario %q: not a built-in scenario (want one of %s) and not a file",
			nameOrPath, builtinNameList())
	}
	if readFile == nil {
		readFile = os.ReadFile
	}
	data, err := readFile(nameOrPath)
	if err != nil {
		// The path is already in the prefix; keep only the cause, still
		// wrapped so errors.Is(err, fs.ErrNotExist) works.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return Scenario{}, fmt.Errorf("scenario file %s: %w", nameOrPath, err)
	}
	s, err := ParseScenario(data)
	if err != nil {
		return Scenario{}, fmt.Errorf("scenario file %s: %w", nameOrPath, err)
	}
	return s, nil
}

func looksLikeScenarioPath(s string) bool {
	if strings.ContainsRune(s, '/') || strings.ContainsRune(s, os.PathSeparator) {
		return true
	}
	for _, ext := range []string{".yaml", ".yml", ".json"} {
		if strings.HasSuffix(s, ext) {
			return true
		}
	}
	return false
}

func builtinNameList() string {
	if builtinScenarioNames == nil {
		return "none registered"
	}
	return strings.Join(builtinScenarioNames(), ", ")
}

// parseScenarioYAML returns the document's top-level node, or nil for an
// empty document.
func parseScenarioYAML(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := decodeYAMLDocument(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	// A second document would otherwise be silently ignored, and whoever
	// wrote it presumably meant it to count.
	var extra yaml.Node
	switch err := decodeYAMLDocument(dec, &extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, err
	default:
		return nil, fmt.Errorf("line %d: a second YAML document: a scenario file holds exactly one", extra.Line)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil // a document holding only comments or "---"
	}
	return root, nil
}

// decodeYAMLDocument turns a panic inside the YAML library into an error: a
// scenario file comes from the command line, and no file may crash the CLI.
// Only the library call is covered, so that panics in this file's own code
// still surface (and get fixed) under the fuzzer.
func decodeYAMLDocument(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot parse the document: %v", r)
		}
	}()
	return dec.Decode(n)
}

// decodeScenarioDocument builds the scenario a document's top-level mapping
// (nil: empty document) describes. base and world are applied before the
// other keys, wherever they appear, because they decide what those keys
// override.
func decodeScenarioDocument(root *yaml.Node) (Scenario, error) {
	s := DefaultScenario()
	if root == nil {
		return s, nil
	}
	root, err := scenarioDeref(root, "")
	if err != nil {
		return Scenario{}, err
	}
	if root.Kind != yaml.MappingNode {
		return Scenario{}, scenarioWrongKind(root, "", reflect.TypeOf(Scenario{}))
	}
	d := &scenarioDecoder{}
	if err := d.checkKeys(root, ""); err != nil {
		return Scenario{}, err
	}
	var baseNode, worldNode *yaml.Node
	rest := &yaml.Node{Kind: yaml.MappingNode, Line: root.Line, Column: root.Column}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch scenarioKeyName(k) {
		case "base":
			baseNode = v
		case "world":
			worldNode = v
		default:
			rest.Content = append(rest.Content, k, v)
		}
	}
	if baseNode != nil {
		var name string
		if err := d.decode(baseNode, reflect.ValueOf(&name).Elem(), "base"); err != nil {
			return Scenario{}, err
		}
		b, ok := Scenario{}, false
		if builtinScenario != nil {
			b, ok = builtinScenario(name)
		}
		if !ok {
			return Scenario{}, &scenarioFieldError{line: baseNode.Line, path: "base", value: scenarioQuote(name),
				msg: "unknown scenario; want one of " + builtinNameList()}
		}
		s = cloneScenario(b)
	}
	if worldNode != nil {
		var world string
		if err := d.decode(worldNode, reflect.ValueOf(&world).Elem(), "world"); err != nil {
			return Scenario{}, err
		}
		p, ok := Profiles()[world]
		if !ok {
			return Scenario{}, &scenarioFieldError{line: worldNode.Line, path: "world", value: scenarioQuote(world),
				msg: "unknown world; want one of " + strings.Join(ProfileNames(), ", ")}
		}
		if world != s.World {
			s.Store = p
		}
		s.World = world
	}
	d.world = s.World
	if err := d.decodeStruct(rest, reflect.ValueOf(&s).Elem(), ""); err != nil {
		return Scenario{}, err
	}
	s.Store.Name = s.World
	return s, nil
}

// cloneScenario copies s so that no slice is shared with the original: a
// built-in's lists must not change when a --set index writes into a copy.
func cloneScenario(s Scenario) Scenario {
	s.Workflow.Fanouts = slices.Clone(s.Workflow.Fanouts)
	s.Deployments = slices.Clone(s.Deployments)
	s.Variants = slices.Clone(s.Variants)
	return s
}

// newDeploymentConfig is the starting point of a deployments element: the
// versions and share that make a one-line `- name: x` a working deployment.
func newDeploymentConfig() DeploymentConfig {
	return DeploymentConfig{Producer: "v2", Consumer: "v2", Share: 1}
}

// scenarioFieldError is one bad key or value. It keeps the parts apart so
// that a file error can lead with its line and a --set error with the
// assignment.
type scenarioFieldError struct {
	line  int    // 1-based; 0 when there is no file (a --set value)
	path  string // dotted field path; "" is the whole document
	value string // the value as written, quoted; "" when not a scalar
	msg   string // what was expected
}

func (e *scenarioFieldError) Error() string {
	var b strings.Builder
	if e.line > 0 {
		fmt.Fprintf(&b, "line %d: ", e.line)
	}
	if e.path == "" {
		b.WriteString("scenario")
	} else {
		b.WriteString(e.path)
	}
	if e.value != "" {
		b.WriteString(" = ")
		b.WriteString(e.value)
	}
	b.WriteString(": ")
	b.WriteString(e.msg)
	return b.String()
}

// scenarioQuote quotes a value for an error message, cut short so that a
// huge scalar does not drown the message.
func scenarioQuote(v string) string {
	const max = 60
	if r := []rune(v); len(r) > max {
		v = string(r[:max]) + "..."
	}
	return strconv.Quote(v)
}

var durationType = reflect.TypeOf(time.Duration(0))

// scenarioDecoder walks a YAML node against a Go value by reflection. It
// does this itself rather than through yaml.Unmarshal so that every error
// can name the dotted path, and so that it is strict where yaml.v3 is
// lenient (it truncates 1.5 into an int, accepts nulls and, outside maps,
// duplicate keys) and lenient where yaml.v3 is strict (durations).
type scenarioDecoder struct {
	world string // the scenario's world, which store.name must equal
	set   bool   // decoding a --set value, not a file
}

// scenarioDeref follows aliases to the anchored node. The loop is bounded
// although the parser only makes aliases point at non-alias nodes: a
// malformed node graph must end in an error, not a hang.
func scenarioDeref(n *yaml.Node, path string) (*yaml.Node, error) {
	for i := 0; n.Kind == yaml.AliasNode; i++ {
		if n.Alias == nil || i > 100 {
			return nil, &scenarioFieldError{line: n.Line, path: path, value: scenarioQuote("*" + n.Value),
				msg: "alias does not lead to a value"}
		}
		n = n.Alias
	}
	return n, nil
}

// decode stores node n into v, whose dotted path is path. The recursion
// follows v's type, not the node graph, so its depth is bounded by the
// struct nesting whatever the document holds (aliases included).
func (d *scenarioDecoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	n, err := scenarioDeref(n, path)
	if err != nil {
		return err
	}
	t := v.Type()
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		if d.set {
			return &scenarioFieldError{path: path, msg: scenarioWant(t)}
		}
		return &scenarioFieldError{line: n.Line, path: path, value: "null",
			msg: scenarioWant(t) + " (to keep the default, leave the key out)"}
	}
	switch {
	case t == durationType:
		return d.decodeDuration(n, v, path)
	case t.Kind() == reflect.Slice:
		return d.decodeSlice(n, v, path)
	case t.Kind() == reflect.Struct:
		return d.decodeStruct(n, v, path)
	}
	if n.Kind != yaml.ScalarNode {
		return scenarioWrongKind(n, path, t)
	}
	bad := &scenarioFieldError{line: n.Line, path: path, value: scenarioQuote(n.Value), msg: scenarioWant(t)}
	if t.Kind() == reflect.String {
		// Any scalar is text: `name: 2024` names the scenario "2024".
		if path == "store.name" && n.Value != d.world {
			bad.msg = fmt.Sprintf("store.name is always the world's name (%s); set world instead", d.world)
			return bad
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
			bad.msg = fmt.Sprintf("want an integer at most %d", int64(math.MaxInt64))
			return bad
		default:
			return bad
		}
		if v.OverflowInt(i) {
			bad.msg = "want a smaller integer"
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
			bad.msg = "want a finite number"
			return bad
		}
		v.SetFloat(f)
	default:
		// A field type this decoder does not know: a programming error,
		// reported rather than panicking.
		bad.msg = fmt.Sprintf("field type %v cannot be read from a scenario file", t)
		return bad
	}
	return nil
}

// decodeDuration accepts Go duration strings and a bare 0. Any other bare
// number is rejected: a unit is never implied.
func (d *scenarioDecoder) decodeDuration(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.ScalarNode {
		return scenarioWrongKind(n, path, durationType)
	}
	bad := &scenarioFieldError{line: n.Line, path: path, value: scenarioQuote(n.Value), msg: scenarioWant(durationType)}
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
		bad.msg += " (a bare number has no unit)"
	case "!!float":
		bad.msg += " (a bare number has no unit)"
	}
	return bad
}

func (d *scenarioDecoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) error {
	t := v.Type()
	if n.Kind != yaml.SequenceNode {
		return scenarioWrongKind(n, path, t)
	}
	out := reflect.MakeSlice(t, len(n.Content), len(n.Content))
	for i, el := range n.Content {
		ev := out.Index(i)
		if t.Elem() == reflect.TypeOf(DeploymentConfig{}) {
			ev.Set(reflect.ValueOf(newDeploymentConfig()))
		}
		if err := d.decode(el, ev, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	v.Set(out)
	return nil
}

// decodeStruct merges a mapping into v: present keys override, absent keys
// keep v's value.
func (d *scenarioDecoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) error {
	t := v.Type()
	if n.Kind != yaml.MappingNode {
		return scenarioWrongKind(n, path, t)
	}
	if err := d.checkKeys(n, path); err != nil {
		return err
	}
	fields := scenarioFields(t)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		name := scenarioKeyName(k)
		fi := -1
		for j, f := range fields {
			if f.name == name {
				fi = j
				break
			}
		}
		if fi < 0 {
			var names []string
			for _, f := range fields {
				names = append(names, f.name)
			}
			if t == reflect.TypeOf(Scenario{}) {
				names = append(names, "base") // handled before this walk
			}
			return &scenarioFieldError{line: k.Line, path: scenarioJoin(path, name), msg: scenarioUnknown(name, names)}
		}
		if err := d.decode(n.Content[i+1], v.Field(fields[fi].index), scenarioJoin(path, name)); err != nil {
			return err
		}
	}
	return nil
}

// checkKeys rejects keys that are not plain names, merge keys and duplicate
// keys (yaml.v3 only rejects duplicates when decoding into a map).
func (d *scenarioDecoder) checkKeys(n *yaml.Node, path string) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, err := scenarioDeref(n.Content[i], path)
		if err != nil {
			return err
		}
		if k.Kind != yaml.ScalarNode {
			return &scenarioFieldError{line: k.Line, path: path, msg: "a key must be a field name, not " + scenarioKindName(k)}
		}
		if k.ShortTag() == "!!merge" {
			return &scenarioFieldError{line: k.Line, path: scenarioJoin(path, "<<"),
				msg: "merge keys are not supported; alias a whole value instead"}
		}
		if first, dup := seen[k.Value]; dup {
			return &scenarioFieldError{line: k.Line, path: scenarioJoin(path, k.Value),
				msg: fmt.Sprintf("duplicate key (first at line %d)", first)}
		}
		seen[k.Value] = k.Line
	}
	return nil
}

// scenarioKeyName is a mapping key's text; checkKeys has made sure it is a
// scalar, possibly behind an alias.
func scenarioKeyName(k *yaml.Node) string {
	if k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	return k.Value
}

func scenarioJoin(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func scenarioWrongKind(n *yaml.Node, path string, t reflect.Type) error {
	return &scenarioFieldError{line: n.Line, path: path, msg: scenarioWant(t) + ", not " + scenarioKindName(n)}
}

func scenarioKindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "the value " + scenarioQuote(n.Value)
	}
	return "a YAML node of another kind"
}

// scenarioWant says what a field of type t accepts.
func scenarioWant(t reflect.Type) string {
	if t == durationType {
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
		var names []string
		for _, f := range scenarioFields(t) {
			names = append(names, f.name)
		}
		return "want a mapping of " + strings.Join(names, ", ")
	}
	return "want " + t.String()
}

// scenarioUnknown explains an unknown field name, suggesting the nearest
// known ones when they are likely typos (p95: "did you mean p90 or p99?").
func scenarioUnknown(name string, known []string) string {
	var best []string
	bestD := 2 // suggest only within two edits
	for _, k := range known {
		switch dist := scenarioEditDistance(name, k); {
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

// scenarioEditDistance is the Levenshtein distance between a and b. Field
// names are short; a name longer than any field cannot be a typo of one, so
// long input is cut off rather than costing quadratic time.
func scenarioEditDistance(a, b string) int {
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

type scenarioField struct {
	name  string // the yaml tag
	index int
}

// scenarioFields lists a struct's fields under their yaml names, which are
// the file format's and --set's field names.
func scenarioFields(t reflect.Type) []scenarioField {
	var out []scenarioField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		out = append(out, scenarioField{name, i})
	}
	return out
}

// scenarioLookup finds the field a --set key names inside root, which must
// be addressable. An index one past the end of a list appends an element.
// It returns the field and its canonical path.
func scenarioLookup(root reflect.Value, key string) (reflect.Value, string, error) {
	v, path := root, ""
	for _, seg := range strings.Split(key, ".") {
		name, index, hasIndex := strings.Cut(seg, "[")
		if name == "" {
			return reflect.Value{}, "", fmt.Errorf("want a dotted field path like workflow.max_inline")
		}
		if v.Kind() != reflect.Struct || v.Type() == durationType {
			return reflect.Value{}, "", fmt.Errorf("%s has no field %s", path, name)
		}
		fields := scenarioFields(v.Type())
		fi := -1
		var names []string
		for j, f := range fields {
			names = append(names, f.name)
			if f.name == name {
				fi = j
			}
		}
		full := scenarioJoin(path, name)
		if fi < 0 {
			msg := scenarioUnknown(name, names)
			return reflect.Value{}, "", fmt.Errorf("unknown field %s%s", full, strings.TrimPrefix(msg, "unknown field"))
		}
		v, path = v.Field(fields[fi].index), full
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
			if v.Type().Elem() == reflect.TypeOf(DeploymentConfig{}) {
				el.Set(reflect.ValueOf(newDeploymentConfig()))
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
