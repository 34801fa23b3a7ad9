package program

import (
	"strconv"
	"testing"
	"time"
)

// storm is the team's step-storm shape at width n: each branch races a
// step against a sleep and runs one more step or another, then a final
// step; stormLog is a whole run of it in which every step won its race.
func storm(n int) *Compiled {
	branches := make([]Node, n)
	for i := range branches {
		label := "won" + strconv.Itoa(i)
		branches[i] = Node{Seq: []Node{
			{Race: []Node{{Step: "settle"}, {Sleep: time.Second}}, As: label},
			{If: label, Then: []Node{{Step: "extra"}}, Else: []Node{{Step: "recheck"}}},
		}}
	}
	return MustCompile([]Node{{All: branches}, {Step: "final"}})
}

func stormLog(p *Compiled) []Event {
	log := []Event{E(RunCreated, -1), E(RunStarted, -1)}
	for {
		o := Replay(p, log)
		if o.Status != Suspended {
			return log
		}
		for _, pe := range o.Pending {
			if pe.Kind == EntityStep {
				e := E(StepCompleted, pe.Ordinal).Named(pe.Name)
				e.Result = 1
				log = append(log, E(StepCreated, pe.Ordinal).Named(pe.Name), E(StepStarted, pe.Ordinal).Named(pe.Name), e)
			} else if !pe.Created {
				w := E(WaitCreated, pe.Ordinal)
				w.ResumeAt = 1000
				log = append(log, w)
			}
		}
	}
}

// BenchmarkReplayStorm replays a whole 16-branch storm run: on a reused
// Replayer (what a check's worker would hold) and on a fresh one (Replay).
// go test ./model/program -run '^$' -bench ReplayStorm -benchmem
func BenchmarkReplayStorm(b *testing.B) {
	p := storm(16)
	log := stormLog(p)
	if o := Replay(p, log); o.Status != Completed {
		b.Fatalf("the storm log replays %s", o)
	}
	b.Run("reused", func(b *testing.B) {
		var r Replayer
		b.ReportAllocs()
		for b.Loop() {
			r.Replay(p, log)
		}
		b.ReportMetric(float64(len(log)), "events")
	})
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Replay(p, log)
		}
	})
}

// A reused Replayer allocates nothing once its tables have grown.
func TestReusedReplayerAllocatesNothing(t *testing.T) {
	p := storm(16)
	log := stormLog(p)
	var r Replayer
	r.Replay(p, log)
	if n := testing.AllocsPerRun(20, func() { r.Replay(p, log) }); n != 0 {
		t.Fatalf("%v allocations per replay of a %d-event log on a reused Replayer, want 0", n, len(log))
	}
}
