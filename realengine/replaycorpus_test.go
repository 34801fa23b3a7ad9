package realengine

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/simlab/simlab/model/flow"
	"github.com/simlab/simlab/model/program"
)

// The offline replay corpus: model/program's Replay against the real core's
// own replay, log by log, on every pinned core. Each log is drawn by rapid
// the way runs write them (entities created, started and finished in any
// order the program allows, waits completed, steps retried or failed, hooks
// created or refused their token, resumed whenever, disposed) with
// stale writers among them: a replay of an earlier prefix writing the
// creates its own view lacks, which is how concurrent last completers write
// a log that later replays cannot consume. Then, on some, an edit: an event
// dropped, duplicated, moved, renamed or given another ordinal, a
// run_completed in the middle, a wait completed out of band before the
// program reaches it. Both replays must end the same way (status,
// the entities pending, the event and class of a divergence).
// SIMLAB_REPLAY_CORPUS=N draws N logs per program and core (default 25).

// corpusPrograms are the shapes the corpus replays: the offline study's
// race, the team's step-storm (each branch races a step against a sleep and
// runs one more step when the step won), a pool, a polling loop, the
// fan-out list, a race of two steps, a loop of races, a race of a pool
// against a sequence, a nesting of them, and two that read the clock.
var corpusPrograms = map[string][]program.Node{
	"raceflow": {
		{All: []program.Node{{Step: "part"}, {Step: "part"}, {Step: "part"}}},
		{Race: []program.Node{{Step: "stepX"}, {Sleep: time.Hour}}, As: "winner"},
		{If: "winner", Then: []program.Node{{Step: "extraStep"}}},
		{Step: "finalStep"},
	},
	"storm": {
		{All: stormBranches(3)},
		{Step: "final"},
	},
	"pool": {
		{Pool: 2, N: 5, Step: "work", Results: 2, As: "last"},
		{Step: "check", Results: 2, As: "ok"},
		{If: "ok", Then: []program.Node{{Step: "extra"}}, Else: []program.Node{{Sleep: time.Second}}},
		{Step: "final"},
	},
	"poll": {
		{Loop: 4, Do: []program.Node{{Step: "poll", Results: 2, As: "ready"}}, Until: "ready"},
		{Step: "done"},
	},
	"fanouts": program.FromFanouts([]int{3, 2}, "step"),
	"steprace": {
		{Race: []program.Node{{Step: "fast", Results: 2}, {Step: "slow"}}, As: "w"},
		{If: "w", Not: true, Then: []program.Node{{Step: "again"}, {Step: "again"}}},
		{Step: "final"},
	},
	"looprace": {
		{Loop: 3, Do: []program.Node{
			{Race: []program.Node{{Step: "probe", Results: 2}, {Sleep: time.Second}}, As: "seen"},
			{If: "seen", Then: []program.Node{{Step: "record"}}},
		}, Until: "seen"},
		{Step: "done"},
	},
	"poolrace": {
		{Race: []program.Node{{Pool: 2, N: 4, Step: "work"}, {Seq: []program.Node{{Step: "watch"}, {Sleep: time.Second}}}}, As: "first"},
		{If: "first", Then: []program.Node{{All: []program.Node{{Step: "a"}, {Step: "b"}}}}, Else: []program.Node{{Step: "c"}}},
		{Step: "final"},
	},
	// model/flow's storm and control, replayed from the logs its runs
	// write (TestFlowLogsReplayAsTheRealCoreReplays).
	"flowstorm":   flow.Storm(16, 3, 300*time.Millisecond),
	"flowcontrol": flow.Control(4, 200*time.Millisecond),
	// Programs that read the clock (Date.now()): each branch picks its
	// next step by the time its step ended; their logs carry times.
	"clockbranches": {
		{All: []program.Node{
			{Seq: []program.Node{{Step: "a"}, {Clock: 1500 * time.Millisecond, As: "late1"}, {If: "late1", Then: []program.Node{{Step: "x"}}, Else: []program.Node{{Step: "y"}}}}},
			{Seq: []program.Node{{Step: "b"}, {Clock: 2500 * time.Millisecond, As: "late2"}, {If: "late2", Then: []program.Node{{Step: "x"}}, Else: []program.Node{{Step: "y"}, {Step: "y"}}}}},
			{Step: "c"},
		}},
		{Step: "final"},
	},
	"clockloop": {
		{Loop: 3, Do: []program.Node{
			{Race: []program.Node{{Step: "work"}, {Sleep: time.Second}}},
			{Clock: 2 * time.Second, As: "late"},
			{If: "late", Then: []program.Node{{Step: "quick"}}, Else: []program.Node{{All: []program.Node{{Step: "extra"}, {Step: "extra"}}}}},
		}, Until: "late"},
		{Step: "done"},
	},
	// Programs with hooks (createHook, await, dispose): model/program's
	// hook_test.go's approval (a hook raced against a watchdog sleep),
	// its loop reading one payload per iteration and its positional
	// tokens; a payload buffered before a race; two hooks read
	// concurrently; a hook created, read and disposed in each iteration;
	// and (hookclock, below) a payload that decides what the clock reads.
	"approval": {
		{Hook: "h"},
		{Race: []program.Node{{Receive: "h"}, {Sleep: time.Hour}}, As: "got"},
		{If: "got", Then: []program.Node{{Step: "approved"}}},
		{Dispose: "h"},
		{Step: "final"},
	},
	"hookloop": {
		{Hook: "h"},
		{Step: "first"},
		{Loop: 3, Do: []program.Node{{Receive: "h"}, {Step: "each"}}},
	},
	"hooktokens": {
		{Step: "a", As: "x"},
		{If: "x", Then: []program.Node{{Hook: "early"}, {Dispose: "early"}}},
		{Hook: "late"},
		{Receive: "late"},
	},
	"hookrace": {
		{Hook: "h"},
		{Race: []program.Node{{Sleep: time.Second}, {Seq: []program.Node{{Step: "a"}, {Receive: "h"}}}}, As: "got"},
		{If: "got", Then: []program.Node{{Step: "yes"}}, Else: []program.Node{{Step: "no"}}},
	},
	"twohooks": {
		{Hook: "a"},
		{Hook: "b"},
		{All: []program.Node{
			{Seq: []program.Node{{Receive: "a"}, {Step: "x"}}},
			{Seq: []program.Node{{Receive: "b"}, {Step: "y"}}},
		}},
		{Step: "final"},
	},
	"hookeach": {
		{Loop: 3, Do: []program.Node{
			{Hook: "h"},
			{Race: []program.Node{{Receive: "h"}, {Sleep: time.Second}}, As: "got"},
			{Dispose: "h"},
		}, Until: "got"},
		{Step: "done"},
	},
	// A hook whose payload (buffered while a runs, or raced against the
	// sleep) decides what the clock reads next: the clock moves with the
	// payload's delivery, at its place in the log.
	"hookclock": {
		{Hook: "h"},
		{Step: "a"},
		{Race: []program.Node{{Receive: "h"}, {Sleep: time.Second}}},
		{Clock: 1500 * time.Millisecond, As: "late"},
		{If: "late", Then: []program.Node{{Step: "x"}}, Else: []program.Node{{Step: "y"}}},
		{Dispose: "h"},
	},
	// Carried reads (receive with carry: true, a hook's read carried
	// across the races it loses): one hook raced against a sleep in a
	// loop (model/program's
	// TestACarriedReadTakesThePayloadALostRaceWouldHaveLost), and
	// model/flow's wake loop; each beside its plain counterpart, whose
	// lost races leave their awaiters enrolled to lose the payloads they
	// take (vercel/workflow #4264).
	"carryloop":     carryLoop(true),
	"plainloop":     carryLoop(false),
	"wakeloop":      flow.WakeLoop(3, time.Second),
	"wakeloopplain": uncarried(flow.WakeLoop(3, time.Second)),
	// A carried read the hook's dispose drops, raced again: it never
	// settles.
	"carrydispose": {
		{Hook: "h"},
		{Loop: 2, Do: []program.Node{
			{Race: []program.Node{{Receive: "h", Carry: true}, {Sleep: time.Hour}}, As: "got"},
			{Dispose: "h"},
		}},
		{Step: "final"},
	},
	// Two races at once, each with a carried read of one hook: both race
	// the hook's one read.
	"carryboth": {
		{Hook: "h"},
		{All: []program.Node{
			{Seq: []program.Node{
				{Race: []program.Node{{Receive: "h", Carry: true}, {Sleep: time.Hour}}, As: "a"},
				{If: "a", Then: []program.Node{{Step: "x"}}},
			}},
			{Seq: []program.Node{
				{Race: []program.Node{{Receive: "h", Carry: true}, {Sleep: 2 * time.Hour}}, As: "b"},
				{If: "b", Then: []program.Node{{Step: "y"}}},
			}},
		}},
	},
	"nested": {
		{All: []program.Node{
			{Seq: []program.Node{
				{Step: "a"},
				{Race: []program.Node{{Step: "b", Results: 2}, {Sleep: 2 * time.Second}}, As: "w"},
				{If: "w", Then: []program.Node{{Step: "c"}}, Else: []program.Node{{Pool: 2, N: 3, Step: "d"}}},
			}},
			{Step: "e"},
		}},
		{Step: "f"},
	},
}

// carryLoop is the program of model/program's
// TestACarriedReadTakesThePayloadALostRaceWouldHaveLost: a hook read raced
// against an hour's sleep three times, a step when the read won; carry,
// the read is carried.
func carryLoop(carry bool) []program.Node {
	return []program.Node{
		{Hook: "h"},
		{Loop: 3, Do: []program.Node{
			{Race: []program.Node{{Receive: "h", Carry: carry}, {Sleep: time.Hour}}, As: "got"},
			{If: "got", Then: []program.Node{{Step: "x"}}},
		}},
	}
}

// uncarried is prog with every receive a plain one.
func uncarried(prog []program.Node) []program.Node {
	out := slices.Clone(prog)
	for i := range out {
		n := &out[i]
		n.Carry = false
		for _, kids := range []*[]program.Node{&n.All, &n.Race, &n.Seq, &n.Then, &n.Else, &n.Do} {
			if *kids != nil {
				*kids = uncarried(*kids)
			}
		}
	}
	return out
}

func stormBranches(n int) []program.Node {
	out := make([]program.Node, n)
	for i := range out {
		label := "won" + strconv.Itoa(i)
		out[i] = program.Node{Seq: []program.Node{
			{Race: []program.Node{{Step: "settle"}, {Sleep: time.Second}}, As: label},
			{If: label, Then: []program.Node{{Step: "extra"}}, Else: []program.Node{{Step: "recheck"}}},
		}}
	}
	return out
}

// corpusCase is a log of one of corpusPrograms, as saved under
// testdata/replay when a replay disagreed.
type corpusCase struct {
	Program string        `json:"program"`
	Events  []ReplayEvent `json:"events"`
	// What each side said when it was saved (for the reader; the test
	// replays the log again).
	Simlab string `json:"simlab,omitempty"`
	Core   string `json:"core,omitempty"`
	Real   string `json:"real,omitempty"`
}

// drawLog draws a log of program p as runs write it, with stale writers and
// edits. A hook is created with the token the writer's replay drew for it
// (a stale writer's may be another's), or refused (hook_conflict: another
// run holds its token); once created it receives payloads whenever the
// outside sends them, awaited or not, and a hook the program disposed of
// gets its hook_disposed.
func drawLog(t *rapid.T, p *program.Compiled, names []string, timed bool) []program.Event {
	log := []program.Event{program.E(program.RunCreated, -1), program.E(program.RunStarted, -1)}
	resumeAt := func(k int32) int64 { return 1000 * int64(k+1) }
	hasCreated := func(log []program.Event, kind program.EntityKind, k int32) bool {
		for _, e := range log {
			if e.Kind == kind && e.Ordinal == k && (e.Type == program.StepCreated || e.Type == program.WaitCreated || e.Type == program.HookCreated) {
				return true
			}
		}
		return false
	}
	hasDisposed := func(log []program.Event, k int32) bool {
		return slices.ContainsFunc(log, func(e program.Event) bool { return e.Type == program.HookDisposed && e.Ordinal == k })
	}
	hookCreated := func(k, token int32) program.Event {
		e := program.E(program.HookCreated, k)
		e.Token = token
		return e
	}
	steps := rapid.IntRange(0, 40).Draw(t, "steps")
	for range steps {
		o := program.Replay(p, log)
		if o.Status != program.Suspended || len(o.Pending) == 0 {
			break
		}
		pe := o.Pending[rapid.IntRange(0, len(o.Pending)-1).Draw(t, "entity")]
		k := pe.Ordinal
		switch act := rapid.IntRange(0, 9).Draw(t, "act"); {
		case act == 0 || !hasCreated(log, pe.Kind, k):
			if hasCreated(log, pe.Kind, k) {
				continue
			}
			switch {
			case pe.Kind == program.EntityWait:
				e := program.E(program.WaitCreated, k)
				e.ResumeAt = resumeAt(k)
				log = append(log, e)
			case pe.Kind == program.EntityHook && rapid.IntRange(0, 9).Draw(t, "conflict") == 0:
				e := program.E(program.HookConflict, k)
				e.Token = pe.Token
				log = append(log, e)
			case pe.Kind == program.EntityHook:
				log = append(log, hookCreated(k, pe.Token))
			default:
				log = append(log, program.E(program.StepCreated, k).Named(pe.Name))
			}
		case pe.Kind == program.EntityHook && act != 3:
			if pe.Dispose && rapid.Bool().Draw(t, "dispose") {
				log = append(log, program.E(program.HookDisposed, k))
			} else {
				log = append(log, program.E(program.HookReceived, k))
			}
		case pe.Kind == program.EntityWait:
			e := program.E(program.WaitCompleted, k)
			if rapid.Bool().Draw(t, "resumeAt") {
				e.ResumeAt = resumeAt(k)
			}
			log = append(log, e)
		case act <= 2:
			log = append(log, program.E(program.StepStarted, k).Named(pe.Name))
		case act == 3:
			// A stale writer: a replay of an earlier prefix writes the
			// creates its view lacks that no earlier writer made.
			prefix := rapid.IntRange(2, len(log)).Draw(t, "prefix")
			stale := program.Replay(p, log[:prefix])
			if stale.Status != program.Suspended {
				continue
			}
			for _, sp := range stale.Pending {
				if sp.Kind == program.EntityHook && sp.Dispose && hasCreated(log, sp.Kind, sp.Ordinal) && !hasDisposed(log, sp.Ordinal) {
					log = append(log, program.E(program.HookDisposed, sp.Ordinal))
					continue
				}
				if sp.Created || hasCreated(log, sp.Kind, sp.Ordinal) {
					continue
				}
				if sp.Kind == program.EntityHook {
					log = append(log, hookCreated(sp.Ordinal, sp.Token))
				} else if sp.Kind == program.EntityWait {
					e := program.E(program.WaitCreated, sp.Ordinal)
					e.ResumeAt = resumeAt(sp.Ordinal)
					log = append(log, e)
				} else {
					log = append(log, program.E(program.StepCreated, sp.Ordinal).Named(sp.Name))
				}
			}
		case act == 4 && rapid.IntRange(0, 9).Draw(t, "fail") == 0:
			log = append(log, program.E(program.StepFailed, k).Named(pe.Name))
		case act == 5:
			log = append(log, program.E(program.StepRetrying, k).Named(pe.Name))
		default:
			e := program.E(program.StepCompleted, k).Named(pe.Name)
			e.Result = 1
			if n := p.Results(pe.Node); n > 0 {
				e.Result = int64(rapid.IntRange(0, n-1).Draw(t, "result"))
			}
			log = append(log, e)
		}
	}
	if timed {
		// When each event was written: in log order, 0 to 800 ms apart.
		at := int64(0)
		for i := range log {
			at += int64(rapid.IntRange(0, 800).Draw(t, "gap"))
			log[i].CreatedMS = at
		}
	}
	edits := rapid.IntRange(0, 2).Draw(t, "edits")
	for range edits {
		if len(log) < 3 {
			break
		}
		i := rapid.IntRange(2, len(log)-1).Draw(t, "at")
		switch rapid.IntRange(0, 6).Draw(t, "edit") {
		case 0:
			log = slices.Delete(log, i, i+1)
		case 1:
			log = slices.Insert(log, i, log[i])
		case 2:
			j := rapid.IntRange(2, len(log)-1).Draw(t, "to")
			e := log[i]
			log = slices.Insert(slices.Delete(log, i, i+1), min(j, len(log)-1), e)
		case 3:
			if log[i].Kind == program.EntityStep {
				log[i].Name = names[rapid.IntRange(0, len(names)-1).Draw(t, "name")]
			}
		case 4:
			if log[i].Kind != program.EntityNone {
				log[i].Ordinal = max(0, log[i].Ordinal+int32(rapid.IntRange(-1, 1).Draw(t, "shift")))
			}
		case 5:
			log = slices.Insert(log, i, program.E(program.RunCompleted, -1))
		case 6:
			// A wait completed out of band (the API that force-completes
			// pending waits), earlier than the program reaches it.
			var waits []int32
			for _, e := range log {
				if e.Type == program.WaitCreated {
					waits = append(waits, e.Ordinal)
				}
			}
			if len(waits) > 0 {
				w := waits[rapid.IntRange(0, len(waits)-1).Draw(t, "wait")]
				log = slices.Insert(log, i, program.E(program.WaitCompleted, w))
			}
		}
	}
	return log
}

func corpusSize(t *testing.T) int {
	if v := os.Getenv("SIMLAB_REPLAY_CORPUS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SIMLAB_REPLAY_CORPUS=%q: want a positive number of logs per program and core", v)
		}
		return n
	}
	return 25
}

var saveReplayCases = flag.Bool("save-replay-cases", false, "write a disagreeing log of TestOfflineReplayCorpus into testdata/replay (the corpus replays those first)")

// offlineReplayers starts one OfflineReplayer per pinned core (compiling
// the corpus programs with each core's own builders); the test stops them.
func offlineReplayers(t *testing.T) []*OfflineReplayer {
	t.Helper()
	r := prepared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out []*OfflineReplayer
	for _, c := range Cores {
		o, err := r.OfflineReplayer(ctx, c, corpusPrograms)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { o.Close() })
		out = append(out, o)
	}
	return out
}

func TestOfflineReplayCorpus(t *testing.T) {
	replayers := offlineReplayers(t)
	compiled := map[string]*program.Compiled{}
	names := map[string][]string{}
	for name, prog := range corpusPrograms {
		compiled[name] = program.MustCompile(prog)
		names[name] = program.StepNames(prog)
	}
	// The saved disagreements first: each must agree now.
	saved, _ := filepath.Glob(filepath.Join("testdata", "replay", "*.json"))
	for _, path := range saved {
		c := readCorpusCase(t, path)
		p, ok := compiled[c.Program]
		if !ok {
			t.Fatalf("%s: program %q is not one of the corpus's", path, c.Program)
		}
		log, err := ProgramEvents(c.Events)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, o := range replayers {
			compareReplay(t, o, c.Program, p, log, path)
		}
	}
	n := corpusSize(t)
	// rapid's own knobs are flags: the count of logs (unless the command
	// line sets it), and no fail file written into the checkout (a
	// disagreement is saved by saveCase).
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	restore := func(name string) {
		old := flag.Lookup(name).Value.String()
		t.Cleanup(func() { _ = flag.Set(name, old) })
	}
	restore("rapid.checks")
	restore("rapid.nofailfile")
	if !set {
		_ = flag.Set("rapid.checks", strconv.Itoa(n))
	}
	_ = flag.Set("rapid.nofailfile", "true")
	progNames := make([]string, 0, len(corpusPrograms))
	for name := range corpusPrograms {
		progNames = append(progNames, name)
	}
	slices.Sort(progNames)
	counts := map[string]int{}
	for _, o := range replayers {
		for _, name := range progNames {
			t.Run(o.Core.Version+"/"+name, func(t *testing.T) {
				rapid.Check(t, func(rt *rapid.T) {
					log := drawLog(rt, compiled[name], names[name], compiled[name].ReadsClock())
					sim := o.Core.Replay(compiled[name], log)
					real, err := o.Replay(name, log)
					if err != nil {
						rt.Fatal(err)
					}
					counts[sim.Status.String()]++
					if knownHang(compiled[name], log, sim, real) {
						counts["known: core hung"]++
						return
					}
					if !real.Agrees(sim) {
						path := saveCase(t, name, log, sim, o.Core.Version, real)
						rt.Fatalf("program %s on core %s: simlab %s, core %s\nlog:\n%s\nsaved: %s", name, o.Core.Version, sim, real, logString(log), path)
					}
				})
			})
		}
	}
	t.Logf("%d logs per program and core, %d programs, %d cores: %v", n, len(progNames), len(replayers), counts)
}

func compareReplay(t *testing.T, o *OfflineReplayer, name string, p *program.Compiled, log []program.Event, what string) {
	t.Helper()
	sim := o.Core.Replay(p, log)
	real, err := o.Replay(name, log)
	if err != nil {
		t.Fatal(err)
	}
	if !real.Agrees(sim) && !knownHang(p, log, sim, real) {
		t.Errorf("%s, program %s on core %s: simlab %s, core %s\nlog:\n%s", what, name, o.Core.Version, sim, real, logString(log))
	}
}

func readCorpusCase(t *testing.T, path string) corpusCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c corpusCase
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

// saveCase writes a disagreeing log where a reader can keep it: under
// testdata/replay with -save-replay-cases, else in the test's temp dir.
func saveCase(t *testing.T, name string, log []program.Event, sim program.Outcome, core string, real RealReplay) string {
	dir := t.TempDir()
	if *saveReplayCases {
		dir = filepath.Join("testdata", "replay")
		_ = os.MkdirAll(dir, 0o755)
	}
	b, _ := json.MarshalIndent(corpusCase{Program: name, Events: ReplayEvents(log), Simlab: sim.String(), Core: core, Real: real.String()}, "", " ")
	path := filepath.Join(dir, fmt.Sprintf("%s-%d.json", name, len(log)))
	_ = os.WriteFile(path, append(b, '\n'), 0o644)
	return path
}

func logString(log []program.Event) string {
	var b strings.Builder
	for i, e := range log {
		fmt.Fprintf(&b, "  %2d %s\n", i, e)
	}
	return b.String()
}
