package model

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/simlab/simlab/internal/bounded"
	"github.com/simlab/simlab/model/internal/strictyaml"
	"github.com/simlab/simlab/model/program"
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
	s, _, err := parseScenario(data)
	return s, err
}

// parseScenario is ParseScenario, also saying whether the document names
// the scenario (a top-level name:).
func parseScenario(data []byte) (Scenario, bool, error) {
	root, err := strictyaml.Parse(data, "scenario")
	if err != nil {
		return Scenario{}, false, err
	}
	if root == nil {
		// Most likely a file not yet written, or the wrong one: running
		// the defaults in its name would hide that. {} asks for them.
		return Scenario{}, false, errors.New("the file holds no scenario (it is empty or only comments): write at least one key, or {} for the defaults")
	}
	s, named, err := decodeScenarioDocument(root)
	if err != nil {
		return Scenario{}, false, err
	}
	if err := s.Validate(); err != nil {
		return Scenario{}, false, fmt.Errorf("scenario: %w", err)
	}
	return s, named, nil
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

	target, path, err := strictyaml.Lookup(reflect.ValueOf(&c).Elem(), key, newScenarioElem)
	if err != nil {
		return fail(err.Error())
	}
	n, msg := strictyaml.SetNode(path, value, target.Type())
	if msg != "" {
		return fail(msg)
	}
	d := newScenarioDecoder(c.World)
	d.Set = true
	if err := d.Decode(n, target, path); err != nil {
		var fe *strictyaml.FieldError
		if errors.As(err, &fe) && fe.Path == path {
			return fail(fe.Msg)
		}
		return fail(err.Error())
	}
	c.Store.Name = c.World
	*s = c
	return nil
}

// LoadScenario resolves the --scenario argument: a built-in scenario's name,
// or else a path (it contains a path separator or ends in .yaml, .yml or
// .json) that is read with readFile (ReadScenarioFile if nil) and parsed.
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
		readFile = ReadScenarioFile
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
	s, named, err := parseScenario(data)
	if err != nil {
		return Scenario{}, fmt.Errorf("scenario file %s: %w", nameOrPath, err)
	}
	if !named {
		// Not the name of the built-in it starts from (or of fanout): its
		// schedules and traces would pass for the built-in's, and its
		// schedule files overwrite the built-in's.
		s.Name = strings.TrimSuffix(filepath.Base(nameOrPath), filepath.Ext(nameOrPath))
	}
	return s, nil
}

// MaxScenarioBytes bounds a scenario file: a scenario is a small file, and
// one of megabytes (or /dev/zero) is a mistake, not a scenario.
const MaxScenarioBytes = 1 << 20

// ReadScenarioFile reads a scenario file, at most MaxScenarioBytes of it.
func ReadScenarioFile(path string) ([]byte, error) {
	return bounded.ReadFile(path, MaxScenarioBytes, "a scenario file")
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

// decodeScenarioDocument builds the scenario a document's top-level mapping
// (nil: empty document) describes. base and world are applied before the
// other keys, wherever they appear, because they decide what those keys
// override.
func decodeScenarioDocument(root *yaml.Node) (s Scenario, named bool, err error) {
	s = DefaultScenario()
	if root == nil {
		return s, false, nil
	}
	root, err = strictyaml.Deref(root, "")
	if err != nil {
		return Scenario{}, false, err
	}
	d := newScenarioDecoder(s.World)
	if root.Kind != yaml.MappingNode {
		return Scenario{}, false, d.WrongKind(root, "", reflect.TypeOf(Scenario{}))
	}
	if err := d.CheckKeys(root, ""); err != nil {
		return Scenario{}, false, err
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if strictyaml.KeyName(root.Content[i]) == "name" {
			named = true
		}
	}
	var baseNode, worldNode *yaml.Node
	rest := &yaml.Node{Kind: yaml.MappingNode, Line: root.Line, Column: root.Column}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch strictyaml.KeyName(k) {
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
		if err := d.Decode(baseNode, reflect.ValueOf(&name).Elem(), "base"); err != nil {
			return Scenario{}, false, err
		}
		b, ok := Scenario{}, false
		if builtinScenario != nil {
			b, ok = builtinScenario(name)
		}
		if !ok {
			return Scenario{}, false, &strictyaml.FieldError{Line: baseNode.Line, Path: "base", Value: strictyaml.Quote(name),
				Msg: "unknown scenario; want one of " + builtinNameList()}
		}
		s = cloneScenario(b)
	}
	if worldNode != nil {
		var world string
		if err := d.Decode(worldNode, reflect.ValueOf(&world).Elem(), "world"); err != nil {
			return Scenario{}, false, err
		}
		p, ok := Profiles()[world]
		if !ok {
			return Scenario{}, false, &strictyaml.FieldError{Line: worldNode.Line, Path: "world", Value: strictyaml.Quote(world),
				Msg: "unknown world; want one of " + strings.Join(ProfileNames(), ", ")}
		}
		if world != s.World {
			s.Store = p
		}
		s.World = world
	}
	d = newScenarioDecoder(s.World)
	if err := d.DecodeStruct(rest, reflect.ValueOf(&s).Elem(), ""); err != nil {
		return Scenario{}, false, err
	}
	s.Store.Name = s.World
	if err := programFromDocument(&s, rest); err != nil {
		return Scenario{}, false, err
	}
	return s, named, nil
}

// programFromDocument finishes a workflow.program the document set: its
// statements learn their lines, the fan-out list it replaces (the base's)
// goes, and a program of fan-outs becomes that list, which is what the
// engine runs. A document setting both is refused: which would win?
func programFromDocument(s *Scenario, doc *yaml.Node) error {
	var wf *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if strictyaml.KeyName(doc.Content[i]) == "workflow" {
			wf, _ = strictyaml.Deref(doc.Content[i+1], "workflow")
		}
	}
	if wf == nil || wf.Kind != yaml.MappingNode {
		return nil
	}
	var prog, search, fanouts *yaml.Node
	for i := 0; i+1 < len(wf.Content); i += 2 {
		switch strictyaml.KeyName(wf.Content[i]) {
		case "program":
			prog = wf.Content[i+1]
		case "search":
			search = wf.Content[i]
		case "fanouts":
			fanouts = wf.Content[i]
		}
	}
	if prog == nil && search != nil {
		// A search draws each seed's program: the default's fan-out list
		// is not the scenario's.
		if fanouts != nil {
			return &strictyaml.FieldError{Line: fanouts.Line, Path: "workflow.fanouts", Doc: "scenario",
				Msg: "workflow.search draws each seed's program: set no workflow.fanouts beside it"}
		}
		s.Workflow.Fanouts = nil
		if s.Description == DefaultScenario().Description {
			s.Description = ""
		}
		return nil
	}
	if prog == nil {
		return nil
	}
	if fanouts != nil {
		return &strictyaml.FieldError{Line: fanouts.Line, Path: "workflow.fanouts", Doc: "scenario",
			Msg: "set workflow.program or workflow.fanouts, not both (a fan-out list is the program `- all: [{step: step}, ...]`)"}
	}
	program.SetLines(s.Workflow.Program, prog)
	if err := program.Validate(s.Workflow.Program, "workflow.program"); err != nil {
		return err
	}
	s.Workflow.Fanouts, _ = program.FanoutWidths(s.Workflow.Program)
	if s.IsProgram() && s.Description == DefaultScenario().Description {
		// The default's words are about its 16-branch fan-out.
		s.Description = ""
	}
	return nil
}

// cloneScenario copies s so that no slice is shared with the original: a
// built-in's lists must not change when a --set index writes into a copy.
func cloneScenario(s Scenario) Scenario {
	s.Workflow.Fanouts = slices.Clone(s.Workflow.Fanouts)
	s.Workflow.Program = slices.Clone(s.Workflow.Program)
	s.Deployments = slices.Clone(s.Deployments)
	s.Variants = slices.Clone(s.Variants)
	return s
}

// newDeploymentConfig is the starting point of a deployments element: the
// versions and share that make a one-line `- name: x` a working deployment.
func newDeploymentConfig() DeploymentConfig {
	return DeploymentConfig{Producer: "v2", Consumer: "v2", Share: 1}
}

// newScenarioElem starts a new list element: a deployments element starts
// from newDeploymentConfig, in a file and in a --set that appends.
func newScenarioElem(t reflect.Type) (reflect.Value, bool) {
	if t == reflect.TypeOf(DeploymentConfig{}) {
		return reflect.ValueOf(newDeploymentConfig()), true
	}
	return reflect.Value{}, false
}

// newScenarioDecoder is the strict decoder with the rules a scenario adds:
// deployments elements have defaults, store.name can only be the world's
// name (world decides it), and `base` is a top-level key handled before the
// walk, so did-you-mean knows it.
func newScenarioDecoder(world string) *strictyaml.Decoder {
	return &strictyaml.Decoder{
		Doc:     "scenario",
		NewElem: newScenarioElem,
		CheckString: func(path, value string) string {
			if path == "store.name" && value != world {
				return fmt.Sprintf("store.name is always the world's name (%s); set world instead", world)
			}
			return ""
		},
		ExtraKeys: func(t reflect.Type) []string {
			if t == reflect.TypeOf(Scenario{}) {
				return []string{"base"}
			}
			return nil
		},
	}
}
