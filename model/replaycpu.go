package model

import (
	"time"

	"github.com/simlab/simlab/sim"
)

// replayCPU shares workflow.replay_cpus processors among every replay in
// progress (processor sharing: with n replays on c processors each
// advances at min(1, c/n) of full speed), as the real harness's one Node
// process runs every delivery's replay on its one thread. With 0 CPUs
// (the default) each replay has a processor of its own, as production's
// function instances do, and replays are not tracked here.
type replayCPU struct {
	cpus    int64
	active  []cpuWork
	last    sim.Time // when active's work was last advanced
	pending uint64   // generation of the one scheduled finish (stale ones are ignored)
	done    []int32  // (scratch) the procs finishing now
}

// cpuWork is one replay's work left, in nanoseconds of a processor.
type cpuWork struct {
	p    int32
	left int64
}

// rate is how much of a processor each active replay gets, as num/den.
func (c *replayCPU) rate() (num, den int64) {
	if n := int64(len(c.active)); n > c.cpus {
		return c.cpus, n
	}
	return 1, 1
}

// advance takes the work done since last off every active replay.
func (c *replayCPU) advance(now sim.Time) {
	if len(c.active) > 0 {
		num, den := c.rate()
		done := int64(now-c.last) * num / den
		for i := range c.active {
			c.active[i].left -= done
		}
	}
	c.last = now
}

// replayShared starts proc p's replay of cost on the shared processors.
func (e *engine) replayShared(p int32, cost int64) {
	c := &e.replayCPU
	c.cpus = int64(e.sc.Workflow.ReplayCPUs)
	c.advance(e.k.Now())
	c.active = append(c.active, cpuWork{p: p, left: cost})
	e.scheduleReplayFinish()
}

// scheduleReplayFinish schedules when the replay with the least work left
// finishes at today's rate; any earlier schedule goes stale.
func (e *engine) scheduleReplayFinish() {
	c := &e.replayCPU
	c.pending++
	if len(c.active) == 0 {
		return
	}
	least := c.active[0].left
	for _, w := range c.active[1:] {
		least = min(least, w.left)
	}
	num, den := c.rate()
	dt := (max(least, 0)*den + num - 1) / num // ceil: the work is done by then
	e.k.After(time.Duration(dt), evReplayFinish, 0, c.pending)
}

// replayFinished is a scheduled finish: the replays whose work is done
// go on (their procs resume), and the next finish is scheduled.
func (e *engine) replayFinished(gen uint64) {
	c := &e.replayCPU
	if gen != c.pending {
		return // a start or finish since rescheduled it
	}
	e.active()
	c.advance(e.k.Now())
	c.done = c.done[:0]
	keep := c.active[:0]
	for _, w := range c.active {
		if w.left <= 0 {
			c.done = append(c.done, w.p)
		} else {
			keep = append(keep, w)
		}
	}
	c.active = keep
	e.scheduleReplayFinish()
	for _, p := range c.done {
		e.resume(p)
	}
}
