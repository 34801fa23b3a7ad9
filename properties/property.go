package properties

import (
	"fmt"
	"sort"

	"github.com/simlab/simlab/model"
	"github.com/simlab/simlab/model/world"
	"github.com/simlab/simlab/sim"
)

// Evidence is one event that proves a violation, with its virtual time.
type Evidence struct {
	At   sim.Time
	Text string
}

// Violation is one broken invariant in one run, with the events that prove it.
type Violation struct {
	Property string
	Run      world.RunID // -1 when not about one run
	Message  string
	Evidence []Evidence
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: %s: %s", v.Property, model.RunName(v.Run), v.Message)
}

// Property is one invariant: a stable name, one line of what it says, and a
// plain function from a History to the violations it proves. Properties read
// a History recorded with model.Options{Record: true} and never change it.
type Property struct {
	Name  string
	Desc  string
	Check func(h *model.History) []Violation
	// obs is the same check over an already indexed History, so that
	// Check (the function below) indexes a History once for all properties.
	obs func(o *observed) []Violation
}

// onObserved makes a property whose check reads the observer's index.
func onObserved(name, desc string, f func(o *observed) []Violation) Property {
	return Property{Name: name, Desc: desc, obs: f, Check: func(h *model.History) []Violation { return f(observe(h)) }}
}

func plain(name, desc string, f func(h *model.History) []Violation) Property {
	return Property{Name: name, Desc: desc, Check: f}
}

var all = []Property{
	plain("no-start-on-terminal", "no step_started is accepted, and no step body begins, after the run's terminal event", noStartOnTerminal),
	onObserved("one-lazy-fetch-per-fanout", "a fan-out continued by a queued step's consumer gets exactly one lazy runs.get; one the orchestrator continues gets none", oneLazyFetchPerFanout),
	onObserved("no-prologue-fetch-with-run-context", "a v2 consumer handling a message that carries runContext makes no runs.get before its claim", noPrologueFetchWithRunContext),
	onObserved("liveness", "once faults stop and the queue drains, every run is terminal and every finished fan-out was continued", liveness),
	onObserved("ended-run-reads-ended", "once the queue drains, a run whose terminal event was accepted reads back terminal: no write moved its row back to live", endedRunReadsEnded),
	onObserved("unique-step-created", "at most one step_created is accepted per step", uniqueStepCreated),
	onObserved("single-terminal-event", "at most one terminal event is accepted per step and per run", singleTerminalEvent),
	plain("readable-run-row", "every runs.get gives the run's row back: no write leaves a row whose fields do not fit its status", readableRunRow),
	onObserved("one-body-at-a-time", "a step's body never runs in two deliveries at once", oneBodyAtATime),
	onObserved("attempt-count", "a step's attempt equals the number of its accepted step_started events", attemptCount),
	onObserved("run-context-matches-run", "every runContext a message carries equals the run's immutable fields", runContextMatchesRun),
	onObserved("run-fails-for-a-reason", "a run fails only by a write whose own cause an observer sees: a step failed for good in the log it loaded, a message out of deployment re-routes, or one retired at the delivery cap", runFailsForAReason),
	onObserved("reroute-preserves-message", "a re-routed message equals the original but for its retry counter, and is sent to the run's deployment", reroutePreservesMessage),
	onObserved("pinned-deployment", "a run's steps and replays execute only on the deployment the run is pinned to", pinnedDeployment),
	onObserved("producer-stamps-run-context", "every step message a v2 producer publishes, at every dispatch site, carries the runContext of the run row it read", producerStampsRunContext),
	onObserved("no-work-after-visible-end", "an actor told the run ended (by a read, a log or a refused write) writes, runs and publishes nothing more", noWorkAfterVisibleEnd),
	onObserved("bounded-work-after-end", "an actor begins at most budget.work_after_end reads, listings, replays and step bodies after its run's end was accepted (default 2)", boundedWorkAfterEnd),
	onObserved("step-fails-for-a-reason", "a step recorded failed shows a cause an observer sees: its body failed with its retries spent or fatally, or its message was retired", stepFailsForAReason),
	onObserved("replayable-log", "a fresh replay of every run's log, up to its end, consumes it as the real runtime's replay would: no run the runtime would fail CORRUPTED_EVENT_LOG", replayableLog),
	onObserved("recovery-in-band", "a queued step whose step_created never landed is created within the delivery that finds it missing", recoveryInBand),
}

// All returns every property in a stable order.
func All() []Property { return append([]Property(nil), all...) }

// Names lists the properties' names.
func Names() []string {
	out := make([]string, len(all))
	for i, p := range all {
		out[i] = p.Name
	}
	return out
}

// ByName finds a property.
func ByName(name string) (Property, bool) {
	for _, p := range all {
		if p.Name == name {
			return p, true
		}
	}
	return Property{}, false
}

// Check runs the properties over h and returns their violations, grouped by
// property in the order given and by virtual time within one.
func Check(h *model.History, props []Property) []Violation {
	var c Checker
	return c.Run(h, props)
}

// Checker is Check with scratch space kept from one History to the next: a
// sweep's worker checks seed after seed without allocating an index each.
// Its zero value is ready to use.
type Checker struct {
	obs observed
}

// Run is Check, reusing the Checker's scratch space.
func (ck *Checker) Run(h *model.History, props []Property) []Violation {
	var out []Violation
	indexed := false
	for _, p := range props {
		var vs []Violation
		if p.obs != nil {
			if !indexed {
				ck.obs.index(h)
				indexed = true
			}
			vs = p.obs(&ck.obs)
		} else {
			vs = p.Check(h)
		}
		for i := range vs {
			vs[i].Property = p.Name
			sort.SliceStable(vs[i].Evidence, func(a, b int) bool { return vs[i].Evidence[a].At < vs[i].Evidence[b].At })
		}
		out = append(out, vs...)
	}
	// The index refers to h, which the caller may reuse: it keeps only
	// its room.
	ck.obs.h = nil
	return out
}
