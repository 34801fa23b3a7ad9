// A gate in front of the real World: it holds chosen calls and releases them
// together, so a race the runtime meets by timing is met every time.
//
// Two gates, both keyed by run and both waiting on counts, never on time:
//
//   fan_in: N          hold every events.list a delivery makes on a run after
//                      that delivery's own accepted step_completed/step_failed,
//                      until the run has N of them; then release them all in
//                      one tick. Each such list is a fan-out's pending check,
//                      so every branch sees an empty pending set: every branch
//                      is a last completer.
//   run_completed: K   hold events.create(run_completed) on a run until K are
//                      held; then release them all in one tick, so the K writes
//                      reach the World side by side.
//
// A gate whose count can no longer be reached must not hang the run. The
// escape is quiescence: no message published and not yet delivered, no World
// call of a delivery being served, and every delivery in flight waiting on a
// held call (or on a pool slot). Then nothing can arrive any more; the gate
// releases what it holds and records an escape, which the caller reports as a
// failure. Quiescence is judged after two turns of the event loop with no
// change in between (setImmediate, not a timer): a delivery that is between
// two calls is in flight with nothing held, so it is never mistaken for idle.
//
// The same judgement, with nothing held, says when the runtime is done with
// its runs (quiet()): no delivery in flight or about to start, no message
// published and not yet delivered, no delivery's answer that brings its
// message back (an error, or timeoutSeconds). A run that never ends is then
// seen to be over without waiting on a clock.

const TERMINAL_STEP = new Set(['step_completed', 'step_failed']);

export function createGate(spec, now) {
  const fanIn = spec?.fan_in ?? 0;
  const wantCompleted = spec?.run_completed ?? 0;
  const stepEnds = new Map(); // run -> accepted terminal step writes
  const endedBy = new Set(); // `${delivery} ${run}`: that delivery wrote a step's end
  const held = { fan_in: new Map(), run_completed: new Map() }; // gate -> run -> [entry]
  const spent = { fan_in: new Set(), run_completed: new Set() };
  const releases = [];
  const escapes = [];

  // Liveness: what could still produce a call.
  const inFlight = new Set(); // delivery records
  let entering = 0; // handlers entered, delivery not yet registered
  const published = new Set(); // message ids published, not yet delivered
  const delivered = new Set();
  const live = new Set(); // World calls and publishes of deliveries, not answered
  let gen = 0;
  let checking = false;
  const quietWaiters = [];

  const touch = () => {
    gen++;
    if (checking) return;
    checking = true;
    const g = gen;
    setImmediate(() => setImmediate(() => {
      checking = false;
      if (gen !== g) return touch();
      if (quiescent()) escape();
      if (quietWaiters.length && idle()) for (const resolve of quietWaiters.splice(0)) resolve();
    }));
  };

  function idle() {
    if (entering > 0 || published.size > 0 || inFlight.size > 0) return false;
    for (const rec of live) if (rec.phase !== 'done') return false;
    return true;
  }

  const holding = () => [...held.fan_in.values(), ...held.run_completed.values()].some((l) => l.length > 0);

  function quiescent() {
    if (!holding() || entering > 0 || published.size > 0) return false;
    for (const rec of live) if (rec.phase === 'run') return false;
    for (const d of inFlight) {
      let waits = false;
      for (const rec of live) if (rec.delivery === d.index && (rec.phase === 'gate' || rec.phase === 'pool')) waits = true;
      if (!waits) return false;
    }
    return true;
  }

  function release(gate, run, why) {
    const list = held[gate].get(run) ?? [];
    held[gate].delete(run);
    spent[gate].add(run);
    releases.push({ gate, run, calls: list.length, why, at: now() });
    // One tick: every held call's continuation runs in this microtask flush,
    // in arrival order, up to its first await inside the real World.
    for (const e of list) e.resolve();
  }

  function escape() {
    for (const gate of ['fan_in', 'run_completed']) {
      for (const [run, list] of [...held[gate]]) {
        if (!list.length) continue;
        const want = gate === 'fan_in' ? fanIn : wantCompleted;
        const have = gate === 'fan_in' ? stepEnds.get(run) ?? 0 : list.length;
        escapes.push({ gate, run, held: list.length, want, have, at: now() });
        release(gate, run, 'escape');
      }
    }
  }

  const park = (gate, rec) =>
    new Promise((resolve) => {
      const list = held[gate].get(rec.run) ?? [];
      list.push({ rec, resolve });
      held[gate].set(rec.run, list);
      rec.held = gate;
    });

  return {
    releases,
    escapes,
    // hold returns a promise that settles when rec may reach the World, or
    // null when the call is not gated.
    hold(rec) {
      if (rec.delivery < 0 || !rec.run) return null;
      if (fanIn > 0 && rec.op === 'events.list' && !spent.fan_in.has(rec.run) &&
          endedBy.has(`${rec.delivery} ${rec.run}`) && (stepEnds.get(rec.run) ?? 0) < fanIn) {
        return park('fan_in', rec);
      }
      if (wantCompleted > 0 && rec.op === 'events.create' && rec.event === 'run_completed' && !spent.run_completed.has(rec.run)) {
        const p = park('run_completed', rec);
        if (held.run_completed.get(rec.run).length >= wantCompleted) release('run_completed', rec.run, 'count');
        return p;
      }
      return null;
    },
    // answered counts an accepted write and opens the fan-in gate of its
    // run once the count is reached.
    answered(rec) {
      if (rec.op !== 'events.create' || rec.result !== 'ok' || !TERMINAL_STEP.has(rec.event)) return;
      const n = (stepEnds.get(rec.run) ?? 0) + 1;
      stepEnds.set(rec.run, n);
      if (rec.delivery >= 0) endedBy.add(`${rec.delivery} ${rec.run}`);
      if (fanIn > 0 && n >= fanIn && !spent.fan_in.has(rec.run)) release('fan_in', rec.run, 'count');
    },
    // phase records where a delivery's call is: pool (waiting for a slot),
    // run (being served), gate (held), done.
    phase(rec, p) {
      if (rec.delivery < 0) return;
      rec.phase = p;
      if (p === 'done') live.delete(rec);
      else live.add(rec);
      touch();
    },
    published(messageId) {
      if (messageId && !delivered.has(messageId)) published.add(messageId);
      touch();
    },
    // enter is the handler's first, synchronous line; started registers the
    // delivery once it has an index; ended when it answered the queue.
    enter(messageId) {
      entering++;
      if (messageId) {
        delivered.add(messageId);
        published.delete(messageId);
      }
      touch();
    },
    started(d) {
      entering--;
      inFlight.add(d);
      touch();
    },
    ended(d) {
      inFlight.delete(d);
      // An answer that brings the message back (the harness sets redeliver):
      // it will be delivered again.
      if (d.redeliver && d.message) published.add(d.message);
      touch();
    },
    // quiet settles once the runtime is idle (idle(), judged as quiescence
    // is); call it once every run has been started.
    quiet() {
      const p = new Promise((resolve) => quietWaiters.push(resolve));
      touch();
      return p;
    },
  };
}
