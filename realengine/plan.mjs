// A plan: a simulated history's World calls and step bodies, released on the
// real runtime in the simulated order (simlab reproduce; the Go side,
// realengine/reproduce.go, translates the History into the entries).
//
// Each entry names one call or body by what the runtime itself shows of it,
// never by time: the run (the nth run the client created), the delivery that
// makes it (the client; the run's own message, the orchestrator; or a queued
// step's message, by that step's fan-out and branch) and which delivery of
// that message (nth), the operation, the event type, the step it is about
// (fan-out/branch, read from the step's own input as the runtime wrote it)
// and its occurrence among the same calls of that delivery. A call that
// arrives is matched to its entry and held until its turn: every earlier
// entry released and answered (a body counts as answered once it began).
// Entries of one race group (writes the model had in flight at once on one
// run) are released together, in one tick, once all have arrived.
//
// A race group whose entry carries `fs` (world-local run events the
// History interleaved step by step) is also forced inside the calls: each
// member's World call runs in a schedule of realworld/node/gate.mjs,
// which holds the World's own file-system I/O of each step until the
// schedule's earlier steps are done (the harness instruments world-local's
// fs for it). An entry with an action (the client's cancel) is made by the
// harness itself when its turn comes.
//
// A call no entry names passes through and is recorded (an unplanned write
// is a divergence the caller reports). A plan that cannot go on (nothing
// more can arrive: the gate's quiescence) breaks: it records at which entry,
// releases what it holds and passes everything from then on. An entry
// answered otherwise than the history says is recorded; the plan goes on.

import { closeGate, finishCall, lateArrived, newGate, runInCall } from '../realworld/node/gate.mjs';

const fanIdx = (a) => (a ? `${a[0]}/${a[1]}` : '');
// The step a call (its correlation id) or a body (its step) is about.
const stepIdOf = (item) => (item.kind === 'body' ? item.step : item.correlation);

// stepArgs reads a branch step's (fan-out, branch) from the input its
// step_created or lazy step_started carries: the runtime's devalue
// encoding ("devl" + JSON) of { args: [fanout, index, ms], ... }, values
// referenced by index. workflow/fanout.ts's branch(fanout, index, ms) is
// the only step, so its first two arguments name it.
export function stepArgs(input) {
  const vals = devalued(input);
  const args = vals?.[vals[0].args];
  if (!Array.isArray(args) || args.length < 2) return undefined;
  const f = vals[args[0]], i = vals[args[1]];
  return Number.isInteger(f) && Number.isInteger(i) ? [f, i] : undefined;
}

// devalued is a step input's devalue values ("devl" + JSON), the first an
// object, or undefined.
function devalued(input) {
  if (!(input instanceof Uint8Array) || input.length < 5) return undefined;
  const text = Buffer.from(input).toString('utf8');
  if (!text.startsWith('devl')) return undefined;
  let vals;
  try {
    vals = JSON.parse(text.slice(4));
  } catch {
    return undefined;
  }
  return Array.isArray(vals) && typeof vals[0] === 'object' && vals[0] !== null ? vals : undefined;
}

// stepStatement reads a program step's statement from the input its
// step_created or lazy step_started carries: programs.ts calls each step
// function with its statement's index (realengine.ProgramsTS) as its one
// argument.
export function stepStatement(input) {
  const vals = devalued(input);
  const args = vals?.[vals[0].args];
  if (!Array.isArray(args) || args.length !== 1) return undefined;
  const i = vals[args[0]];
  return Number.isInteger(i) ? i : undefined;
}

export function createPlan(spec, now) {
  const entries = spec.entries ?? [];
  const byKey = new Map();
  entries.forEach((e, i) => byKey.set(e.key, i));
  const held = new Map(); // entry index -> {item, resolve}
  const status = entries.map(() => ({ state: 'waiting' })); // waiting | held | released | answered
  let next = 0; // the first entry not yet released
  let outstanding = 0; // released calls not yet answered
  let broken = null;
  const unplanned = [];
  const mismatches = [];
  const seq = []; // what happened, in order: releases, passes, the break
  let actions = {}; // the harness's own calls: cancel(runId)
  const fsRaces = []; // each forced race group: its gate, calls, finished
  const doneWaiters = [];
  const answerWaiters = []; // {after, resolve}: answers held until their turn (answer_after)
  const lateMembers = new Map(); // entry index -> its group's race (or null): late members not yet arrived

  const runs = new Map(); // real run id -> model run index
  const steps = new Map(); // correlation id -> [fanout, index]
  const deliveries = new Map(); // delivery index -> {run, by, step, nth}
  const deliveryCount = new Map(); // `${run} ${step}` -> deliveries so far
  const occurrences = new Map(); // `${delivery} ${op} ${event} ${step}` -> count
  const claimed = new Set(); // deliveries that made a step_started

  const finished = () => broken !== null || (next >= entries.length && outstanding === 0);
  // An answer's turn: every entry up to `after` answered (a body counts once
  // it began). answeredTo is the first entry that is not.
  let answeredTo = 0;
  const turnCame = (after, waits = []) => {
    while (answeredTo < entries.length && status[answeredTo].state === 'answered') answeredTo++;
    return broken !== null || ((after === undefined || answeredTo > after) && waits.every((j) => status[j].state === 'answered'));
  };
  const settle = () => {
    for (let k = answerWaiters.length - 1; k >= 0; k--) {
      if (turnCame(answerWaiters[k].after, answerWaiters[k].waits)) answerWaiters.splice(k, 1)[0].resolve();
    }
    if (finished()) for (const r of doneWaiters.splice(0)) r();
  };

  // learn what a call tells about identities: the client's run_created
  // names the next run; a call carrying a step's input names its branch.
  // The store wrapper calls it as the call is made, before anything waits:
  // an optimistic body may begin before its claim reaches the gate.
  function learn(rec) {
    if (rec.op === 'events.create' && rec.event === 'step_started' && rec.delivery >= 0) claimed.add(rec.delivery);
    if (rec.op === 'events.create' && rec.event === 'run_created' && rec.delivery < 0 && rec.run && !runs.has(rec.run)) runs.set(rec.run, runs.size);
    if (rec.correlation && rec.args && !steps.has(rec.correlation)) steps.set(rec.correlation, rec.args);
  }

  function describe(item) {
    const d = deliveries.get(item.delivery);
    const by = item.delivery < 0 ? 'client' : d ? `${d.by}${d.by === 'step' ? ' ' + fanIdx(steps.get(d.step)) : ''} #${d.nth}` : `d${item.delivery}`;
    const id = stepIdOf(item);
    const step = id ? ` ${fanIdx(steps.get(id)) || id}` : '';
    return `${item.kind === 'body' ? 'body' : item.op}${item.event ? ' ' + item.event : ''}${step} by ${by}`;
  }

  // keyOf is the entry key of a call or body, in the Go side's format
  // (reproduce.go, planKey), or null when an identity is not known.
  function keyOf(item) {
    const run = runs.get(item.run);
    if (run === undefined) return null;
    let by = 'client', byStep = '', nth = 0;
    if (item.delivery >= 0) {
      const d = deliveries.get(item.delivery);
      if (!d) return null;
      by = d.by;
      nth = d.nth;
      if (d.by === 'step') {
        const a = steps.get(d.step);
        if (!a) return null;
        byStep = fanIdx(a);
      }
    }
    let step = '';
    const id = stepIdOf(item);
    if (id) {
      const a = steps.get(id);
      if (!a) return null;
      step = fanIdx(a);
    }
    const op = item.kind === 'body' ? 'body' : item.op;
    let event = item.event ?? '';
    // A queued step's delivery reads the run before its claim (the legacy
    // prologue) or after its step's end (a last completer's lazy read):
    // two reads the runtime itself tells apart.
    if (op === 'runs.get' && by === 'step') event = claimed.has(item.delivery) ? 'lazy' : 'prologue';
    // Occurrences count within one run: the client's calls (delivery -1)
    // are made for every run, and the Go side counts them per run's key.
    const o = `${run} ${item.delivery} ${op} ${event} ${step}`;
    const n = (occurrences.get(o) ?? 0) + 1;
    occurrences.set(o, n);
    return `r${run}|${by}|${byStep}|${nth}|${op}|${event}|${step}|${n}`;
  }

  // act makes entry i's call when the harness is the one to make it.
  function act(i) {
    const e = entries[i];
    if (!e.action || status[i].issued) return;
    status[i].issued = true;
    const runId = [...runs].find(([, idx]) => idx === e.run)?.[0];
    if (!runId || !actions[e.action]) {
      status[i].action_error = `no ${e.action} for run ${e.run}`;
      return;
    }
    seq.push({ at: now(), what: 'act', entry: i, call: `${e.action} of ${runId}` });
    Promise.resolve().then(() => actions[e.action](runId)).then(
      () => { status[i].action = 'ok'; },
      (err) => { status[i].action = `${err?.name ?? 'Error'}: ${String(err?.message ?? err).slice(0, 200)}`; },
    );
  }

  // joinRace gives member i of a forced race group its place in the race.
  function joinRace(race, i, item) {
    if (race) item.planFs = { gate: race.gate, call: i - race.first, op: 'event', type: item.event, lazy: !!item.lazy, runId: item.run, race };
  }

  function release(i) {
    const h = held.get(i);
    held.delete(i);
    status[i].state = 'released';
    status[i].released = now();
    const e = entries[i];
    seq.push({ at: now(), what: 'release', entry: i, call: describe(h.item) });
    if (e.kind === 'body') status[i].state = 'answered';
    else outstanding++;
    h.item.planEntry = i;
    if (e.stale) h.item.planStale = e.stale;
    h.resolve();
  }

  // pump releases what may go: the next entry once every earlier one is
  // answered; a race group once all its members have arrived.
  function pump() {
    releaseDue();
    // Whatever pump released or not, an entry's answer may now be due, or
    // the plan done.
    settle();
  }

  function releaseDue() {
    while (broken === null && next < entries.length && outstanding === 0) {
      const e = entries[next];
      if (e.group) {
        let end = next;
        while (end < entries.length && entries[end].group === e.group) end++;
        for (let i = next; i < end; i++) act(i);
        // A late member arrives only after another member answered: the
        // group goes without it, and it joins the race as it arrives.
        for (let i = next; i < end; i++) if (!entries[i].late && !held.has(i)) return;
        let race = null;
        if (e.fs) {
          // The History's interleaving of the members' own I/O.
          let late = 0;
          for (let i = next; i < end; i++) if (!held.has(i)) late++;
          race = { gate: newGate(e.fs, end - next, late), first: next, left: end - next, broken: [] };
          fsRaces.push(race);
        }
        for (let i = next; i < end; i++) {
          if (held.has(i)) {
            joinRace(race, i, held.get(i).item);
          } else {
            lateMembers.set(i, race);
          }
        }
        // One tick: each member's continuation runs in this flush, in plan
        // order, up to its first await inside the real World.
        for (let i = next; i < end; i++) if (held.has(i)) release(i);
        next = end;
        continue;
      }
      act(next);
      if (!held.has(next)) return;
      release(next);
      next++;
    }
  }

  return {
    entries,
    learn,
    // setActions gives the plan the harness's own calls.
    setActions(a) {
      actions = a;
      pump();
    },
    // run makes World call rec (fn): in its race's schedule of the World's
    // own I/O when it is a member of a forced race group, else plainly.
    run(rec, fn) {
      const ctx = rec.planFs;
      if (!ctx) return fn();
      return runInCall(ctx, fn).finally(() => {
        finishCall(ctx);
        if (--ctx.race.left === 0) {
          ctx.race.broken = [...ctx.race.gate.broken];
          closeGate(ctx.race.gate);
        }
      });
    },
    // fs says whether some entry forces a race inside its calls (the
    // harness then instruments world-local's file system).
    fs: entries.some((e) => e.fs),
    // delivery registers a queue delivery (harness d: index, run, step).
    delivery(d) {
      const k = `${d.run} ${d.step ?? ''}`;
      const nth = (deliveryCount.get(k) ?? 0) + 1;
      deliveryCount.set(k, nth);
      deliveries.set(d.index, { run: d.run, by: d.step ? 'step' : 'run', step: d.step, nth });
    },
    // hold takes a call (kind 'call') or a beginning body (kind 'body') and
    // returns a promise that settles when it may go on, or null.
    hold(item) {
      if (item.kind !== 'body') learn(item);
      else if (item.step && Number.isInteger(item.args?.[0]) && Number.isInteger(item.args?.[1]) && !steps.has(item.step)) steps.set(item.step, item.args);
      if (!item.run || broken !== null) return null;
      const key = keyOf(item);
      const i = key === null ? undefined : byKey.get(key);
      if (i !== undefined && status[i].state === 'waiting' && lateMembers.has(i)) {
        // A late member of a group already released: in at once.
        const race = lateMembers.get(i);
        lateMembers.delete(i);
        status[i].state = 'held';
        status[i].arrived = now();
        const p = new Promise((resolve) => held.set(i, { item, resolve }));
        joinRace(race, i, item);
        release(i);
        if (race) lateArrived(race.gate);
        return p;
      }
      if (i === undefined || status[i].state !== 'waiting') {
        const write = item.kind !== 'body' && item.op === 'events.create';
        const u = { at: now(), key, call: describe(item), write, position: next, result: undefined };
        unplanned.push(u);
        item.unplanned = u;
        seq.push({ at: now(), what: 'pass', call: u.call, write, position: next });
        return null;
      }
      status[i].state = 'held';
      status[i].arrived = now();
      const p = new Promise((resolve) => held.set(i, { item, resolve }));
      pump();
      return p;
    },
    // answered is a released call's answer (its result: 'ok' or the
    // error's name).
    answered(rec) {
      if (rec.unplanned) rec.unplanned.result = rec.result;
      const i = rec.planEntry;
      if (i === undefined || status[i].state !== 'released') return;
      status[i].state = 'answered';
      status[i].result = rec.result;
      status[i].answered = now();
      if (rec.status) status[i].status = rec.status;
      const e = entries[i];
      if (e.expect && e.expect !== rec.result) mismatches.push({ entry: i, want: e.expect, got: rec.result, call: describe(rec) });
      if (e.status && rec.status && e.status !== rec.status) mismatches.push({ entry: i, want: `status ${e.status}`, got: `status ${rec.status}`, call: describe(rec) });
      outstanding--;
      pump();
    },
    // answerTurn returns a promise that settles when a released read's
    // answer may reach the runtime (its entry's answer_after: the History
    // answered it after later entries took effect), or null at once.
    answerTurn(rec) {
      const i = rec.planEntry;
      if (i === undefined) return null;
      const after = entries[i].answer_after;
      const waits = entries[i].answer_wait ?? [];
      if ((after === undefined && waits.length === 0) || turnCame(after, waits)) return null;
      status[i].answer_held = now();
      return new Promise((resolve) => answerWaiters.push({ after, waits, resolve }));
    },
    holding: () => held.size > 0 || answerWaiters.length > 0,
    // escape is the gate's quiescence with plan entries held: entry `next`
    // (or a member of its race group) cannot arrive any more.
    escape() {
      if (broken !== null || (held.size === 0 && answerWaiters.length === 0)) return false;
      const missing = [];
      const e = entries[next];
      if (e?.group) {
        for (let i = next; i < entries.length && entries[i].group === e.group; i++) if (!held.has(i)) missing.push(i);
      } else if (next < entries.length && !held.has(next)) missing.push(next);
      broken = { at: now(), entry: next, missing, outstanding, held: [...held.keys()].sort((a, b) => a - b) };
      seq.push({ at: now(), what: 'break', entry: next });
      for (const i of [...held.keys()].sort((a, b) => a - b)) release(i);
      settle();
      return true;
    },
    // done settles once every entry is answered or the plan broke.
    done() {
      return new Promise((resolve) => {
        doneWaiters.push(resolve);
        settle();
      });
    },
    report() {
      return {
        entries: entries.length,
        released: status.filter((s) => s.state === 'released' || s.state === 'answered').length,
        next,
        broken,
        status,
        unplanned,
        mismatches,
        seq,
        fs_races: fsRaces.map((r) => ({ first: r.first, broken: r.broken })),
        runs: Object.fromEntries(runs),
        steps: Object.fromEntries([...steps].map(([k, v]) => [k, fanIdx(v)])),
      };
    },
  };
}
