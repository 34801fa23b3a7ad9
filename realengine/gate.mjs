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
//   holds: [rule]      hold a chosen World call, or a chosen step body, until
//                      a chosen later happening on its run: an interleaving
//                      named by what happens, not by when (see matches()).
//   actions: [action]  the harness's own calls on a happening: {name, on,
//                      do: 'cancel'} cancels the run (Run#cancel) the first
//                      time a happening `on` matches on it, so a hold can
//                      wait for that cancel's answer (the client's calls are
//                      happenings too once a rule or action is armed).
//   plan: {entries}    hold every World call (the client's too) and step body
//                      a simulated history names until its turn in that
//                      history's order (plan.mjs; simlab reproduce).
//
// A rule is {name, what, until}. `what` picks what is held: a World call as
// it reaches the World (kind 'call', after its drawn latency) or a step body
// as it begins (kind 'body', from the bundle's step body through the
// harness's hook), by op, event, lazy (a step_started carrying its input),
// from ('run': the delivery of the run's own message, the orchestrator;
// 'step': a queued step's delivery) and nth (the nth such on the run, 1 for
// the first; every one when absent). `until` is the happening that lets it
// go: 'call' (a call reaching the World), 'answer' (a call answered, with
// result 'ok' or an error's name), 'body_begin' or 'body_end', matched by the
// same fields plus step 'same' (the held item's step: its correlation id)
// and delivery 'other' or 'same' (relative to the held item's delivery).
// Both may name an entity of a program's run: statement (the program
// statement whose step it is, read from the step's input) and ordinal (its
// place in the run's correlation-id sequence, which identity(), given by
// the harness, computes as core does from the run's row). `until` may
// also be {kind: 'elapsed', ms}: the run's clock (what a replay's
// Date.now() counts from) reaching ms, a program's deadline; a call held
// so is stamped past it, and the gate never escapes while one waits. A
// hold whose `until` already happened on the run does not hold at all. Held
// items of one rule are released in arrival order, in one tick.
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

import { createPlan } from './plan.mjs';

const TERMINAL_STEP = new Set(['step_completed', 'step_failed']);

export function createGate(spec, now) {
  const fanIn = spec?.fan_in ?? 0;
  const wantCompleted = spec?.run_completed ?? 0;
  const rules = Array.isArray(spec?.holds) ? spec.holds : [];
  const acts = Array.isArray(spec?.actions) ? spec.actions : [];
  // turbo_bodies: the runtime starts a turbo invocation's inline bodies
  // optimistically (not WORKFLOW_OPTIMISTIC_INLINE_START=0), see quiescent().
  const turboBodies = spec?.turbo_bodies !== false;
  const bodiesBegun = new Set(); // `${delivery} ${step}` of every body begun
  // bodies: the harness reports step bodies (record_bodies), so a delivery
  // whose claim of a step was accepted is known to be busy until that
  // step's body begins (quiescent()).
  const bodiesReported = spec?.bodies === true;
  const claimed = new Map(); // delivery index -> steps whose step_started it had accepted
  let actions = {}; // the harness's own calls (setActions): cancel(runId)
  const acted = new Set(); // `${action} ${run}`: fired once per run
  const actionsDone = []; // what each action did, for the summary
  let actionsLive = 0; // actions whose harness call has not settled
  const plan = spec?.plan ? createPlan(spec.plan, now) : null;
  const ruleHeld = new Map(); // rule name -> [entry]
  const ruleSeen = new Map(); // `${rule} ${run}` -> matches of `what` so far
  const happened = new Map(); // run -> [happening], in order
  const kinds = new Map(); // delivery index -> 'run' | 'step'
  const stepEnds = new Map(); // run -> accepted terminal step writes
  const stmts = new Map(); // correlation id -> a program step's statement
  let identity = null; // run row -> {ordinal(correlation id), fixed}, from the harness
  const ordinals = new Map(); // run id -> that
  let timers = 0; // calls held until a time (until kind 'elapsed')
  const endedBy = new Set(); // `${delivery} ${run}`: that delivery wrote a step's end
  const held = { fan_in: new Map(), run_completed: new Map() }; // gate -> run -> [entry]
  const spent = { fan_in: new Set(), run_completed: new Set() };
  const releases = [];
  const escapes = [];

  // Liveness: what could still produce a call.
  const inFlight = new Set(); // delivery records
  let entering = 0; // handlers entered, delivery not yet registered
  const published = new Set(); // message ids published, not yet delivered
  // A plan waits on calls, never on timers: a message published with a
  // delay (a backstop wake-up minutes away) is not something that can still
  // arrive for it.
  const delayed = new Set();
  const delivered = new Set();
  const live = new Set(); // World calls and publishes of deliveries, not answered
  // With a plan, the client's calls too (its run_created is an entry, and
  // while one is in flight more can arrive); not its long poll for the
  // run's end, which is waiting, not work.
  const clientLive = new Set();
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
    if (entering > 0 || published.size > 0 || inFlight.size > 0 || clientLive.size > 0) return false;
    for (const rec of live) if (rec.phase !== 'done') return false;
    return true;
  }

  const holding = () => plan?.holding() || [...held.fan_in.values(), ...held.run_completed.values(), ...ruleHeld.values()].some((l) => l.length > 0);

  // matches says whether happening h (kind, run, delivery, op, event, lazy,
  // result, step) fits pattern p, relative to the held item `rel` when given.
  function matches(p, h, rel) {
    if (p.kind && p.kind !== h.kind) return false;
    for (const k of ['op', 'event', 'result']) if (p[k] !== undefined && p[k] !== h[k]) return false;
    if (p.lazy !== undefined && p.lazy !== !!h.lazy) return false;
    if (p.from !== undefined && p.from !== kinds.get(h.delivery)) return false;
    if (p.statement !== undefined && p.statement !== (h.stmt ?? stmts.get(h.step))) return false;
    if (p.ordinal !== undefined && (h.step === undefined || p.ordinal !== ordinals.get(h.run)?.ordinal(h.step))) return false;
    if (rel) {
      if (h.run !== rel.run) return false;
      if (p.step === 'same' && (h.step === undefined || h.step !== rel.step)) return false;
      if (p.delivery === 'other' && h.delivery === rel.delivery) return false;
      if (p.delivery === 'same' && h.delivery !== rel.delivery) return false;
    }
    return true;
  }

  // happen records a happening and lets go every held item it was waiting on.
  function happen(h) {
    if (!h.run || (rules.length === 0 && acts.length === 0)) return;
    h.at = now();
    const list = happened.get(h.run) ?? [];
    list.push(h);
    happened.set(h.run, list);
    for (const a of acts) {
      const key = `${a.name} ${h.run}`;
      if (acted.has(key) || !matches(a.on, h)) continue;
      acted.add(key);
      const rec = { action: a.name, do: a.do, run: h.run, at: now(), by: describe(h), error: '' };
      actionsDone.push(rec);
      const f = actions[a.do];
      if (!f) {
        rec.error = `no harness action ${a.do}`;
        continue;
      }
      // Until the action's call has settled, the gate is not idle: its
      // World calls may not have reached the store yet.
      actionsLive++;
      Promise.resolve().then(() => f(h.run)).catch((e) => { rec.error = String(e?.message ?? e); }).finally(() => {
        actionsLive--;
        touch();
      });
    }
    for (const rule of rules) {
      const entries = ruleHeld.get(rule.name) ?? [];
      const go = entries.filter((e) => matches(rule.until, h, e.item));
      if (!go.length) continue;
      ruleHeld.set(rule.name, entries.filter((e) => !go.includes(e)));
      for (const e of go) {
        releases.push({ gate: rule.name, run: e.item.run, calls: 1, why: 'until', at: now(), by: describe(h) });
        e.resolve();
      }
    }
  }

  const describe = (h) => [h.kind, h.op, h.event, h.result, h.step, `d${h.delivery}`].filter((x) => x !== undefined).join(' ');

  // holdRule returns a promise for item (a happening of kind 'call' or
  // 'body') when a rule holds it, or null.
  function holdRule(item) {
    for (const rule of rules) {
      if (!matches(rule.what, item)) continue;
      const key = `${rule.name} ${item.run}`;
      const n = (ruleSeen.get(key) ?? 0) + 1;
      ruleSeen.set(key, n);
      if (rule.what.nth !== undefined && rule.what.nth !== n) continue;
      if (rule.until.kind === 'elapsed') {
        // Held until the run's clock (wall time since the run's id was
        // minted, what a replay's Date.now() counts from) reaches ms: a
        // program's own deadline, so that the write is stamped past it.
        const t0 = ordinals.get(item.run)?.fixed;
        const wait = t0 === undefined ? -1 : t0 + rule.until.ms - Date.now();
        if (wait <= 0) {
          releases.push({ gate: rule.name, run: item.run, calls: 0, why: t0 === undefined ? 'unknown run' : 'already', at: now() });
          continue;
        }
        timers++;
        return new Promise((resolve) => setTimeout(() => {
          timers--;
          releases.push({ gate: rule.name, run: item.run, calls: 1, why: 'elapsed', at: now(), by: `the run's clock at ${rule.until.ms} ms` });
          resolve();
          touch();
        }, wait));
      }
      // A happening it would wait for is already past: nothing to hold.
      if ((happened.get(item.run) ?? []).some((h) => matches(rule.until, h, item))) {
        releases.push({ gate: rule.name, run: item.run, calls: 0, why: 'already', at: now() });
        continue;
      }
      return new Promise((resolve) => {
        const entries = ruleHeld.get(rule.name) ?? [];
        entries.push({ item, resolve });
        ruleHeld.set(rule.name, entries);
      });
    }
    return null;
  }

  const callHappening = (kind, rec) => ({ kind, run: rec.run, delivery: rec.delivery, op: rec.op, event: rec.event, lazy: rec.lazy, result: rec.result, step: rec.correlation, stmt: rec.stmt });

  function quiescent() {
    // A call held until a time comes back on its own.
    if (!holding() || entering > 0 || published.size > 0 || actionsLive > 0 || timers > 0) return false;
    for (const rec of clientLive) if (rec.phase === 'run') return false;
    for (const rec of live) if (rec.phase === 'run') return false;
    for (const d of inFlight) {
      let waits = false;
      for (const rec of live) {
        if (rec.delivery !== d.index) continue;
        if (rec.phase === 'gate' || rec.phase === 'pool') waits = true;
        // Turbo's optimistic inline start (the run's first delivery): the
        // body of a step whose lazy claim is held still begins, after the
        // runtime's own awaits, which are no World call the gate could see
        // in flight. The delivery is not idle until that body has begun.
        if (turboBodies && rec.phase === 'gate' && rec.op === 'events.create' && rec.event === 'step_started' && rec.lazy &&
            kinds.get(d.index) === 'run' && d.attempt === 1 && !bodiesBegun.has(`${d.index} ${rec.correlation}`)) return false;
      }
      if (!waits) return false;
      // A delivery whose claim was accepted runs that step's body next,
      // after the runtime's own awaits (hydrating the step's input), which
      // are no World call either: not idle until the body has begun.
      for (const step of claimed.get(d.index) ?? []) if (!bodiesBegun.has(`${d.index} ${step}`)) return false;
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
    if (plan?.escape()) escapes.push({ gate: 'plan', run: '', held: 0, want: 0, have: 0, at: now() });
    for (const gate of ['fan_in', 'run_completed']) {
      for (const [run, list] of [...held[gate]]) {
        if (!list.length) continue;
        const want = gate === 'fan_in' ? fanIn : wantCompleted;
        const have = gate === 'fan_in' ? stepEnds.get(run) ?? 0 : list.length;
        escapes.push({ gate, run, held: list.length, want, have, at: now() });
        release(gate, run, 'escape');
      }
    }
    for (const [name, entries] of [...ruleHeld]) {
      if (!entries.length) continue;
      ruleHeld.set(name, []);
      for (const e of entries) {
        escapes.push({ gate: name, run: e.item.run, held: 1, want: 1, have: 0, at: now(), what: describe(e.item) });
        releases.push({ gate: name, run: e.item.run, calls: 1, why: 'escape', at: now() });
        e.resolve();
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

  const armed = () => rules.length > 0 || acts.length > 0;

  return {
    releases,
    escapes,
    plan,
    actionsDone,
    // setActions gives the gate's actions the harness's own calls.
    setActions(a) {
      actions = a;
    },
    // learn is told of every call as it is made (a plan learns the runs and
    // the steps' branches from them).
    learn(rec) {
      plan?.learn(rec);
      if (rec.correlation && rec.stmt !== undefined && !stmts.has(rec.correlation)) stmts.set(rec.correlation, rec.stmt);
    },
    // setIdentity gives the gate the harness's id sequence: f(run row)
    // returns the run's {ordinal(correlation id), fixed: its clock's
    // start in ms since the epoch}.
    setIdentity(f) {
      identity = f;
    },
    // runSeen is told of each run row a write answered with.
    runSeen(run) {
      if (identity && run?.runId && !ordinals.has(run.runId)) ordinals.set(run.runId, identity(run));
    },
    // hold returns a promise that settles when rec may reach the World, or
    // null when the call is not gated.
    hold(rec) {
      if (plan) {
        const p = plan.hold(rec);
        if (p) touch();
        return p;
      }
      if (rec.delivery < 0 || !rec.run) return null;
      if (rules.length) {
        // A held call reaches the World when it is let go: that is its
        // 'call' happening.
        const h = callHappening('call', rec);
        const p = holdRule(h);
        if (p) return p.then(() => happen(h));
        happen(h);
      }
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
      if (p === 'done' && plan && rec.op !== 'body') plan.answered(rec);
      if (rec.delivery < 0) {
        // The client's answers are happenings a rule may wait for (its
        // cancel's, say); they hold nothing themselves.
        if (p === 'done' && rec.phase !== 'done' && !plan && armed() && rec.op === 'events.create') happen(callHappening('answer', rec));
        if ((plan || armed()) && rec.op !== 'runs.waitForTerminalStatus') {
          rec.phase = p;
          if (p === 'done') clientLive.delete(rec);
          else clientLive.add(rec);
          touch();
        }
        return;
      }
      if (p === 'done' && rec.phase !== 'done' && rec.op !== 'body' && armed()) happen(callHappening('answer', rec));
      if (p === 'done' && bodiesReported && rec.op === 'events.create' && rec.event === 'step_started' && rec.result === 'ok' && rec.correlation) {
        if (!claimed.has(rec.delivery)) claimed.set(rec.delivery, new Set());
        claimed.get(rec.delivery).add(rec.correlation);
      }
      rec.phase = p;
      if (p === 'done') live.delete(rec);
      else live.add(rec);
      touch();
    },
    // answerTurn holds an answered read's answer (or a body's end) from the
    // runtime until its plan turn (plan.mjs answerTurn), or returns null. While held the call
    // counts as held in the gate, so that quiescence (and with it the plan's
    // escape) sees its delivery waiting, not working.
    answerTurn(rec) {
      const p = plan?.answerTurn(rec);
      if (!p) return null;
      rec.phase = 'gate';
      live.add(rec);
      touch();
      return p.then(() => {
        rec.phase = 'done';
        live.delete(rec);
        touch();
      });
    },
    published(messageId, delaySeconds = 0) {
      if (plan && delaySeconds > 0) delayed.add(messageId);
      else if (messageId && !delivered.has(messageId)) published.add(messageId);
      touch();
    },
    // enter is the handler's first, synchronous line; started registers the
    // delivery once it has an index; ended when it answered the queue.
    enter(messageId) {
      entering++;
      if (messageId) {
        delivered.add(messageId);
        published.delete(messageId);
        delayed.delete(messageId);
      }
      touch();
    },
    // body is a step body beginning (rec: run, step, delivery; kind
    // 'body_begin') or ending ('body_end'). A beginning body may be held:
    // the promise settles when it may go on, or null.
    body(rec, kind) {
      if (rec.delivery < 0 || !rec.run) return null;
      if (kind === 'body_begin') {
        bodiesBegun.add(`${rec.delivery} ${rec.step}`);
        // A begun body may be what kept its delivery busy (quiescent()).
        if (bodiesReported) touch();
      }
      const h = { kind, run: rec.run, delivery: rec.delivery, step: rec.step };
      if (kind === 'body_end') {
        happen(h);
        // A body the History ended after later entries took effect ends
        // at its turn (answer_after), held as a late read's answer is, so
        // that a body two deliveries run at once overlaps on the real side
        // too.
        return plan && rec.planItem ? this.answerTurn(rec.planItem) : null;
      }
      let p = null;
      if (plan) {
        // The body knows its own branch (its step function's arguments),
        // which may begin before its claim names it (turbo's optimistic
        // start).
        rec.planItem = { ...h, kind: 'body', args: [rec.fanout, rec.index] };
        p = plan.hold(rec.planItem);
      } else if (rules.length) {
        p = holdRule({ ...h, kind: 'body' });
      }
      happen(h);
      if (!p) return null;
      // A held body is its delivery waiting on the gate, as a held call is.
      const pseudo = { op: 'body', run: rec.run, delivery: rec.delivery };
      this.phase(pseudo, 'gate');
      rec.held = true;
      return p.then(() => {
        rec.released = now();
        this.phase(pseudo, 'done');
      });
    },
    started(d) {
      plan?.delivery(d);
      kinds.set(d.index, d.step ? 'step' : 'run');
      entering--;
      inFlight.add(d);
      touch();
    },
    ended(d) {
      inFlight.delete(d);
      // An answer that brings the message back (the harness sets redeliver):
      // it will be delivered again.
      if (d.redeliver && d.message) published.add(d.message);
      if (d.message) delayed.delete(d.message);
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
