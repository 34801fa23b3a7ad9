package flow

import (
	"fmt"
	"slices"
	"time"

	"github.com/simlab/simlab/model/program"
)

// Storm is the shape the engine's team's event-log-race lane runs
// (vercel/workflow #3147, #3172): branches branches at once, each, for
// rounds rounds, racing a step against a sleep watchdog and running one
// more step when the step won; then a final step. How many entities a replay mints depends on
// which races it saw won, so concurrent replays of different logs may
// number them differently.
func Storm(branches, rounds int, watchdog time.Duration) []program.Node {
	all := make([]program.Node, branches)
	for i := range all {
		won := fmt.Sprintf("won%d", i)
		all[i] = program.Node{Loop: rounds, Do: []program.Node{
			{Race: []program.Node{{Step: "work"}, {Sleep: watchdog}}, As: won},
			{If: won, Then: []program.Node{{Step: "extra"}}},
		}}
	}
	return []program.Node{{All: all}, {Step: "final"}}
}

// Control is the storm's control: the same choice of how many entities to
// mint from what a replay saw (a step's result decides whether one more
// step runs), but one waker at a time (each round's step, then its sleep),
// so no two invocations write at once. No view of the log corrupts it.
func Control(rounds int, pause time.Duration) []program.Node {
	return []program.Node{
		{Loop: rounds, Do: []program.Node{
			{Step: "work", Results: 2, As: "ok"},
			{If: "ok", Then: []program.Node{{Step: "extra"}}},
			{Sleep: pause},
		}},
		{Step: "final"},
	}
}

// InlineHang is the shape of the team's open production report
// (vercel/workflow #4199): a fan-out exactly width wide, run with
// max_inline = width so that one invocation runs the whole batch itself,
// whose last task hangs until the platform's time limit kills the
// invocation, hangs times (its first hangs attempts never return), then a
// final step. The production marker of its corrupted runs is a step
// started more than once, never retried and never finished
// (Result.HungSteps).
func InlineHang(width, hangs int) []program.Node {
	all := make([]program.Node, width)
	for i := range all {
		all[i] = program.Node{Step: "task"}
	}
	all[width-1] = program.Node{Step: "hang", Hangs: hangs}
	return []program.Node{{All: all}, {Step: "final"}}
}

// ClockStorm is a storm that branches on Date.now(): branches branches at
// once, each, for rounds rounds, running a step and then, once the run's
// clock is deadline past the workflow's start, a quick step, else an
// extra one (a deadline a workflow checks between steps). Which step a
// round mints depends on the time the replay reads after the step: on
// cores to beta.53 the time of the last event of the replay's pass
// (program.ClockPerPass), so two replays of different logs may read
// different times at the same point.
func ClockStorm(branches, rounds int, deadline time.Duration) []program.Node {
	all := make([]program.Node, branches)
	for i := range all {
		late := fmt.Sprintf("late%d", i)
		all[i] = program.Node{Loop: rounds, Do: []program.Node{
			{Step: "work"},
			{Clock: deadline, As: late},
			{If: late, Then: []program.Node{{Step: "quick"}}, Else: []program.Node{{Step: "extra"}}},
		}}
	}
	return []program.Node{{All: all}, {Step: "final"}}
}

// HookStorm is the storm with hooks (the team's hook-storm, vercel/workflow
// #3147, as simlab reads its description): branches branches at once, each
// creating its own hook and, for rounds rounds, racing a read of it
// against a watchdog sleep, one more step when the hook won; then each
// disposes its hook, and a final step. An outside driver resumes every
// live hook (HookStormResumes): each payload wakes an invocation of its
// own, so a round's resumes replay the run at once.
func HookStorm(branches, rounds int, watchdog time.Duration) []program.Node {
	all := make([]program.Node, branches)
	for i := range all {
		h, won := fmt.Sprintf("h%d", i), fmt.Sprintf("won%d", i)
		all[i] = program.Node{Seq: []program.Node{
			{Hook: h},
			{Loop: rounds, Do: []program.Node{
				{Race: []program.Node{{Receive: h}, {Sleep: watchdog}}, As: won},
				{If: won, Then: []program.Node{{Step: "extra"}}},
			}},
			{Dispose: h},
		}}
	}
	return []program.Node{{All: all}, {Step: "final"}}
}

// HookStormResumes is the hook storm's driver: every 20ms for 3s, one
// live hook drawn and resumed, so each hook's payloads come about as often
// as its watchdog fires and the two race.
var HookStormResumes = Resumes{Every: 20 * time.Millisecond, Count: 150, One: true}

// WakeLoop is the team's wake-loop (vercel/workflow #4017, the shape of a
// production run on core beta.46 that failed CORRUPTED_EVENT_LOG, "Replay
// could not consume event: eventType=wait_created"): one sequential loop of
// cycles cycles, each re-arming a heartbeat sleep after a verify step and
// racing it against a read of one hook carried across heartbeat wins (the
// hook's iterator kept until it settles), then a four-step cycle (verify,
// drain, verify, sync), and another back to back when drain's result is 0
// (one in four). Nothing fans out: the concurrency is the driver's
// (WakeLoopResumes): wakes at a short cadence, in bursts, and aimed at the
// heartbeat's deadline so a hook_received lands next to a wait_completed.
func WakeLoop(cycles int, heartbeat time.Duration) []program.Node {
	cycle := []program.Node{{Step: "verify"}, {Step: "drain", Results: 4, As: "more"}, {Step: "verify"}, {Step: "sync"}}
	body := []program.Node{
		{Step: "verify"},
		{Race: []program.Node{{Receive: "wake", Carry: true}, {Sleep: heartbeat}}},
	}
	body = append(body, cycle...)
	body = append(body, program.Node{If: "more", Not: true, Then: slices.Clone(cycle)})
	return []program.Node{{Hook: "wake"}, {Loop: cycles, Do: body}, {Dispose: "wake"}}
}

// WakeLoopResumes is the wake loop's driver: a wake every 150ms for 6s,
// two at once spread over 5ms, and one at each heartbeat's deadline.
var WakeLoopResumes = Resumes{Every: 150 * time.Millisecond, Count: 40, Burst: 2, Spread: 5 * time.Millisecond, AtDeadlines: true}

// HookLoop is a hook read in a loop of rounds rounds, each read raced
// against a watchdog sleep, one more step when the payload won; then the
// hook disposed and a final step: the smallest shape with a hook that a
// driver and a watchdog both wake.
func HookLoop(rounds int, watchdog time.Duration) []program.Node {
	return []program.Node{
		{Hook: "h"},
		{Loop: rounds, Do: []program.Node{
			{Race: []program.Node{{Receive: "h"}, {Sleep: watchdog}}, As: "got"},
			{If: "got", Then: []program.Node{{Step: "extra"}}},
		}},
		{Dispose: "h"},
		{Step: "final"},
	}
}
