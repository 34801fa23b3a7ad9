// Tests of gate.mjs on its own (node --test gate.test.mjs; run by
// TestGateReleasesByCountAndEscapes): no World, no runtime, calls and
// deliveries as the store wrapper and the harness report them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createGate } from './gate.mjs';
import { stepArgs, stepStatement } from './plan.mjs';

// turns lets the event loop go round n times (setImmediate, not a timer):
// long enough for the gate's quiescence check, which waits two turns.
const turns = async (n) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

// A tiny driver: deliveries, and calls that go through the gate as
// store.mjs's call() does (pool, run, maybe held, run, done).

// throughGate takes a call record through the pool and the gate as the
// store wrapper does, waiting while the gate holds it.
async function throughGate(gate, rec) {
  gate.phase(rec, 'pool');
  gate.phase(rec, 'run');
  const held = gate.hold(rec);
  if (held) {
    gate.phase(rec, 'gate');
    await held;
    gate.phase(rec, 'run');
  }
}
function driver(spec) {
  const gate = createGate(spec, () => 0);
  const order = [];
  const deliver = (index) => {
    const d = { index };
    gate.enter(`msg_${index}`);
    gate.started(d);
    return d;
  };
  const call = async (d, op, event, run = 'wrun_1') => {
    const rec = { op, event, run, delivery: d.index };
    await throughGate(gate, rec);
    order.push(`${d.index}:${op}${event ? ' ' + event : ''}`);
    rec.result = 'ok';
    gate.answered(rec);
    gate.phase(rec, 'done');
    return rec;
  };
  return { gate, order, deliver, call };
}

test('fan_in holds each pending check after its own step end until every branch ended', async () => {
  const { gate, order, deliver, call } = driver({ fan_in: 3 });
  const ds = [0, 1, 2].map(deliver);
  await call(ds[0], 'events.create', 'step_completed');
  const l0 = call(ds[0], 'events.list');
  await call(ds[1], 'events.create', 'step_completed');
  const l1 = call(ds[1], 'events.list');
  // A list by a delivery that ended no step is not its pending check.
  await call(ds[2], 'events.list');
  await turns(5);
  assert.deepEqual(order.filter((o) => o.endsWith('events.list')), ['2:events.list']);
  await call(ds[2], 'events.create', 'step_completed');
  await Promise.all([l0, l1]);
  assert.deepEqual(order.slice(-2), ['0:events.list', '1:events.list'], 'released in arrival order');
  // Once open, the gate lets the run's later lists pass.
  await call(ds[2], 'events.list');
  assert.deepEqual(gate.releases.map((r) => [r.gate, r.calls, r.why]), [['fan_in', 2, 'count']]);
  assert.equal(gate.escapes.length, 0);
});

test('run_completed holds until K are pending, then releases them in one tick', async () => {
  const { gate, order, deliver, call } = driver({ run_completed: 3 });
  const ds = [0, 1, 2, 3].map(deliver);
  const w = [call(ds[0], 'events.create', 'run_completed'), call(ds[1], 'events.create', 'run_completed')];
  await turns(5);
  assert.equal(order.length, 0, 'two of three held');
  w.push(call(ds[2], 'events.create', 'run_completed'));
  await Promise.all(w);
  assert.deepEqual(order, ['0:events.create run_completed', '1:events.create run_completed', '2:events.create run_completed']);
  // A fourth writer after the release passes through.
  await call(ds[3], 'events.create', 'run_completed');
  assert.deepEqual(gate.releases.map((r) => [r.gate, r.calls, r.why]), [['run_completed', 3, 'count']]);
  // Runs are gated each on its own.
  const other = call(ds[3], 'events.create', 'run_completed', 'wrun_2');
  await turns(5);
  assert.equal(order.length, 4);
  gate.ended(ds[0]); gate.ended(ds[1]); gate.ended(ds[2]);
  await other; // escaped: nothing else can arrive
  assert.deepEqual(gate.escapes.map((e) => [e.gate, e.run, e.held, e.want, e.have]), [['run_completed', 'wrun_2', 1, 3, 1]]);
});

test('a gate whose count cannot be reached escapes, but not while work is under way', async () => {
  const { gate, order, deliver, call } = driver({ run_completed: 3 });
  const a = deliver(0), b = deliver(1), busy = deliver(2);
  const w = [call(a, 'events.create', 'run_completed'), call(b, 'events.create', 'run_completed')];
  // `busy` is in flight between two calls (a step body, say): it may still
  // write, so the gate waits, however many turns go by.
  await turns(20);
  assert.equal(order.length, 0);
  assert.equal(gate.escapes.length, 0);
  // A published message not yet delivered may still write too.
  gate.published('msg_later');
  gate.ended(busy);
  await turns(20);
  assert.equal(gate.escapes.length, 0);
  const later = { index: 9 }; // its delivery starts...
  gate.enter('msg_later');
  gate.started(later);
  gate.ended(later); // ...and ends without writing
  await Promise.all(w);
  assert.deepEqual(gate.escapes.map((e) => [e.gate, e.held, e.want, e.have]), [['run_completed', 2, 3, 2]]);
  assert.deepEqual(gate.releases.map((r) => r.why), ['escape']);
});

test('quiet settles once nothing is in flight, published or due back, never before', async () => {
  const { gate, deliver, call } = driver({});
  let quiet = false;
  const d = deliver(0);
  gate.quiet().then(() => { quiet = true; });
  await call(d, 'events.create', 'step_completed');
  await turns(10);
  assert.equal(quiet, false, 'a delivery in flight between calls');
  // It publishes a message and ends: the message is still to be delivered.
  gate.published('msg_1');
  gate.ended(d);
  await turns(10);
  assert.equal(quiet, false, 'a published message not yet delivered');
  // Its delivery answers with an error: the queue brings it back.
  const e = { index: 1, message: 'msg_1', redeliver: true };
  gate.enter('msg_1');
  gate.started(e);
  gate.ended(e);
  await turns(10);
  assert.equal(quiet, false, 'a message due back');
  const f = { index: 2, message: 'msg_1' };
  gate.enter('msg_1');
  gate.started(f);
  gate.ended(f);
  await turns(10);
  assert.equal(quiet, true);
  assert.equal(gate.escapes.length, 0);
});

// A driver for hold rules: deliveries of a kind (the run's own message or a
// queued step's), calls carrying a step, and bodies as the harness's hook
// reports them.
function ruleDriver(holds, extra = {}) {
  const gate = createGate({ holds, ...extra }, () => 0);
  const order = [];
  const deliver = (index, step) => {
    const d = { index, step };
    gate.enter(`msg_${index}`);
    gate.started(d);
    return d;
  };
  const call = async (d, event, correlation, { lazy = false, result = 'ok', stmt } = {}) => {
    const rec = { op: 'events.create', event, run: 'wrun_1', correlation, lazy, delivery: d.index, stmt };
    gate.learn(rec);
    await throughGate(gate, rec);
    order.push(`${d.index}:${event} ${correlation}`);
    rec.result = result;
    if (result === 'ok') gate.answered(rec);
    gate.phase(rec, 'done');
  };
  const body = async (d, step) => {
    const b = { run: 'wrun_1', step, delivery: d.index };
    const held = gate.body(b, 'body_begin');
    if (held) await held;
    order.push(`${d.index}:body ${step}`);
    gate.body(b, 'body_end');
  };
  return { gate, order, deliver, call, body };
}

const claimRule = {
  name: 'inline_claim',
  what: { kind: 'call', op: 'events.create', event: 'step_started', lazy: true, from: 'run', nth: 1 },
  until: { kind: 'answer', op: 'events.create', event: 'step_started', step: 'same', delivery: 'other' },
};
const bodyRule = { name: 'inline_body', what: { kind: 'body', from: 'run', nth: 1 }, until: { kind: 'body_begin', step: 'same', delivery: 'other' } };

test('a hold rule holds its call until another delivery answered the same step', async () => {
  const { gate, order, deliver, call } = ruleDriver([claimRule]);
  const orch = deliver(0);
  const cons = deliver(1, 'step_q');
  const held = call(orch, 'step_started', 'step_i', { lazy: true });
  // Calls the rule does not pick pass: a queued step's claim, another step.
  await call(cons, 'step_started', 'step_q');
  await call(cons, 'step_completed', 'step_q');
  await turns(5);
  assert.deepEqual(order, ['1:step_started step_q', '1:step_completed step_q']);
  // The consumer's claim of the same step, refused or not, lets it go once answered.
  await call(cons, 'step_started', 'step_i', { lazy: true, result: 'EntityConflictError' });
  await held;
  assert.deepEqual(order.slice(-2), ['1:step_started step_i', '0:step_started step_i']);
  assert.deepEqual(gate.releases.map((r) => [r.gate, r.why, r.by]),
    [['inline_claim', 'until', 'answer events.create step_started EntityConflictError step_i d1']]);
  // nth 1: the orchestrator's next lazy claim passes.
  await call(orch, 'step_started', 'step_j', { lazy: true });
  assert.equal(order.at(-1), '0:step_started step_j');
  assert.equal(gate.escapes.length, 0);
});

test('a hold rule names a program\'s entity by statement and ordinal, learned from its input and the run\'s id sequence', async () => {
  const staleCreate = {
    name: 'stale_write',
    what: { kind: 'call', op: 'events.create', event: 'step_created', statement: 7, ordinal: 2 },
    until: { kind: 'answer', op: 'events.create', event: 'step_started', ordinal: 1, result: 'ok' },
  };
  const { gate, order, deliver, call } = ruleDriver([staleCreate]);
  // The harness's id sequence: here an id's number is its ordinal.
  gate.setIdentity((run) => ({ ordinal: (id) => (run.runId === 'wrun_1' ? Number(id.split('_')[1]) : -1), fixed: 0 }));
  gate.runSeen({ runId: 'wrun_1' });
  const orch = deliver(0);
  const cons = deliver(1, 'step_1');
  await call(orch, 'step_created', 'step_1', { stmt: 4 });
  // Another statement's create of the same ordinal, and the statement's
  // create of another ordinal, pass.
  await call(orch, 'step_created', 'step_2', { stmt: 5 });
  await call(orch, 'step_created', 'step_3', { stmt: 7 });
  const held = call(orch, 'step_created', 'step_2', { stmt: 7 });
  await turns(5);
  assert.equal(order.length, 3);
  // Entity 1's claim carries no input: its ordinal names it.
  await call(cons, 'step_started', 'step_1');
  await held;
  assert.deepEqual(order.slice(-2), ['1:step_started step_1', '0:step_created step_2']);
  assert.deepEqual(gate.releases.map((r) => [r.gate, r.why, r.by]), [['stale_write', 'until', 'answer events.create step_started ok step_1 d1']]);
  assert.equal(gate.escapes.length, 0);
});

test('a call held until the run\'s clock reaches a time goes on then, and the gate does not escape while it waits', async () => {
  const timeHold = { name: 'past_deadline', what: { kind: 'call', op: 'events.create', event: 'step_started' }, until: { kind: 'elapsed', ms: 500 } };
  const { gate, order, deliver, call } = ruleDriver([timeHold]);
  const t0 = Date.now();
  gate.setIdentity(() => ({ ordinal: () => -1, fixed: t0 }));
  gate.runSeen({ runId: 'wrun_1' });
  const d = deliver(0);
  await call(d, 'step_created', 'step_1');
  const held = call(d, 'step_started', 'step_1');
  // Nothing else can arrive, yet it waits for the time, not escaping.
  await turns(20);
  assert.deepEqual(order, ['0:step_created step_1']);
  assert.equal(gate.escapes.length, 0);
  await held;
  assert.ok(Date.now() - t0 >= 500, `released after ${Date.now() - t0} ms`);
  assert.deepEqual(gate.releases.map((r) => [r.gate, r.why]), [['past_deadline', 'elapsed']]);
  // Past the time, a match is not held.
  await call(d, 'step_started', 'step_2');
  assert.deepEqual(gate.releases.map((r) => r.why), ['elapsed', 'already']);
});

test('an action cancels its run once on its happening, and a hold waits for the cancel\'s answer, never escaping while it is under way', async () => {
  const gate = createGate({
    actions: [{ name: 'cancel_on_start', on: { kind: 'answer', op: 'events.create', event: 'run_started', from: 'run' }, do: 'cancel' }],
    holds: [{ name: 'create_after_cancel', what: { kind: 'call', op: 'events.create', event: 'step_created', from: 'run' },
      until: { kind: 'answer', op: 'events.create', event: 'run_cancelled', result: 'ok' } }],
  }, () => 0);
  const order = [];
  let finishCancel;
  const cancels = [];
  // The harness's cancel: the client's run_cancelled, answered only when the
  // test says so (a slow World).
  gate.setActions({
    cancel: async (run) => {
      cancels.push(run);
      await turns(10); // the runtime's own awaits before the call reaches the World
      const rec = { op: 'events.create', event: 'run_cancelled', run, delivery: -1 };
      gate.phase(rec, 'run');
      await new Promise((r) => { finishCancel = r; });
      rec.result = 'ok';
      gate.phase(rec, 'done');
      order.push('client:run_cancelled');
    },
  });
  const d = { index: 0 };
  gate.enter('msg_0');
  gate.started(d);
  const call = async (event) => {
    const rec = { op: 'events.create', event, run: 'wrun_1', delivery: 0 };
    await throughGate(gate, rec);
    rec.result = 'ok';
    order.push(`0:${event}`);
    gate.phase(rec, 'done');
  };
  await call('run_started');
  const create = call('step_created');
  // The action fired once; the create waits, and the gate does not escape
  // while the cancel is on its way and then in flight.
  await turns(30);
  assert.deepEqual(cancels, ['wrun_1']);
  assert.deepEqual(order, ['0:run_started']);
  assert.equal(gate.escapes.length, 0);
  finishCancel();
  await create;
  assert.deepEqual(order, ['0:run_started', 'client:run_cancelled', '0:step_created']);
  // A second run_started answer does not cancel again.
  await call('run_started');
  await turns(5);
  assert.deepEqual(cancels, ['wrun_1']);
  assert.deepEqual(gate.actionsDone.map((a) => [a.action, a.run, a.error]), [['cancel_on_start', 'wrun_1', '']]);
});

test('a hold rule whose happening is already past holds nothing', async () => {
  const { gate, order, deliver, call } = ruleDriver([claimRule]);
  const orch = deliver(0);
  const cons = deliver(1, 'step_q');
  await call(cons, 'step_started', 'step_i', { lazy: true });
  await call(orch, 'step_started', 'step_i', { lazy: true });
  assert.deepEqual(order, ['1:step_started step_i', '0:step_started step_i']);
  assert.deepEqual(gate.releases.map((r) => [r.gate, r.why, r.calls]), [['inline_claim', 'already', 0]]);
});

test('a held body waits for another delivery\'s body of its step, and escapes when none can come', async () => {
  const { gate, order, deliver, body } = ruleDriver([bodyRule]);
  const orch = deliver(0);
  const cons = deliver(1, 'step_q');
  const held = body(orch, 'step_i');
  await body(cons, 'step_q'); // another step's body does not release it
  await turns(5);
  assert.deepEqual(order, ['1:body step_q']);
  await body(cons, 'step_i');
  await held;
  assert.deepEqual(order, ['1:body step_q', '1:body step_i', '0:body step_i']);
  assert.equal(gate.escapes.length, 0);

  // A second run: its orchestrator's body held, and nothing else in flight
  // that could begin another: the hold escapes and says so.
  const g2 = ruleDriver([bodyRule]);
  const o2 = g2.deliver(0);
  const lone = g2.body(o2, 'step_i');
  await lone;
  assert.deepEqual(g2.gate.escapes.map((e) => [e.gate, e.what]), [['inline_body', 'body step_i d0']]);
  assert.deepEqual(g2.gate.releases.map((r) => r.why), ['escape']);
});

test('a delivery whose claim was accepted is busy until that step\'s body begins, when bodies are reported', async () => {
  // The orchestrator's claim of step_k is accepted, and its lazy claim of
  // step_i is held (claimRule) where nothing can release it: as in the
  // runtime, which goes on to step_k's body after awaits of its own (no
  // World call), the gate does not escape until that body has begun.
  const { gate, deliver, call, body } = ruleDriver([claimRule], { bodies: true });
  const orch = deliver(0);
  await call(orch, 'step_started', 'step_k');
  const held = call(orch, 'step_started', 'step_i', { lazy: true });
  await turns(10);
  assert.equal(gate.escapes.length, 0, 'between the accepted claim and its body');
  const b = body(orch, 'step_k');
  await held; // now nothing more can arrive: the hold escapes
  await b;
  assert.deepEqual(gate.escapes.map((e) => e.gate), ['inline_claim']);

  // Bodies not reported (record_bodies off): the accepted claim says nothing.
  const g2 = ruleDriver([claimRule]);
  const o2 = g2.deliver(0);
  await g2.call(o2, 'step_started', 'step_k');
  await g2.call(o2, 'step_started', 'step_i', { lazy: true });
  assert.deepEqual(g2.gate.escapes.map((e) => e.gate), ['inline_claim']);
});

// A driver for plans: the client's calls (delivery -1), deliveries of the
// run's message and of queued steps, calls as store.mjs makes them (learn
// first, then pool, run, maybe held, done with the answer).
function planDriver(entries) {
  const gate = createGate({ plan: { entries } }, () => 0);
  const order = [];
  const deliver = (index, step) => {
    const d = { index, run: 'wrun_A', step };
    gate.enter(`msg_${index}`);
    gate.started(d);
    return d;
  };
  // slow: a promise the World's answer waits for (a call in flight).
  const call = async (d, op, event, { correlation, args, result = 'ok', status, slow } = {}) => {
    const rec = { op, event, run: 'wrun_A', correlation, args, delivery: d ? d.index : -1 };
    gate.learn(rec);
    await throughGate(gate, rec);
    order.push(`${d ? d.index : 'c'}:${op}${event ? ' ' + event : ''}`);
    if (slow) await slow;
    rec.result = result;
    if (status) rec.status = status;
    gate.phase(rec, 'done');
    // As the store wrapper: a late answer reaches the caller at its turn.
    const turn = gate.answerTurn(rec);
    if (turn) await turn;
    return rec;
  };
  return { gate, order, deliver, call };
}

const entry = (key, extra = {}) => ({ key, kind: 'call', expect: 'ok', ...extra });

test('a plan releases calls in its order, each once the one before is answered, and passes what it does not name', async () => {
  const { gate, order, deliver, call } = planDriver([
    entry('r0|client||0|events.create|run_created||1'),
    entry('r0|run||1|events.create|run_started||1'),
    entry('r0|run||1|events.create|step_created|0/1|1'),
    entry('r0|step|0/1|1|events.create|step_started|0/1|1'),
    entry('r0|step|0/1|1|runs.get|lazy||1', { status: 'running' }),
  ]);
  // The client's run_created reaches the World and is slow to answer; the
  // run's start arrives meanwhile and is held until it has answered.
  let answer;
  const created = call(null, 'events.create', 'run_created', { slow: new Promise((r) => { answer = r; }) });
  const orch = deliver(0);
  const started = call(orch, 'events.create', 'run_started');
  await turns(5);
  assert.deepEqual(order, ['c:events.create run_created'], 'run_started held while run_created is in flight');
  assert.equal(gate.escapes.length, 0, 'a client call in flight: no escape');
  answer();
  await Promise.all([created, started]);
  await call(orch, 'events.create', 'step_created', { correlation: 'step_b', args: [0, 1] });
  const cons = deliver(1, 'step_b');
  // Its prologue read is not in the plan: it passes at once.
  await call(cons, 'runs.get');
  await call(cons, 'events.create', 'step_started', { correlation: 'step_b' });
  await call(cons, 'runs.get', undefined, { status: 'completed' });
  assert.deepEqual(order, ['c:events.create run_created', '0:events.create run_started', '0:events.create step_created', '1:runs.get', '1:events.create step_started', '1:runs.get']);
  const rep = gate.plan.report();
  assert.equal(rep.released, 5);
  assert.equal(rep.broken, null);
  assert.deepEqual(rep.unplanned.map((u) => [u.key, u.write]), [['r0|step|0/1|1|runs.get|prologue||1', false]]);
  // The lazy read answered a status the History does not have.
  assert.deepEqual(rep.mismatches.map((m) => [m.entry, m.want, m.got]), [[4, 'status running', 'status completed']]);
  await gate.plan.done();
});

test('a plan releases a race group in one tick once every member arrived', async () => {
  const { gate, order, deliver, call } = planDriver([
    entry('r0|client||0|events.create|run_created||1'),
    entry('r0|step|0/0|1|events.create|run_completed||1', { group: 1 }),
    entry('r0|step|0/1|1|events.create|run_completed||1', { group: 1 }),
  ]);
  await call(null, 'events.create', 'step_created', { correlation: 'step_a', args: [0, 0] });
  await call(null, 'events.create', 'step_created', { correlation: 'step_b', args: [0, 1] });
  await call(null, 'events.create', 'run_created');
  const a = deliver(0, 'step_a'), b = deliver(1, 'step_b');
  const first = call(a, 'events.create', 'run_completed');
  await turns(5);
  assert.equal(order.filter((o) => o.includes('run_completed')).length, 0, 'one of two members held');
  const second = call(b, 'events.create', 'run_completed');
  await Promise.all([first, second]);
  assert.deepEqual(gate.plan.report().seq.filter((s) => s.what === 'release').map((s) => s.entry), [0, 1, 2]);
  // Both continuations ran before either answered: one tick.
  assert.deepEqual(order.slice(-2), ['0:events.create run_completed', '1:events.create run_completed']);
});

test('a plan whose next entry cannot arrive breaks, says where, and lets everything go', async () => {
  const { gate, order, deliver, call } = planDriver([
    entry('r0|client||0|events.create|run_created||1'),
    entry('r0|run||1|events.create|run_started||1'),
    entry('r0|run||1|events.list|||1'),
  ]);
  await call(null, 'events.create', 'run_created');
  const orch = deliver(0);
  // The list comes, the run_started before it never does.
  await call(orch, 'events.list');
  const rep = gate.plan.report();
  assert.deepEqual([rep.broken.entry, rep.broken.held], [1, [2]]);
  assert.deepEqual(order, ['c:events.create run_created', '0:events.list']);
  // From the break on, nothing is held.
  await call(orch, 'events.create', 'run_completed');
  assert.equal(order.at(-1), '0:events.create run_completed');
  await gate.plan.done();
});

test('a plan holds a late read\'s answer until the entries before its answer are answered, and lets it go on a break', async () => {
  const plan = () => [
    entry('r0|client||0|events.create|run_created||1'),
    entry('r0|run||1|events.create|run_started||1'),
    entry('r0|run||1|events.list|||1', { answer_after: 3 }),
    entry('r0|step|0/1|1|events.create|step_started|0/1|1'),
  ];
  {
    const { gate, order, deliver, call } = planDriver(plan());
    await call(null, 'events.create', 'run_created');
    const orch = deliver(0);
    await call(orch, 'events.create', 'run_started');
    // A queued step's delivery is under way (no call of it held): the
    // gate is not quiescent while it works.
    const cons = deliver(1, 'step_b');
    let got = false;
    const list = call(orch, 'events.list').then(() => { got = true; });
    await turns(5);
    assert.equal(order.at(-1), '0:events.list', 'the list itself is released at its turn');
    assert.equal(got, false, 'its answer waits for entry 3');
    assert.equal(gate.escapes.length, 0, 'a delivery still works: no escape');
    await call(cons, 'events.create', 'step_started', { correlation: 'step_b', args: [0, 1] });
    await list;
    assert.equal(gate.plan.report().broken, null);
    await gate.plan.done();
  }
  {
    // Entry 3 never comes: the held answer is all that waits, the plan
    // breaks at entry 3 and the answer goes.
    const { gate, deliver, call } = planDriver(plan());
    await call(null, 'events.create', 'run_created');
    const orch = deliver(0);
    await call(orch, 'events.create', 'run_started');
    await call(orch, 'events.list');
    assert.equal(gate.plan.report().broken.entry, 3);
  }
});

test('stepArgs reads a branch step\'s fan-out and index from the runtime\'s devalue input', () => {
  const enc = (s) => new Uint8Array(Buffer.from(s, 'utf8'));
  assert.deepEqual(stepArgs(enc('devl[{"args":1,"closureVars":-1,"thisVal":-1},[2,3,2],0,1]')), [0, 1]);
  assert.deepEqual(stepArgs(enc('devl[{"args":1,"closureVars":-1,"thisVal":-1},[2,3,4],2,7,0]')), [2, 7]);
  assert.equal(stepArgs(enc('devl[[1,3],[2],4]')), undefined);
  assert.equal(stepArgs(enc('json{}')), undefined);
  assert.equal(stepArgs('devl[]'), undefined);
});

test('stepStatement reads a program step\'s statement from its one argument', () => {
  const enc = (s) => new Uint8Array(Buffer.from(s, 'utf8'));
  assert.equal(stepStatement(enc('devl[{"args":1,"closureVars":-1,"thisVal":-1},[2],13]')), 13);
  // A fan-out branch's (two arguments) is no statement.
  assert.equal(stepStatement(enc('devl[{"args":1,"closureVars":-1,"thisVal":-1},[2,3],0,1]')), undefined);
  assert.equal(stepStatement(enc('json{}')), undefined);
});
