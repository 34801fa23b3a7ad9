package engine

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
	"syscall"
	"time"
)

// Core is one runtime under test: its package version and the npm alias
// package.json installs it under ("" for @workflow/core itself).
type Core struct {
	Version string
	Alias   string
}

// Cores are the runtimes package.json pins, in the order rows print.
var Cores = []Core{
	{Version: "5.0.0-beta.52", Alias: ""},
	{Version: "5.0.0-beta.50", Alias: "core-b50"},
}

// CoreByVersion finds a pinned core by its version.
func CoreByVersion(v string) (Core, error) {
	var have []string
	for _, c := range Cores {
		if c.Version == v {
			return c, nil
		}
		have = append(have, c.Version)
	}
	return Core{}, fmt.Errorf("core %q is not installed by conformance/engine/package.json: want one of %s", v, strings.Join(have, ", "))
}

// Runner runs the Node harness in Dir (conformance/engine).
type Runner struct {
	Dir string
	// Log receives npm's output while it installs; nil discards it.
	Log io.Writer
	// build is the temp dir holding the compiled bundles.
	build string
}

// FindDir locates conformance/engine from the working directory upwards
// (the repository root holds go.mod), so the command works from anywhere in
// a checkout.
func FindDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "conformance", "engine", "harness.mjs")); err == nil {
			return filepath.Join(d, "conformance", "engine"), nil
		}
		if _, err := os.Stat(filepath.Join(d, "harness.mjs")); err == nil && filepath.Base(d) == "engine" {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("conformance/engine/harness.mjs not found from %s upwards: run simlab validate inside a simlab checkout, or pass --engine-dir", wd)
		}
	}
}

// Prepare checks Node, installs the pinned packages if they are missing
// (from the committed lock file) when install is set, and compiles the
// workflow once. Close removes what it built.
//
// It runs `npm install --no-save`, not `npm ci`: the lock pins every version,
// but npm ci refuses it because cbor-extract's optional platform packages
// (@cbor-extract/*) are not on the registry this project reaches, so the lock
// has no entry for them; npm install skips them as optional and writes
// nothing back.
func (r *Runner) Prepare(ctx context.Context, install bool) error {
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
	if !r.installed() {
		if !install {
			return fmt.Errorf("the real engine's packages are not installed in %s: run `npm install --no-save --prefix %s` (or drop --no-install)", r.Dir, r.Dir)
		}
		if _, err := exec.LookPath("npm"); err != nil {
			return fmt.Errorf("npm not found on PATH: needed once to install %s/package-lock.json", r.Dir)
		}
		cmd := exec.CommandContext(ctx, "npm", "install", "--no-save", "--no-audit", "--no-fund", "--loglevel=error")
		cmd.Dir = r.Dir
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if r.Log != nil {
			fmt.Fprintf(r.Log, "installing the real engine's packages: npm install --no-save in %s\n", r.Dir)
		}
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("npm install in %s: %w\n%s", r.Dir, err, tail(buf.String(), 2000))
		}
		if !r.installed() {
			return fmt.Errorf("npm install in %s finished but a pinned package is still missing", r.Dir)
		}
	}
	build, err := os.MkdirTemp("", "simlab-engine-build-")
	if err != nil {
		return err
	}
	r.build = build
	var stderr bytes.Buffer
	if err := r.node(ctx, "", nil, &stderr, "build", build); err != nil {
		return fmt.Errorf("compiling workflow/fanout.ts with @workflow/builders: %w\n%s", err, tail(stderr.String(), 2000))
	}
	return nil
}

// installed says whether every pinned package is present.
func (r *Runner) installed() bool {
	for _, p := range []string{"@workflow/core", "core-b50", "@workflow/world-local", "@workflow/builders", "workflow", "@opentelemetry/sdk-trace-node", "@opentelemetry/otlp-transformer"} {
		if _, err := os.Stat(filepath.Join(r.Dir, "node_modules", p, "package.json")); err != nil {
			return false
		}
	}
	return true
}

// Close removes the compiled bundles.
func (r *Runner) Close() error {
	if r.build == "" {
		return nil
	}
	err := os.RemoveAll(r.build)
	r.build = ""
	return err
}

// node runs the harness in its own process group, killed as a group when
// ctx ends, so no Node process outlives the call.
func (r *Runner) node(ctx context.Context, alias string, stdout, stderr io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "node", append([]string{"--import", "./register.mjs", "harness.mjs"}, args...)...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "SIMLAB_CORE_ALIAS="+alias, "NO_COLOR=1")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = procAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		// The harness exits on its own; whatever it left in its group goes too.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return err
}

// RealRun is one run of the harness: its summary (harness.mjs summarize).
type RealRun struct {
	Core string `json:"core"`
	Seed uint64 `json:"seed"`
	Runs []struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
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
	Fanouts []struct {
		RunID          string `json:"run_id"`
		Index          int    `json:"index"`
		Branches       int    `json:"branches"`
		Inline         int    `json:"inline"`
		PrologueReads  int    `json:"prologue_reads"`
		LazyReads      int    `json:"lazy_reads"`
		LastCompleters int    `json:"last_completers"`
		StepDeliveries int    `json:"step_deliveries"`
	} `json:"fanouts"`
	Counts struct {
		Deliveries          int            `json:"deliveries"`
		Redeliveries        int            `json:"redeliveries"`
		StepDeliveries      int            `json:"step_deliveries"`
		WithRunContext      int            `json:"step_messages_with_run_context"`
		Crashes             int            `json:"crashes"`
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
	TTFSMS           []float64      `json:"ttfs_ms"`
	TTLSMS           []float64      `json:"ttls_ms"`
	WriteOwnMS       []float64      `json:"write_own_ms"`
	SpanNames        map[string]int `json:"span_names"`
	DispatchPrologue map[string]int `json:"dispatch_prologue"`
	AttributeKeys    []string       `json:"attribute_keys"`
	// ReadBack is every run read back from the real World after it went
	// quiet (harness.mjs readRunBack).
	ReadBack []ReadBack `json:"read_back"`
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
	// Step and Delay are a publish's step id and delaySeconds.
	Step  string `json:"step"`
	Delay int    `json:"delay"`
	// Listed is what an events.list page held: "type correlation", in order.
	Listed []string `json:"listed"`
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
	RunStatus  string `json:"run_status"`
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
	Kind   string `json:"kind"` // run or step
	Status int    `json:"status"`
	Calls  []struct {
		Op      string `json:"op"`
		Event   string `json:"event"`
		Result  string `json:"result"`
		Error   string `json:"error"`
		Status  string `json:"status"`
		RunEnds *int   `json:"run_ends"`
	} `json:"calls"`
}

// story is the probe's calls in order, e.g. "events.create step_started →
// EntityConflictError, events.list → ok (2 run ends)".
func (p Probe) story() string {
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
	Core, Msg string
	Branches  int
	Seed      uint64
	RunIDs    []string
	LastSpans json.RawMessage
	WorldLog  json.RawMessage
	Stderr    string
}

func (e *RunError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "real engine, core %s, %d branches, repetition %d: %s", e.Core, e.Branches, e.Seed, e.Msg)
	if len(e.RunIDs) > 0 {
		fmt.Fprintf(&b, "\n  run ids: %s", strings.Join(e.RunIDs, ", "))
	}
	if len(e.LastSpans) > 0 {
		fmt.Fprintf(&b, "\n  last spans: %s", tail(string(e.LastSpans), 3000))
	}
	if len(e.WorldLog) > 0 {
		fmt.Fprintf(&b, "\n  World log (last calls): %s", tail(string(e.WorldLog), 4000))
	}
	if e.Stderr != "" {
		fmt.Fprintf(&b, "\n  harness stderr: %s", tail(e.Stderr, 2000))
	}
	return b.String()
}

// Run runs the harness once: cfg at one width on one core, in a temp data
// dir that is removed afterwards, killed after timeout.
func (r *Runner) Run(ctx context.Context, core Core, cfg harnessConfig, timeout time.Duration) (*RealRun, error) {
	out, err := r.run(ctx, core, cfg, timeout)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// run is Run that also returns the harness's summary when the run failed
// after the harness printed one (a plan that timed out still has its
// record), with the *RunError.
func (r *Runner) run(ctx context.Context, core Core, cfg harnessConfig, timeout time.Duration) (*RealRun, error) {
	if r.build == "" {
		return nil, errors.New("engine: Run before Prepare")
	}
	tmp, err := os.MkdirTemp("", "simlab-engine-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cfg.BundleDir = r.build
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
		return nil, &RunError{Core: core.Version, Branches: cfg.Fanouts[0], Seed: cfg.Seed, Msg: msg, Stderr: stderr.String()}
	}
	if out.Error != "" || runErr != nil {
		msg := out.Error
		if msg == "" {
			msg = runErr.Error()
		}
		return &out, &RunError{Core: core.Version, Branches: cfg.Fanouts[0], Seed: cfg.Seed, Msg: msg, RunIDs: out.RunIDs,
			LastSpans: out.LastSpans, WorldLog: out.WorldLog, Stderr: stderr.String()}
	}
	return &out, nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
