package realengine

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/simlab/simlab/internal/headbuf"
	"github.com/simlab/simlab/internal/procgroup"
	"github.com/simlab/simlab/model/program"
)

// OfflineReplayer replays logs through one real core's own replay function
// (replay.mjs serve), with no World and no queue: what core's replay makes
// of a log, to hold model/program's Replay against, log by log.
type OfflineReplayer struct {
	Core Core
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	errb *headbuf.Buffer
	next int
}

// deferredCheckMS is the runtime's WORKFLOW_DEFERRED_CHECK_DELAY_MS for
// offline replays: how long core waits before it declares an event nobody
// took unconsumable (100 ms by default; 10 is its minimum). Offline nothing
// else is in flight, so the shortest wait decides the same.
const deferredCheckMS = "10"

// hangMS is how long an offline replay may take before replay.mjs answers
// that it hung (neither suspended nor ended): a replay of the corpus takes
// tens of milliseconds.
const hangMS = "2000"

// OfflineReplayer compiles progs (by name) for core with core's own
// builders and starts a Node process that replays logs of them through
// core's replay. r must be prepared; Close stops the process.
func (r *Runner) OfflineReplayer(ctx context.Context, core Core, progs map[string][]program.Node) (*OfflineReplayer, error) {
	src, err := ProgramsTS(progs)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	build := r.build
	r.mu.Unlock()
	if build == "" {
		return nil, errors.New("realengine: OfflineReplayer before Prepare")
	}
	sum := sha256.Sum256([]byte(src))
	dir := filepath.Join(build, fmt.Sprintf("replay-%s-%x", core.Version, sum[:6]))
	if _, err := os.Stat(filepath.Join(dir, "build.json")); err != nil {
		if err := r.compilePrograms(ctx, core, dir, src); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command("node", "replay.mjs", "serve", dir)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "WORKFLOW_DEFERRED_CHECK_DELAY_MS="+deferredCheckMS, "SIMLAB_REPLAY_HANG_MS="+hangMS)
	procgroup.Isolate(cmd)
	o := &OfflineReplayer{Core: core, cmd: cmd, errb: &headbuf.Buffer{}}
	cmd.Stderr = o.errb
	if o.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	o.out = bufio.NewReaderSize(stdout, 1<<20)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the offline replay of core %s: %w", core.Version, err)
	}
	var ready struct {
		Ready bool   `json:"ready"`
		Core  string `json:"core"`
	}
	line, err := o.out.ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &ready)
	}
	if err != nil || !ready.Ready {
		o.Close()
		return nil, fmt.Errorf("the offline replay of core %s did not start: %v\n%s", core.Version, err, tail(o.errb.String(), 2000))
	}
	if ready.Core != core.Version {
		o.Close()
		return nil, fmt.Errorf("the offline replay meant for core %s loaded core %s", core.Version, ready.Core)
	}
	return o, nil
}

// compilePrograms writes src as dir/programs.ts over a node_modules that
// resolves @workflow/core to core (overlayModules) and compiles it with
// core's own builders.
func (r *Runner) compilePrograms(ctx context.Context, core Core, dir, src string) error {
	top, err := filepath.Abs(filepath.Join(r.Dir, "node_modules"))
	if err != nil {
		return err
	}
	if err := overlayModules(filepath.Join(dir, "node_modules"), top, core.Package()); err != nil {
		return fmt.Errorf("core %s: laying out its node_modules: %w", core.Version, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "programs.ts"), []byte(src), 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "node", "replay.mjs", "build", dir, core.BuildersPackage())
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	procgroup.Set(cmd)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("compiling programs.ts for core %s with %s: %w\n%s", core.Version, core.BuildersPackage(), err, tail(stderr.String(), 2000))
	}
	return nil
}

// RealReplay is what the real core's replay made of a log.
type RealReplay struct {
	// Outcome is completed, suspended, diverged, failed (a step failed, or
	// a receive rejected on a hook_conflict, and the program threw), hung
	// (the replay neither suspended nor ended: the program awaits what no
	// consumer settles and nothing schedules a suspension) or error
	// (anything else core threw).
	Outcome string        `json:"outcome"`
	Pending []RealPending `json:"pending"`
	// At is the index of the event a divergence names.
	At      int    `json:"at"`
	Message string `json:"message"`
}

// RealPending is one entity a suspended real replay awaits.
type RealPending struct {
	Ordinal int32  `json:"ordinal"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Created bool   `json:"created"`
	// A hook's token (its place in the run's token sequence, -1: none of
	// its first 4096), and whether the program disposed of it with no
	// hook_disposed read yet (core's queue item's disposed: the suspension
	// writes one).
	Token   int32 `json:"token"`
	Dispose bool  `json:"dispose"`
}

// Divergence names the class of core's divergence message, as
// model/program names it.
func (rr RealReplay) Divergence() program.Divergence {
	m := rr.Message
	switch {
	case strings.Contains(m, "but the current step consumer is"):
		return program.NameMismatch
	case strings.Contains(m, "Unexpected event type"):
		return program.UnexpectedType
	case strings.Contains(m, "has resumeAt"):
		return program.ResumeAtMismatch
	case strings.Contains(m, "could not consume event"):
		return program.Unconsumable
	case strings.Contains(m, "finished without consuming event"):
		return program.FinishedWithParked
	case strings.Contains(m, "belongs to token"):
		return program.TokenMismatch
	}
	return program.NoDivergence
}

func (rr RealReplay) String() string {
	switch rr.Outcome {
	case "diverged":
		return fmt.Sprintf("diverged at event %d (%s): %s", rr.At, rr.Divergence(), rr.Message)
	case "suspended":
		parts := make([]string, len(rr.Pending))
		for i, p := range rr.Pending {
			parts[i] = fmt.Sprintf("%s#%d", p.Kind, p.Ordinal)
			if p.Name != "" {
				parts[i] += " " + p.Name
			}
			if p.Kind == "hook" {
				parts[i] += fmt.Sprintf(" token#%d", p.Token)
			}
			if p.Created {
				parts[i] += " (created)"
			}
			if p.Dispose {
				parts[i] += " (disposed)"
			}
		}
		return "suspended on " + strings.Join(parts, ", ")
	case "error":
		return "error: " + rr.Message
	}
	return rr.Outcome
}

// Agrees reports whether simlab's replay of the log ended as the real one:
// the same status; for a suspension the same entities pending, in order,
// each with its kind, name and whether its created event was seen, and a
// hook with its token and whether the program disposed of it; for a
// divergence the same event and class.
func (rr RealReplay) Agrees(o program.Outcome) bool {
	if rr.Outcome != o.Status.String() {
		return false
	}
	switch o.Status {
	case program.Suspended:
		return slices.EqualFunc(rr.Pending, o.Pending, func(r RealPending, p program.Pending) bool {
			same := r.Ordinal == p.Ordinal && r.Kind == p.Kind.String() && r.Name == p.Name && r.Created == p.Created
			if p.Kind == program.EntityHook {
				same = same && r.Token == p.Token && r.Dispose == p.Dispose
			}
			return same
		})
	case program.Diverged:
		return rr.At == o.At && rr.Divergence() == o.Divergence
	}
	return true
}

// ReplayEvent is one event of a log as replay.mjs reads it.
type ReplayEvent struct {
	Type     string `json:"type"`
	Kind     string `json:"kind,omitempty"`
	Ordinal  int32  `json:"ordinal"`
	Name     string `json:"name,omitempty"`
	Result   int64  `json:"result,omitempty"`
	ResumeAt int64  `json:"resume_at,omitempty"`
	// Token is a hook_created's or hook_conflict's token, by its place in
	// the run's token sequence (-1: not one of the run's first 4096).
	Token int32 `json:"token,omitempty"`
	// ResumeID is a hook_received's resumeId (a lazy resume's idempotency
	// key; core delivers the first hook_received of one and drops the
	// rest). program.Event has none: only a case written as ReplayEvents
	// (OfflineReplayer.ReplayEvents) carries one.
	ResumeID string `json:"resume_id,omitempty"`
	// At is the event's createdAt in ms since the run was created; a case
	// whose events carry one (Timed) is replayed with those times.
	At int64 `json:"at,omitempty"`
}

// ReplayEvents is log as replay.mjs reads it.
func ReplayEvents(log []program.Event) []ReplayEvent {
	out := make([]ReplayEvent, len(log))
	for i, e := range log {
		out[i] = ReplayEvent{Type: e.Type.String(), Kind: e.Kind.String(), Ordinal: e.Ordinal, Name: e.Name, Result: e.Result, ResumeAt: e.ResumeAt, Token: e.Token, At: e.CreatedMS}
	}
	return out
}

// ProgramEvents is the inverse of ReplayEvents. A real log's noop (a
// sealed slot) and attr_set (an attribute a step body wrote) are left out:
// core's replay passes over both.
func ProgramEvents(evs []ReplayEvent) ([]program.Event, error) {
	out := make([]program.Event, 0, len(evs))
	for i, e := range evs {
		if e.Type == "noop" || e.Type == "attr_set" && e.Kind == "" {
			continue
		}
		t, ok := program.ParseEventType(e.Type)
		if !ok {
			return nil, fmt.Errorf("event %d: type %q", i, e.Type)
		}
		var k program.EntityKind
		switch e.Kind {
		case "":
		case "step":
			k = program.EntityStep
		case "wait":
			k = program.EntityWait
		case "hook":
			k = program.EntityHook
		default:
			return nil, fmt.Errorf("event %d: kind %q: want step, wait or hook", i, e.Kind)
		}
		out = append(out, program.Event{Type: t, Kind: k, Ordinal: e.Ordinal, Name: e.Name, Result: e.Result, ResumeAt: e.ResumeAt, Token: e.Token, CreatedMS: e.At})
	}
	return out, nil
}

// Replay replays log as a run of program name through the real core.
func (o *OfflineReplayer) Replay(name string, log []program.Event) (RealReplay, error) {
	return o.ReplayEvents(name, ReplayEvents(log))
}

// ReplayEvents replays a log as replay.mjs reads it (which may carry what
// program.Event cannot: a resumeId) as a run of program name.
func (o *OfflineReplayer) ReplayEvents(name string, evs []ReplayEvent) (RealReplay, error) {
	o.next++
	timed := false
	for _, e := range evs {
		timed = timed || e.At != 0
	}
	req, err := json.Marshal(struct {
		ID       int           `json:"id"`
		Workflow string        `json:"workflow"`
		Events   []ReplayEvent `json:"events"`
		// Timed: each event's createdAt is the run's creation plus its
		// At (else one second after the event before it).
		Timed bool `json:"timed,omitempty"`
	}{o.next, WorkflowFunction(name), evs, timed})
	if err != nil {
		return RealReplay{}, err
	}
	if _, err := o.in.Write(append(req, '\n')); err != nil {
		return RealReplay{}, fmt.Errorf("offline replay of core %s: %w\n%s", o.Core.Version, err, tail(o.errb.String(), 2000))
	}
	line, err := o.out.ReadBytes('\n')
	if err != nil {
		return RealReplay{}, fmt.Errorf("offline replay of core %s ended: %w\n%s", o.Core.Version, err, tail(o.errb.String(), 2000))
	}
	var rr struct {
		ID int `json:"id"`
		RealReplay
	}
	if err := json.Unmarshal(line, &rr); err != nil {
		return RealReplay{}, fmt.Errorf("offline replay of core %s: %w: %s", o.Core.Version, err, line)
	}
	if rr.ID != o.next {
		return RealReplay{}, fmt.Errorf("offline replay of core %s answered case %d, want %d", o.Core.Version, rr.ID, o.next)
	}
	return rr.RealReplay, nil
}

// Close stops the Node process and whatever it started.
func (o *OfflineReplayer) Close() error {
	if o.in != nil {
		o.in.Close()
	}
	done := make(chan error, 1)
	go func() { done <- o.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
	}
	_ = syscall.Kill(-o.cmd.Process.Pid, syscall.SIGKILL)
	return err
}

// Corrupted reports whether the run failed because its log could not be
// replayed: CORRUPTED_EVENT_LOG (after the recovery replays), or
// REPLAY_DIVERGENCE.
func (b ReadBack) Corrupted() bool {
	return slices.Contains(b.ErrorCodes, "CORRUPTED_EVENT_LOG") || slices.Contains(b.ErrorCodes, "REPLAY_DIVERGENCE")
}

// HarnessStep is the name of the harness workflow's step (workflow/fanout.ts
// branch): the steps of its fan-out list's program.
const HarnessStep = "branch"

// Replayable reports whether simlab's replay of the harness workflow (the
// fan-out list r ran, as program.FromFanouts) consumes run b's log up to
// its end. A log holding an event the replay does not know is not.
func (r *RealRun) Replayable(b ReadBack) bool {
	log, err := ProgramEvents(b.Log)
	if err != nil {
		return false
	}
	if len(log) == 0 {
		return true
	}
	var widths []int
	for _, f := range r.Fanouts {
		if f.RunID == b.RunID {
			widths = append(widths, f.Branches)
		}
	}
	if len(widths) == 0 {
		return true
	}
	p := program.MustCompile(program.FromFanouts(widths, HarnessStep))
	return program.Replay(p, program.BeforeEnd(log)).Status != program.Diverged
}
