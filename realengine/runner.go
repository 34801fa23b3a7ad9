package realengine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/simlab/simlab/internal/npminstall"
	"github.com/simlab/simlab/internal/procgroup"
)

// Runner runs the Node harness in Dir (realengine).
type Runner struct {
	Dir string
	// Log receives npm's output while it installs; nil discards it.
	Log io.Writer
	// Catalog is what Dir's package.json installs (Prepare reads it when
	// nil).
	Catalog *Catalog
	// build is the temp dir holding the compiled bundles, one directory
	// per core (bundles), each compiled by that core's own builders.
	build   string
	mu      sync.Mutex
	bundles map[string]*bundle
}

// bundle is one core's compiled workflow, built once (ready closes when
// the build is done; err is its outcome).
type bundle struct {
	dir   string
	ready chan struct{}
	err   error
}

// FindDir locates realengine from the working directory upwards
// (the repository root holds go.mod), so the command works from anywhere in
// a checkout.
func FindDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "realengine", "harness.mjs")); err == nil {
			return filepath.Join(d, "realengine"), nil
		}
		if _, err := os.Stat(filepath.Join(d, "harness.mjs")); err == nil && filepath.Base(d) == "realengine" {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("realengine/harness.mjs not found from %s upwards: run simlab validate inside a simlab checkout, or pass --engine-dir", wd)
		}
	}
}

// Prepare checks Node, installs the pinned packages if they are missing
// (from the committed lock file) when install is set, and compiles the
// workflow for each of cores, each with the @workflow/builders of its own
// version (Bundle; a core not compiled here is compiled on its first Run).
// Close then removes what was built.
//
// It runs `npm install --no-save`, not `npm ci`: the lock pins every version,
// but npm ci refuses it because cbor-extract's optional platform packages
// (@cbor-extract/*) are not on the registry this project reaches, so the lock
// has no entry for them; npm install skips them as optional and writes
// nothing back.
func (r *Runner) Prepare(ctx context.Context, install bool, cores ...Core) error {
	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("node not found on PATH: simlab validate runs the real @workflow/core in Node.js (v20 or later); install Node.js and npm")
	}
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", node, err)
	}
	var major int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "v%d", &major); err != nil || major < 20 {
		return fmt.Errorf("node %s: the real engine needs Node.js v20 or later", strings.TrimSpace(string(out)))
	}
	if r.Catalog == nil {
		if r.Catalog, err = ReadCatalog(r.Dir); err != nil {
			return fmt.Errorf("reading %s: %w", filepath.Join(r.Dir, "package.json"), err)
		}
	}
	if !r.installed() {
		if !install {
			return fmt.Errorf("the real engine's packages are not installed in %s: run `npm install --no-save --prefix %s` (or drop --no-install)", r.Dir, r.Dir)
		}
		if _, err := exec.LookPath("npm"); err != nil {
			return fmt.Errorf("npm not found on PATH: needed once to install %s/package-lock.json", r.Dir)
		}
		if r.Log != nil {
			fmt.Fprintf(r.Log, "installing the real engine's packages: npm install --no-save in %s\n", r.Dir)
		}
		if out, err := npminstall.Run(ctx, r.Dir, nil, "--no-save", "--no-audit", "--no-fund", "--loglevel=error"); err != nil {
			return fmt.Errorf("npm install in %s: %w\n%s", r.Dir, err, tail(string(out), 2000))
		}
		if !r.installed() {
			return fmt.Errorf("npm install in %s finished but a pinned package is still missing", r.Dir)
		}
	}
	r.mu.Lock()
	if r.build == "" {
		build, err := os.MkdirTemp("", "simlab-engine-build-")
		if err != nil {
			r.mu.Unlock()
			return err
		}
		r.build = build
		r.bundles = map[string]*bundle{}
	}
	r.mu.Unlock()
	// Two compilations at a time: each is one Node process, mostly CPU.
	errs := make(chan error, len(cores))
	sem := make(chan struct{}, 2)
	for _, c := range cores {
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			_, err := r.Bundle(ctx, c)
			errs <- err
		}()
	}
	var first error
	for range cores {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Bundle returns the directory of core's compiled workflow, compiling it
// the first time: fanout.ts, bundled by core's own @workflow/builders (the
// default one where none of its version is installed) over a node_modules
// that resolves @workflow/core, and the packages core itself depends on, to
// core's own install (overlayModules). So the runtime code the bundles
// inline and import is the release under test, not the default core's.
func (r *Runner) Bundle(ctx context.Context, c Core) (string, error) {
	return r.bundleOnce(ctx, c, c.Version, func(dir string) error { return r.compile(ctx, c, dir) })
}

// bundleOnce returns the directory of the bundle named key, made by build
// the first time (another caller asking meanwhile waits for it).
func (r *Runner) bundleOnce(ctx context.Context, c Core, key string, build func(dir string) error) (string, error) {
	r.mu.Lock()
	if r.build == "" {
		r.mu.Unlock()
		return "", errors.New("engine: Run before Prepare")
	}
	b, ok := r.bundles[key]
	if !ok {
		b = &bundle{dir: filepath.Join(r.build, "core-"+key), ready: make(chan struct{})}
		r.bundles[key] = b
		r.mu.Unlock()
		b.err = build(b.dir)
		close(b.ready)
	} else {
		r.mu.Unlock()
	}
	select {
	case <-b.ready:
		return b.dir, b.err
	default:
	}
	select {
	case <-b.ready:
		return b.dir, b.err
	case <-ctx.Done():
		return "", fmt.Errorf("stopped while another caller compiled core %s: %w", c.Version, context.Cause(ctx))
	}
}

func (r *Runner) compile(ctx context.Context, c Core, dir string) error {
	top, err := filepath.Abs(filepath.Join(r.Dir, "node_modules"))
	if err != nil {
		return err
	}
	if err := overlayModules(filepath.Join(dir, "node_modules"), top, c.Package()); err != nil {
		return fmt.Errorf("core %s: laying out its node_modules: %w", c.Version, err)
	}
	var stderr bytes.Buffer
	if err := r.node(ctx, "", nil, &stderr, "build", dir, c.BuildersPackage()); err != nil {
		return fmt.Errorf("compiling workflow/fanout.ts for core %s with %s: %w\n%s", c.Version, c.BuildersPackage(), err, tail(stderr.String(), 2000))
	}
	return nil
}

// overlayModules makes dst a node_modules of symlinks: every package of top,
// then @workflow/core pointing at top/corePkg, then the packages corePkg
// installs nested under its own node_modules (the versions that core itself
// depends on, where they differ from the top level's) over their top-level
// namesakes. Scopes (@workflow/…) are real directories of symlinks, so one
// package of a scope can be replaced alone.
func overlayModules(dst, top, corePkg string) error {
	link := func(target, name string) error {
		at := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
			return err
		}
		if err := os.Remove(at); err != nil && !os.IsNotExist(err) {
			return err
		}
		return os.Symlink(target, at)
	}
	layer := func(from string) error {
		ents, err := os.ReadDir(from)
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			if !strings.HasPrefix(name, "@") {
				if err := link(filepath.Join(from, name), name); err != nil {
					return err
				}
				continue
			}
			kids, err := os.ReadDir(filepath.Join(from, name))
			if err != nil {
				return err
			}
			for _, k := range kids {
				if err := link(filepath.Join(from, name, k.Name()), filepath.Join(name, k.Name())); err != nil {
					return err
				}
			}
		}
		return nil
	}
	coreDir := filepath.Join(top, corePkg)
	if _, err := os.Stat(filepath.Join(coreDir, "package.json")); err != nil {
		return fmt.Errorf("%s is not installed: %w", corePkg, err)
	}
	if err := layer(top); err != nil {
		return err
	}
	if err := link(coreDir, filepath.Join("@workflow", "core")); err != nil {
		return err
	}
	nested := filepath.Join(coreDir, "node_modules")
	if _, err := os.Stat(nested); err == nil {
		return layer(nested)
	}
	return nil
}

// installed says whether every package package.json names is present.
func (r *Runner) installed() bool {
	if npminstall.Unfinished(r.Dir) {
		return false // an install cut short: its files cannot be trusted
	}
	for _, p := range r.Catalog.Packages {
		if _, err := os.Stat(filepath.Join(r.Dir, "node_modules", p, "package.json")); err != nil {
			return false
		}
	}
	return true
}

// Close removes the compiled bundles.
func (r *Runner) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.build == "" {
		return nil
	}
	err := os.RemoveAll(r.build)
	r.build, r.bundles = "", nil
	return err
}

// node runs the harness in its own process group, killed as a group when
// ctx ends, so no Node process outlives the call.
func (r *Runner) node(ctx context.Context, alias string, stdout, stderr io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "node", append([]string{"--import", "./register.mjs", "harness.mjs"}, args...)...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "SIMLAB_CORE_ALIAS="+alias, "NO_COLOR=1")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	procgroup.Set(cmd)
	err := cmd.Run()
	// The harness exits on its own; whatever it left in its group goes too.
	procgroup.Kill(cmd)
	return err
}

// RealFanout is one fan-out of one real run, as the harness counted it.
type RealFanout struct {
	RunID          string `json:"run_id"`
	Index          int    `json:"index"`
	Branches       int    `json:"branches"`
	Inline         int    `json:"inline"`
	PrologueReads  int    `json:"prologue_reads"`
	LazyReads      int    `json:"lazy_reads"`
	LastCompleters int    `json:"last_completers"`
	StepDeliveries int    `json:"step_deliveries"`
}

// RealRun is one run of the harness: its summary (harness.mjs summarize).
type RealRun struct {
	Core string `json:"core"`
	// WorldLocal is the world-local release the run ran on, Builders the
	// @workflow/builders that compiled its bundle and BundleCore the core
	// the bundle's inlined runtime code came from (each read from the
	// package.json of what the harness loaded).
	WorldLocal string `json:"world_local"`
	// WorldPostgres is the world-postgres release, when the run was on it.
	WorldPostgres string `json:"world_postgres,omitempty"`
	Builders      string `json:"builders"`
	BundleCore    string `json:"bundle_core"`
	// WorldCapabilities are the keys of the real World's capabilities
	// object (what it declares to the runtime: core 5.0.0-beta.55 replays
	// through the queue on a World declaring invoke).
	WorldCapabilities []string `json:"world_capabilities"`
	Seed              uint64   `json:"seed"`
	Runs              []struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
		// EndedBy is who wrote the run's first accepted terminal event
		// (harness.mjs whoEnded): step (a queued last completer), workflow
		// (the orchestrator) or client; EndAttempts the terminal run
		// writes attempted, accepted or not.
		EndedBy     string `json:"ended_by"`
		EndAttempts int    `json:"end_attempts"`
		// Output is the client's returnValue, when it resolved.
		Output json.RawMessage `json:"output,omitempty"`
		// ReturnValue is what the client's returnValue did (a forced race
		// only): fulfilled, rejected (with the error's name) or still pending
		// once the runtime was done.
		ReturnValue *struct {
			State   string `json:"state"`
			Error   string `json:"error"`
			Message string `json:"message"`
		} `json:"return_value,omitempty"`
	} `json:"runs"`
	Fanouts []RealFanout `json:"fanouts"`
	Counts  struct {
		Deliveries          int            `json:"deliveries"`
		Redeliveries        int            `json:"redeliveries"`
		StepDeliveries      int            `json:"step_deliveries"`
		WithRunContext      int            `json:"step_messages_with_run_context"`
		Crashes             int            `json:"crashes"`
		Kills               int            `json:"kills"`
		RunsGet             int            `json:"runs_get"`
		RunsGetPrologue     int            `json:"runs_get_prologue"`
		RunsGetLazy         int            `json:"runs_get_lazy"`
		RunsGetClient       int            `json:"runs_get_client"`
		StaleReads          int            `json:"stale_reads"`
		EventsList          int            `json:"events_list"`
		StepStartedAccepted int            `json:"step_started_accepted"`
		StepStartedRejected int            `json:"step_started_rejected"`
		RejectedBy          map[string]int `json:"step_started_rejected_by"`
	} `json:"counts"`
	// Resumes is what the outside driver did (HarnessConfig.Resumes):
	// its cadence ticks, the resumes the runtime took, and those it
	// refused, by error name.
	Resumes *struct {
		Ticks   int            `json:"ticks"`
		Sent    int            `json:"sent"`
		Refused map[string]int `json:"refused"`
	} `json:"resumes,omitempty"`
	TTFSMS           []float64      `json:"ttfs_ms"`
	TTLSMS           []float64      `json:"ttls_ms"`
	WriteOwnMS       []float64      `json:"write_own_ms"`
	SpanNames        map[string]int `json:"span_names"`
	DispatchPrologue map[string]int `json:"dispatch_prologue"`
	AttributeKeys    []string       `json:"attribute_keys"`
	// ReadBack is every run read back from the real World after it went
	// quiet (harness.mjs readRunBack).
	ReadBack []ReadBack `json:"read_back"`
	// TimedOut: a program's run had not ended at the timeout
	// (HarnessConfig.ProgramTimeoutIsOutcome).
	TimedOut bool `json:"timed_out,omitempty"`
	// Replays is every workflow.replay.execute span of the run
	// (harness.mjs replayCosts).
	Replays []ReplaySpan `json:"replays"`
	// RuntimeLog counts the runtime's console warnings and errors during
	// the runs, with the first lines.
	RuntimeLog struct {
		Warn  int `json:"warn"`
		Error int `json:"error"`
		Lines []struct {
			Level string `json:"level"`
			Text  string `json:"text"`
		} `json:"lines"`
	} `json:"runtime_log"`
	Gate *GateReport  `json:"gate,omitempty"`
	Race []RaceReport `json:"race,omitempty"`
	// Calls is every World call the harness saw, with DumpCalls.
	Calls []Call `json:"calls,omitempty"`
	// Deliveries is every queue delivery the harness saw, with DumpCalls.
	Deliveries []Delivery `json:"deliveries,omitempty"`
	// Bodies is every step body that began, with RecordBodies.
	Bodies []Body  `json:"bodies,omitempty"`
	Probes []Probe `json:"probes,omitempty"`
	// Plan is what a plan's gate did (simlab reproduce): plan.mjs report().
	Plan      *PlanReport     `json:"plan,omitempty"`
	Error     string          `json:"error,omitempty"`
	RunIDs    []string        `json:"run_ids,omitempty"`
	LastSpans json.RawMessage `json:"last_spans,omitempty"`
	WorldLog  json.RawMessage `json:"world_log,omitempty"`
}

// ReplaySpan is one workflow.replay.execute span: the delivery it ran in
// (Step: a step's delivery, so a last completer's inline replay), its time
// and start (ms on the harness's clock), the events of the log it replayed
// (the pages its delivery listed since its last write before it began), and how many
// other replays overlapped it in the harness's one Node process.
type ReplaySpan struct {
	Delivery int     `json:"delivery"`
	Step     bool    `json:"step"`
	StartMS  float64 `json:"start_ms"`
	MS       float64 `json:"ms"`
	Events   int     `json:"events"`
	Overlap  int     `json:"overlap"`
}

// Call is one World call (or publish) as the store wrapper saw it: which
// delivery made it (-1: the client), what it was, what it answered, and its
// times in milliseconds from the harness's start (Released: when the gate
// let it go, -1 when it was not held).
type Call struct {
	Op          string  `json:"op"`
	Event       string  `json:"event"`
	Run         string  `json:"run"`
	Correlation string  `json:"correlation"`
	Lazy        bool    `json:"lazy"`
	Delivery    int     `json:"delivery"`
	Result      string  `json:"result"`
	Error       string  `json:"error"`
	Status      string  `json:"status"`
	Attempt     int     `json:"attempt"`
	Start       float64 `json:"start"`
	Released    float64 `json:"released"`
	End         float64 `json:"end"`
	// Step and Delay are a publish's step id and delaySeconds; StepInput
	// says the message carried the step's input (resilient dispatch).
	Step      string `json:"step"`
	Delay     int    `json:"delay"`
	StepInput bool   `json:"stepInput"`
	// Key is a publish's idempotency key ("" for none).
	Key string `json:"key"`
	// Listed is what an events.list page held: "type correlation", in order.
	Listed []string `json:"listed"`
	// Served is when the call left the store model's pool; Real is the
	// real World's own time for it (after the drawn latency); Message is a
	// publish's message id (the deliveries name it).
	Served  float64 `json:"served"`
	Real    float64 `json:"real"`
	Message string  `json:"message"`
	// Events is how many events an events.list page held.
	Events int `json:"events"`
}

// Delivery is one queue delivery: its index (the Delivery of its calls),
// the message's run and step (none: the run's own message), attempt and
// the HTTP status it answered.
type Delivery struct {
	Index   int     `json:"index"`
	Run     string  `json:"run"`
	Step    string  `json:"step"`
	Attempt int     `json:"attempt"`
	Message string  `json:"message"`
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
	Status  int     `json:"status"`
}

// Body is one step body (workflow/fanout.ts's hook): the step it ran, the
// delivery it ran in, the attempt the runtime gave it, and when it began
// and ended (End -1: it never returned); Held when the gate held it as it
// began.
type Body struct {
	Run      string  `json:"run"`
	Step     string  `json:"step"`
	Attempt  int     `json:"attempt"`
	Fanout   int     `json:"fanout"`
	Index    int     `json:"index"`
	Delivery int     `json:"delivery"`
	Begin    float64 `json:"begin"`
	End      float64 `json:"end"`
	Held     bool    `json:"held"`
	// Released is when a held body was let go (0 when none held it): the
	// body's work, as the History has it, begins then.
	Released float64 `json:"released,omitempty"`
	// Failed: the body threw (a flaky step's failing attempt).
	Failed bool `json:"failed"`
}

// ReadBack is one run read back from the real World: how many accepted
// terminal run events its log holds (every page of events.list) and the run
// or step rows that could not be read back (the call threw, or the answer
// failed the World's own schema).
type ReadBack struct {
	RunID          string         `json:"run_id"`
	Events         int            `json:"events"`
	Pages          int            `json:"pages"`
	TerminalEvents int            `json:"terminal_events"`
	TerminalByType map[string]int `json:"terminal_by_type"`
	// StepTerminalMax is the most terminal events one step has in the log.
	StepTerminalMax int `json:"step_terminal_max"`
	Steps           int `json:"steps"`
	// FirstTerminal is the type of the log's first terminal run event;
	// BeforeTerminal and AfterTerminal count the log's other events by type
	// on either side of it (every event, when there is none).
	FirstTerminal  string         `json:"first_terminal"`
	BeforeTerminal map[string]int `json:"before_terminal"`
	AfterTerminal  map[string]int `json:"after_terminal"`
	// RunStatus is the run row's status as runs.get read it back.
	RunStatus string `json:"run_status"`
	// ErrorCodes are the errorCode of each accepted run_failed in the log
	// (CORRUPTED_EVENT_LOG for a run the runtime gave up replaying).
	ErrorCodes []string `json:"error_codes"`
	// Log is the whole log as simlab's replay reads it: each event's
	// type, the ordinal of its correlation id in the run's id sequence and
	// the step name its data carries (harness.mjs replayLog).
	Log        []ReplayEvent `json:"log"`
	Unreadable []struct {
		Kind  string `json:"kind"` // run, step or events
		ID    string `json:"id"`
		Error string `json:"error"`
	} `json:"unreadable"`
}

// GateReport is what the gate did: each release (by count, or by escape
// when nothing more could arrive) and each escape with the count it lacked.
type GateReport struct {
	Releases []struct {
		Gate  string `json:"gate"`
		Run   string `json:"run"`
		Calls int    `json:"calls"`
		Why   string `json:"why"`
		// By is the happening that released a hold rule's item.
		By string `json:"by"`
	} `json:"releases"`
	Escapes []struct {
		Gate string `json:"gate"`
		Run  string `json:"run"`
		Held int    `json:"held"`
		Want int    `json:"want"`
		Have int    `json:"have"`
		// What is a hold rule's item that escaped.
		What string `json:"what"`
	} `json:"escapes"`
	// Actions is what each gate action did: the run it acted on, the
	// happening that fired it, and the harness call's error, if any.
	Actions []struct {
		Action string `json:"action"`
		Do     string `json:"do"`
		Run    string `json:"run"`
		By     string `json:"by"`
		Error  string `json:"error"`
	} `json:"actions"`
}

// RaceReport is one run's forced race (race.mjs): what the client's
// run_created answered before the race was armed, each call's answer, the
// status of the run run_started answered with, and the schedule's steps the
// gate had to let go out of order (none when the race was forced as given).
type RaceReport struct {
	RunID          string   `json:"run_id"`
	RunCreated     string   `json:"run_created"`
	StartAnswer    string   `json:"start_answer"`
	StartRunStatus string   `json:"start_run_status"`
	CancelAnswer   string   `json:"cancel_answer"`
	Cancel         string   `json:"cancel"`
	CancelMissed   bool     `json:"cancel_missed_world"`
	Broken         []string `json:"broken"`
	ArmedAt        float64  `json:"armed_at"`
	ClosedAt       float64  `json:"closed_at"`
}

// Probe is one late redelivery after the run ended (ProbeReplay): the run's
// own message or its first queued step's, with the World calls it made.
type Probe struct {
	RunID  string `json:"run_id"`
	Kind   string `json:"kind"` // run, step, ghost or ghost_bare
	Status int    `json:"status"`
	// Attempt is the delivery's attempt (with ProbeUntilAcked, one entry
	// per delivery of the probe); Step is the step message's step id,
	// StepInput whether it carried the step's input.
	Attempt   int    `json:"attempt"`
	Step      string `json:"step"`
	StepInput bool   `json:"step_input"`
	Calls     []struct {
		Op      string `json:"op"`
		Event   string `json:"event"`
		Result  string `json:"result"`
		Error   string `json:"error"`
		Status  string `json:"status"`
		RunEnds *int   `json:"run_ends"`
	} `json:"calls"`
}

// Story is the probe's calls in order, e.g. "events.create step_started →
// EntityConflictError, events.list → ok (2 run ends)".
func (p Probe) Story() string {
	var parts []string
	for _, c := range p.Calls {
		if c.Op == "queue" {
			continue
		}
		s := c.Op
		if c.Event != "" {
			s += " " + c.Event
		}
		s += " → " + c.Result
		if c.Status != "" {
			s += " " + c.Status
		}
		if c.RunEnds != nil {
			s += fmt.Sprintf(" (%d run ends)", *c.RunEnds)
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("%s, HTTP %d", strings.Join(parts, ", "), p.Status)
}

// RunError is a real workflow that failed or timed out: its run ids, the
// last spans and the World's log, as the harness reported them.
type RunError struct {
	// Summary is what the harness reported, when it reported anything.
	Summary   *RealRun
	Core, Msg string
	Branches  int
	// Program is the program a RunProgram ran ("" for the fan-out workflow).
	Program   string
	Seed      uint64
	RunIDs    []string
	LastSpans json.RawMessage
	WorldLog  json.RawMessage
	Stderr    string
}

func (e *RunError) Error() string {
	var b strings.Builder
	what := fmt.Sprintf("%d branches", e.Branches)
	if e.Program != "" {
		what = "program " + e.Program
	}
	fmt.Fprintf(&b, "real engine, core %s, %s, repetition %d: %s", e.Core, what, e.Seed, e.Msg)
	if len(e.RunIDs) > 0 {
		fmt.Fprintf(&b, "\n  run ids: %s", strings.Join(e.RunIDs, ", "))
	}
	if len(e.LastSpans) > 0 {
		fmt.Fprintf(&b, "\n  last spans: %s", spanNames(e.LastSpans))
	}
	if len(e.WorldLog) > 0 {
		fmt.Fprintf(&b, "\n  World log (last calls):%s", worldLogLines(e.WorldLog, 12))
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, "\n  harness stderr: %s", tail(e.Stderr, 2000))
	}
	return b.String()
}

// Run runs the harness once: cfg at one width on one core, in a temp data
// dir that is removed afterwards, killed after timeout.
func (r *Runner) Run(ctx context.Context, core Core, cfg HarnessConfig, timeout time.Duration) (*RealRun, error) {
	out, err := r.run(ctx, core, cfg, timeout)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// run is Run that also returns the harness's summary when the run failed
// after the harness printed one (a plan that timed out still has its
// record), with the *RunError.
func (r *Runner) run(ctx context.Context, core Core, cfg HarnessConfig, timeout time.Duration) (*RealRun, error) {
	bundleDir := cfg.BundleDir
	if bundleDir == "" {
		var err error
		if bundleDir, err = r.Bundle(ctx, core); err != nil {
			return nil, err
		}
	}
	// The World the run is on: its name and the release asked for.
	worldName, worldVersion := "world-local", ""
	if cfg.WorldPostgres != nil {
		worldName = "world-postgres"
		for _, w := range r.Catalog.WorldPostgreses {
			if w.Package() == cfg.WorldPostgres.Package {
				worldVersion = w.Version
			}
		}
		if worldVersion == "" {
			return nil, fmt.Errorf("engine: world-postgres package %q is not installed by %s/package.json", cfg.WorldPostgres.Package, r.Dir)
		}
	} else {
		if cfg.WorldLocal == "" {
			cfg.WorldLocal = "@workflow/world-local"
		}
		for _, w := range r.Catalog.WorldLocals {
			if w.Package() == cfg.WorldLocal {
				worldVersion = w.Version
			}
		}
		if worldVersion == "" {
			return nil, fmt.Errorf("engine: world-local package %q is not installed by %s/package.json", cfg.WorldLocal, r.Dir)
		}
	}
	tmp, err := os.MkdirTemp("", "simlab-engine-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cfg.BundleDir = bundleDir
	cfg.DataDir = filepath.Join(tmp, "data")
	cfg.TimeoutMS = timeout.Milliseconds()
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(tmp, "config.json")
	if err := os.WriteFile(cfgPath, data, 0o600); err != nil {
		return nil, err
	}
	// The harness stops itself at timeout and reports; the context is the
	// backstop for a harness that cannot.
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout+30*time.Second)
	defer cancel()
	start := time.Now()
	var stdout, stderr bytes.Buffer
	runErr := r.node(ctx, core.Alias, &stdout, &stderr, "run", cfgPath)
	var out RealRun
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &out); err != nil {
		msg := fmt.Sprintf("the harness printed no summary (%v; stdout: %q)", err, tail(stdout.String(), 600))
		if runErr != nil {
			msg = runErr.Error()
		}
		switch {
		case parent.Err() != nil:
			// Stopped from outside (Ctrl-C), not by the timeout.
			msg = fmt.Sprintf("stopped after %v: %v", time.Since(start).Round(time.Millisecond), context.Cause(parent))
		case ctx.Err() != nil:
			msg = fmt.Sprintf("killed after %v: %s", timeout+30*time.Second, msg)
		}
		return nil, &RunError{Core: core.Version, Branches: firstWidth(cfg.Fanouts), Program: cfg.Program, Seed: cfg.Seed, Msg: msg, Stderr: stderr.String()}
	}
	if out.Error != "" || runErr != nil {
		msg := out.Error
		if msg == "" {
			msg = runErr.Error()
		}
		return &out, &RunError{Summary: &out, Core: core.Version, Branches: firstWidth(cfg.Fanouts), Program: cfg.Program, Seed: cfg.Seed, Msg: msg, RunIDs: out.RunIDs,
			LastSpans: out.LastSpans, WorldLog: out.WorldLog, Stderr: stderr.String()}
	}
	// What ran is what was asked for, read from the packages the harness
	// loaded, not assumed from the alias.
	ranWorld := out.WorldLocal
	if cfg.WorldPostgres != nil {
		ranWorld = out.WorldPostgres
	}
	if out.Core != core.Version || out.BundleCore != core.Version || ranWorld != worldVersion {
		return nil, &RunError{Core: core.Version, Branches: firstWidth(cfg.Fanouts), Program: cfg.Program, Seed: cfg.Seed,
			Msg: fmt.Sprintf("the harness ran core %q (its bundle compiled against core %q by builders %q) over %s %q, want core %s over %s %s",
				out.Core, out.BundleCore, out.Builders, worldName, ranWorld, core.Version, worldName, worldVersion)}
	}
	return &out, nil
}

// spanNames is the harness's last spans as their names in order, each
// with its status when it is an error (the raw JSON, cut, when it does not
// parse): a reader's account, not kilobytes of attributes.
func spanNames(raw json.RawMessage) string {
	var spans []struct {
		Name   string `json:"name"`
		Status struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
	}
	if err := json.Unmarshal(raw, &spans); err != nil {
		return tail(string(raw), 600)
	}
	names := make([]string, len(spans))
	for i, sp := range spans {
		names[i] = sp.Name
		if sp.Status.Code == 2 { // OTel's ERROR
			names[i] += " (error: " + FirstLine(sp.Status.Message, 120) + ")"
		}
	}
	return strings.Join(names, ", ")
}

// worldLogLines is the last n of the harness's World calls, one line
// each: when, which delivery, the call and its answer.
func worldLogLines(raw json.RawMessage, n int) string {
	var calls []Call
	if err := json.Unmarshal(raw, &calls); err != nil {
		return " " + tail(string(raw), 600)
	}
	if len(calls) > n {
		calls = calls[len(calls)-n:]
	}
	var b strings.Builder
	for _, c := range calls {
		who := "the client"
		if c.Delivery >= 0 {
			who = fmt.Sprintf("delivery %d", c.Delivery)
		}
		answer := c.Result
		if c.Error != "" {
			answer = FirstLine(c.Error, 80)
		}
		if answer == "" {
			answer = "no answer yet"
		}
		fmt.Fprintf(&b, "\n    %8.1f ms  %s: %s", c.Start, who, strings.TrimSpace(c.Op+" "+c.Event))
		fmt.Fprintf(&b, " → %s", answer)
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// FirstLine is s's first line, cut to n bytes.
func FirstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

// firstWidth is a run's first fan-out width (0 for a program's run, which
// has none).
func firstWidth(fanouts []int) int {
	if len(fanouts) == 0 {
		return 0
	}
	return fanouts[0]
}

// Shared is one Runner on Dir prepared once, on first use, with every
// pinned core, for many users at once (a package's tests): the packages
// installed once and each core's workflow compiled once. Close removes
// what it built.
type Shared struct {
	Dir  string
	once sync.Once
	r    *Runner
	err  error
}

// Runner is the prepared Runner, or why it could not be prepared (Node
// missing, an install or a compile that failed).
func (s *Shared) Runner() (*Runner, error) {
	s.once.Do(func() {
		if _, err := exec.LookPath("node"); err != nil {
			s.err = fmt.Errorf("node is not on PATH: the real engine needs Node.js ≥ 20 and npm (set %s=1 to opt out explicitly)", "SIMLAB_SKIP_REAL_ENGINE")
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		s.r = &Runner{Dir: s.Dir}
		s.err = s.r.Prepare(ctx, true, Cores...)
	})
	return s.r, s.err
}

// Close removes the shared Runner's builds, if it was ever prepared.
func (s *Shared) Close() error {
	if s.r == nil {
		return nil
	}
	return s.r.Close()
}
