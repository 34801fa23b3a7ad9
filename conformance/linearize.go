package conformance

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/realworld"
)

// This file checks a concurrent history for linearizability with porcupine:
// is there one order of its calls, each placed between its invocation and
// its response, in which model/world (configured as the World, applying one
// call at a time) answers every call as the real World did and ends every
// batch with the rows and logs the real World read back? The history is
// partitioned by run: calls on different runs never meet in the store.

// linInput is one operation of the history as porcupine sees it: a call of a
// batch, or (Index < 0) the read-back of one run after a batch.
type linInput struct {
	Batch int
	Index int
	Call  realworld.ConcCall
	Run   int
	Steps []int // read-backs: the steps read
}

// linOutput is what the real World answered: a reply or a read-back.
type linOutput struct {
	Reply    realworld.Reply
	Readback realworld.Readback
}

// specState is one run's state in the sequential specification: a model
// store holding that run alone (as run 0). States are never changed in place:
// a step that changes the store works on a clone.
type specState struct {
	s   *world.Store
	key string
}

func newSpecState(w realworld.World) *specState {
	s := world.NewFor(model.StoreRules(w.Profile), w.Fence)
	s.CreateRun(modelNow, 0, 7, -1)
	return &specState{s: s}
}

// stateKey is a canonical text of the run's rows and log: equal keys, equal
// states (porcupine's cache compares states with it).
func (st *specState) stateKey() string {
	if st.key == "" {
		var b strings.Builder
		b.WriteString(st.s.Get(0).Status.String())
		for i := 0; ; i++ {
			row := st.s.Step(0, world.StepID(i))
			if !row.Exists {
				if i >= 64 {
					break
				}
				continue
			}
			fmt.Fprintf(&b, " s%d=%s#%d", i, row.Status, row.Attempt)
			if row.RetryAfter != 0 {
				fmt.Fprintf(&b, "@%d", row.RetryAfter)
			}
		}
		b.WriteString(" [" + strings.Join(modelLog(st.s), ",") + "]")
		st.key = b.String()
	}
	return st.key
}

// modelLog is run 0's log in the read-back's words.
func modelLog(s *world.Store) []string {
	log := s.Log(0)
	out := make([]string, len(log))
	for i, e := range log {
		out[i] = logEntry(e.Type, int(e.Step))
	}
	return out
}

func logEntry(t world.EventType, step int) string {
	if t.IsStepEvent() {
		return fmt.Sprintf("%s:s%d", t, step)
	}
	return t.String()
}

// modelEvent is a conformance call as a model event on run 0.
func modelEvent(c realworld.Call) world.Event {
	ev := world.Event{Type: modelTypes[c.Type], Run: 0, Step: world.NoStep, Lazy: c.Lazy}
	if realworld.StepEvent(c.Type) {
		ev.Step = world.StepID(c.Step)
	}
	if ev.Type == world.EvStepRetrying {
		ev.RetryAfter = modelNow.Add(time.Duration(c.RetryAfterHours) * time.Hour)
	}
	return ev
}

// stepRow is a model step row in the read-back's words.
func stepRow(s *world.Store, step int) realworld.StepRow {
	row := s.Step(0, world.StepID(step))
	if !row.Exists {
		return realworld.StepRow{}
	}
	return realworld.StepRow{Step: row.Status.String(), Attempt: int(row.Attempt)}
}

// specStep applies one operation to a state and says whether the model
// answers it as the real World did.
func specStep(state, input, output any) (bool, any) {
	st := state.(*specState)
	in := input.(linInput)
	out := output.(linOutput)
	if in.Index < 0 {
		return readbackMatches(st.s, in.Steps, out.Readback), st
	}
	c := in.Call
	switch c.Op {
	case realworld.OpGetRun:
		return st.s.Get(0).Status.String() == out.Reply.Run, st
	case realworld.OpGetStep:
		row := stepRow(st.s, c.Step)
		return row.Step == out.Reply.Step && row.Attempt == out.Reply.Attempt, st
	case realworld.OpListEvents:
		return slices.Equal(modelLog(st.s), realworld.NormalizeLog(out.Reply.Log)), st
	}
	next := st.s.Clone()
	res, _, _ := next.Apply(modelNow, modelEvent(c.Call))
	if res.String() != out.Reply.Res {
		return false, st
	}
	if res != world.OK {
		return true, st
	}
	return true, &specState{s: next}
}

func readbackMatches(s *world.Store, steps []int, rb realworld.Readback) bool {
	if s.Get(0).Status.String() != rb.Run || len(steps) != len(rb.Steps) {
		return false
	}
	for i, step := range steps {
		if stepRow(s, step) != rb.Steps[i] {
			return false
		}
	}
	return slices.Equal(modelLog(s), realworld.NormalizeLog(rb.Log))
}

// linModel is the porcupine model of World w.
func linModel(w realworld.World) porcupine.Model {
	return porcupine.Model{
		Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
			var parts [][]porcupine.Operation
			byRun := map[int]int{}
			for _, op := range ops {
				r := op.Input.(linInput).Run
				i, ok := byRun[r]
				if !ok {
					i = len(parts)
					byRun[r] = i
					parts = append(parts, nil)
				}
				parts[i] = append(parts[i], op)
			}
			return parts
		},
		Init: func() any { return newSpecState(w) },
		Step: specStep,
		Equal: func(a, b any) bool {
			return a.(*specState).stateKey() == b.(*specState).stateKey()
		},
		Hash: func(a any) uint64 {
			h := fnv.New64a()
			h.Write([]byte(a.(*specState).stateKey()))
			return h.Sum64()
		},
		DescribeOperation: describeOperation,
		DescribeState: func(a any) string {
			return a.(*specState).stateKey()
		},
	}
}

func describeOperation(input, output any) string {
	in := input.(linInput)
	out := output.(linOutput)
	if in.Index < 0 {
		return fmt.Sprintf("read-back after batch %d: %s", in.Batch, out.Readback)
	}
	return fmt.Sprintf("%s → %s", in.Call, realworld.ReplyString(in.Call, out.Reply))
}

// Operations turns a real history into porcupine operations: every call of
// every batch on its own client (its index in the batch), and each run's
// read-back after a batch on a client of its own after them.
func Operations(h realworld.History, results []realworld.BatchResult) []porcupine.Operation {
	width := 0
	for _, b := range h.Batches {
		width = max(width, len(b.Calls))
	}
	steps := h.Steps()
	var ops []porcupine.Operation
	for bi, res := range results {
		b := h.Batches[bi]
		for i, rep := range res.Replies {
			ops = append(ops, porcupine.Operation{
				ClientId: i,
				Input:    linInput{Batch: bi, Index: i, Call: b.Calls[i], Run: b.Calls[i].Run},
				Call:     rep.T0,
				Output:   linOutput{Reply: rep},
				Return:   rep.T1,
			})
		}
		for run, rb := range res.Readbacks {
			ops = append(ops, porcupine.Operation{
				ClientId: width + run,
				Input:    linInput{Batch: bi, Index: -1, Run: run, Steps: steps[run]},
				Call:     rb.T0,
				Output:   linOutput{Readback: rb},
				Return:   rb.T1,
			})
		}
	}
	return ops
}

// Linearization is porcupine's verdict on one history.
type Linearization struct {
	Result porcupine.CheckResult // Ok, Illegal or Unknown (timed out: never a pass)
	Info   porcupine.LinearizationInfo
	Model  porcupine.Model
}

// CheckLinearizable checks a real history of World w against model/world as
// its sequential specification, within timeout.
func CheckLinearizable(w realworld.World, h realworld.History, results []realworld.BatchResult, timeout time.Duration) Linearization {
	m := linModel(w)
	res, info := porcupine.CheckOperationsVerbose(m, Operations(h, results), timeout)
	return Linearization{Result: res, Info: info, Model: m}
}

// Visualize writes porcupine's HTML timeline of the history to path.
func (l Linearization) Visualize(path string) error {
	return porcupine.VisualizePath(l.Model, l.Info, path)
}
