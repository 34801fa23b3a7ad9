// A cancel forced into the real World between a run's start's read and its
// write: the race "start-overwrites-cancel" of realworld/testdata/races.json,
// met by the real runtime instead of by the conformance driver.
//
// The runtime's first run_started of a run (from a delivery) and the harness's
// cancel of that run (the runtime's own Run#cancel, from outside any delivery)
// are the two calls of one schedule of realworld/node/gate.mjs, which
// holds each call at the start of each of its steps (world-local's own file
// I/O, tied to the call by an AsyncLocalStorage context opened here, around
// the real World call, by store.mjs) until the schedule's earlier steps are
// done. The schedule is the model's interleaving that produces the race
// (findings.StartCancelSchedule, computed on the Go side): run_started's read of
// the run file, then the cancel's read, write and publish, then run_started's
// write (the whole run file, built from its pending read) and publish.
//
// gate.mjs keeps one schedule armed at a time, so runs race one after
// another: a run's first run_started that arrives while another run's race
// is armed waits (before its first I/O) until that race has closed. A race
// closes when both calls have answered, or when the cancel settled without
// reaching the World (then its steps are given up, which lets the start go
// and shows in `broken`). Nothing here waits on a clock: gate.mjs lets a
// waiter go out of order only when no I/O is in flight and nothing happened
// for two turns of the event loop, and reports the step it broke.

import { closeGate, finishCall, instrumentLocal, newGate, runInCall } from '../realworld/node/gate.mjs';
import { delivery } from './store.mjs';

// createStartCancelRace arms the race for every run whose first run_started
// reaches the store. spec.schedule is [[call, step], ...] with call 0 the
// run_started and call 1 the cancel; cancel(runId) issues the cancel and
// returns its promise.
export function createStartCancelRace(spec, cancel, now) {
  if (!Array.isArray(spec?.schedule) || spec.schedule.length === 0) {
    throw new Error('race: start_cancel needs the schedule of the two calls (findings.StartCancelSchedule)');
  }
  instrumentLocal((ctx) => ctx.runId);
  const races = new Map(); // run -> race
  const created = new Map(); // run -> the client's run_created: settles when it has answered
  const reports = [];
  let turn = Promise.resolve(); // settles when the armed race closes

  const close = (race) => {
    if (race.closed) return;
    race.closed = true;
    closeGate(race.gate);
    race.report.broken = [...race.gate.broken];
    race.report.closed_at = now();
    race.done();
  };
  const settle = (race, call) => {
    if (race.finished[call]) return;
    race.finished[call] = true;
    finishCall(race.ctx[call]);
    if (race.finished[0] && race.finished[1]) close(race);
  };

  // arm opens the run's schedule and issues the cancel, out of the
  // delivery's context (store.mjs's and gate.mjs's), as a client would.
  const arm = (race) => {
    race.gate = newGate(spec.schedule, 2);
    race.ctx = [0, 1].map((call) => ({ gate: race.gate, call, op: 'event', type: call === 0 ? 'run_started' : 'run_cancelled', lazy: false, runId: race.run }));
    race.report.armed_at = now();
    const issued = delivery.exit(() => runInCall(undefined, () => Promise.resolve().then(() => cancel(race.run))));
    race.cancel = issued.then(
      () => { race.report.cancel = 'ok'; },
      (err) => { race.report.cancel = `${err?.name ?? 'Error'}: ${String(err?.message ?? err).slice(0, 300)}`; },
    ).finally(() => {
      // A cancel that never reached the World gives its steps up.
      if (!race.began[1]) race.report.cancel_missed_world = true;
      settle(race, 1);
    });
  };

  return {
    reports,
    // run makes World call rec (fn) as its call of a race, or plainly.
    async run(rec, fn) {
      if (rec.op !== 'events.create' || !rec.run) return fn();
      if (rec.event === 'run_created' && rec.delivery < 0 && !created.has(rec.run)) {
        const p = fn();
        created.set(rec.run, p.then(() => 'ok', (err) => err?.name ?? 'Error'));
        return p;
      }
      let race = races.get(rec.run);
      if (rec.event === 'run_started' && rec.delivery >= 0 && !race) {
        race = { run: rec.run, finished: [false, false], began: [false, false], closed: false, report: { run_id: rec.run } };
        races.set(rec.run, race);
        reports.push(race.report);
        const prev = turn;
        turn = new Promise((resolve) => { race.done = resolve; });
        race.report.queued_at = now();
        // The race is on a run that exists: start() writes run_created and
        // publishes the run's message side by side, and a run_started that
        // finds no run creates it (the resilient start), another path. So
        // the start waits for the client's run_created to answer.
        race.report.run_created = created.has(rec.run) ? await created.get(rec.run) : 'not seen';
        await prev; // the race armed before this one has closed
        arm(race);
        return call(race, 0, rec, fn);
      }
      if (race && !race.closed && rec.event === 'run_cancelled' && rec.delivery < 0 && !race.began[1]) {
        return call(race, 1, rec, fn);
      }
      return fn();
    },
  };

  async function call(race, i, rec, fn) {
    race.began[i] = true;
    rec.race = i === 0 ? 'start' : 'cancel';
    const key = i === 0 ? 'start_answer' : 'cancel_answer';
    try {
      const res = await runInCall(race.ctx[i], fn);
      race.report[key] = 'ok';
      if (i === 0) race.report.start_run_status = res?.run?.status;
      return res;
    } catch (err) {
      race.report[key] = err?.name ?? 'Error';
      throw err;
    } finally {
      settle(race, i);
    }
  }
}
