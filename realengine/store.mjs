// The store model of a simlab scenario, imposed on a real World.
//
// simlab's Worlds serve each call after a latency drawn from a distribution
// (min, p50, p90, p99, max; linear between the quantiles, as sim.Dist), from
// bounded pools of read and write slots, and may answer runs.get with a stale
// row. wrapWorld puts the same model in front of a real World object so that
// one scenario drives both sides: a call waits for a slot of its pool, holds it
// for the drawn latency plus the real call, and then answers. Every call is
// recorded (op, event type, outcome, times, delivery) so the summary counts
// what the World saw, not what anyone expected it to see.

import { AsyncLocalStorage } from 'node:async_hooks';
import { stepArgs, stepStatement } from './plan.mjs';

// mulberry32: a small seeded generator, so one seed gives the same draws.
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// quantile is sim.Dist.Quantile: linear between (0,min) (0.5,p50) (0.9,p90)
// (0.99,p99) (1,max). Values are milliseconds.
export function quantile(d, q) {
  const pts = [[0, d.min], [0.5, d.p50], [0.9, d.p90], [0.99, d.p99], [1, d.max]];
  if (q <= 0) return d.min;
  for (let i = 1; i < pts.length; i++) {
    if (q <= pts[i][0]) {
      const [q0, v0] = pts[i - 1];
      const [q1, v1] = pts[i];
      return v0 + ((q - q0) / (q1 - q0)) * (v1 - v0);
    }
  }
  return d.max;
}

export function draw(d, rand) {
  if (!d || d.max === 0) return 0;
  if (d.min === d.max) return d.min;
  return quantile(d, Math.floor(rand() * 1000) / 1000);
}

// Pool serves at most n holders at once, the rest in arrival order; 0 is
// unbounded.
class Pool {
  constructor(n) {
    this.n = n;
    this.busy = 0;
    this.waiting = [];
  }
  async acquire() {
    if (this.n === 0 || this.busy < this.n) {
      this.busy++;
      return;
    }
    await new Promise((resolve) => this.waiting.push(resolve));
  }
  release() {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy--;
  }
}

const sleep = (ms) => (ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve());

// delivery is the queue delivery a World call is made from (AsyncLocalStorage
// follows the runtime's awaits); outside any delivery the caller is the client.
export const delivery = new AsyncLocalStorage();

// A crashed delivery's World call never reaches the store, nor does any
// later one: from the store's side the consumer is gone, as a process that
// died between two calls. The queue sees an HTTP 500 (harness.mjs).
export class Crash extends Error {}

const READS = new Set(['runs.get', 'runs.list', 'events.list', 'events.listByCorrelationId', 'events.get', 'steps.get', 'steps.list']);
const WRITES = new Set(['events.create']);
const TERMINAL_RUN = new Set(['run_completed', 'run_failed', 'run_cancelled']);

// wrapWorld returns a World that behaves as `world` under the store model
// `store` ({runs_get, events_create, events_list: dist; max_concurrent_reads,
// max_concurrent_writes; stale_read, stale_lag_ms}) and records every call in
// `calls`. opts.stripRunContext removes runContext from published step
// messages (a legacy producer); opts.batchCreates adds events.createBatch;
// opts.invoke declares capabilities.invoke (and a world.invoke for hooks);
// opts.crash(call) may return true to crash the current delivery at that call;
// opts.gate (gate.mjs) may hold a call after its drawn latency, just before
// it reaches the real World; opts.listed records what each events.list page
// held; opts.race (race.mjs) runs chosen calls in a
// forced interleaving of their own I/O.
export function wrapWorld(world, store, calls, opts = {}) {
  const gate = opts.gate;
  const rand = rng(opts.seed ?? 1);
  const reads = new Pool(store.max_concurrent_reads ?? 0);
  const writes = new Pool(store.max_concurrent_writes ?? 0);
  const t0 = opts.t0 ?? performance.now();
  const now = () => performance.now() - t0;
  // Every run row the store has answered with, per run, in time order: a stale
  // read answers with the newest row at least `lag` old.
  const rows = new Map();
  const remember = (run) => {
    if (!run?.runId) return;
    const list = rows.get(run.runId) ?? [];
    list.push({ t: now(), run });
    rows.set(run.runId, list);
  };
  const latencyOf = (op) =>
    op === 'runs.get' ? store.runs_get : op === 'events.create' ? store.events_create : op.startsWith('events.list') ? store.events_list : undefined;

  const call = async (op, fn, args) => {
    const d = delivery.getStore();
    // A crashed consumer makes no more calls. Its pending work ends in a
    // throw rather than hanging, so the runtime's in-process state (its
    // per-step single flight) is released as a dead process's would be.
    if (d?.crashed) throw new Crash('simlab: the consumer crashed');
    const rec = { op, start: now(), end: -1, delivery: d?.index ?? -1 };
    if (op === 'events.create') {
      rec.run = args[0];
      rec.event = args[1]?.eventType;
      rec.correlation = args[1]?.correlationId;
      rec.lazy = args[1]?.eventType === 'step_started' && args[1]?.eventData?.input !== undefined;
      // The branch (fan-out, index) a step_created or lazy start is about,
      // from the step's own input.
      if (args[1]?.eventData?.input !== undefined && rec.correlation) {
        rec.args = stepArgs(args[1].eventData.input);
        // A program's step: its statement (a hold rule may name it).
        rec.stmt = stepStatement(args[1].eventData.input);
      }
    } else if (op === 'runs.get' || op === 'steps.get') {
      rec.run = args[0];
    } else if (op.startsWith('events.list')) {
      rec.run = args[0]?.runId;
    }
    calls.push(rec);
    gate?.learn(rec);
    if (d && opts.crash?.(rec, d)) {
      rec.crashed = true;
      d.crash();
      throw new Crash('simlab: the consumer crashed'); // the call never reached the store
    }
    const pool = READS.has(op) ? reads : WRITES.has(op) ? writes : null;
    gate?.phase(rec, 'pool');
    if (pool) await pool.acquire();
    gate?.phase(rec, 'run');
    rec.served = now();
    // A read takes effect when the store serves it and its drawn latency
    // delays only its answer, as in simlab (model/service.go, serve: "A
    // read executes when the store serves it"); a write applies at the end
    // of its latency, as simlab's applies at its answer. Reading after the
    // latency instead let a real list see writes that landed up to a
    // read's whole latency later than simlab's list could.
    const latency = draw(latencyOf(op), rand);
    const readFirst = READS.has(op);
    try {
      if (!readFirst) await sleep(latency);
      const held = gate?.hold(rec);
      if (held) {
        gate.phase(rec, 'gate');
        await held;
        rec.released = now();
        gate.phase(rec, 'run');
      }
      const t = now();
      // A call of a forced race (race.mjs) runs in its call's context, so
      // that the real World's own I/O keeps to the race's schedule.
      const res = await (opts.race ? opts.race.run(rec, () => fn(...args)) : fn(...args));
      rec.real = now() - t; // the real World's own time, on top of the draw
      rec.result = 'ok';
      gate?.answered(rec);
      if (op === 'events.create') {
        remember(res?.run);
        // The run's identity, from the first write that answers with its
        // row (the client's run_created may lose to the run's own
        // invocation, which creates the run on its run_started): a hold
        // rule may name an entity by its ordinal in the run's
        // correlation-id sequence.
        if (res?.run) gate?.runSeen(res.run);
        if (res?.step) rec.attempt = res.step.attempt;
        // opts.onCreated: the event the World stored (an outside driver
        // learns the run's hooks and waits from it).
        opts.onCreated?.(args[0], res?.event ?? args[1]);
      }
      if (op === 'events.list' && Array.isArray(res?.data)) {
        // What a replay reading this page sees: its length and the run's
        // terminal events in it.
        rec.events = res.data.length;
        rec.run_ends = res.data.filter((e) => TERMINAL_RUN.has(e.eventType)).length;
        // opts.listed: what the page held, event type and step, in order.
        if (opts.listed) rec.listed = res.data.map((e) => (e.correlationId ? `${e.eventType} ${e.correlationId}` : e.eventType));
      }
      if (op === 'runs.get') {
        if (rec.planStale) {
          // A plan's stale read (simlab reproduce): the history's read saw
          // an older row of this status; answer the newest such row the
          // store has answered with, or the run as created.
          let old = rec.planStale === 'pending' ? { ...res, status: 'pending', startedAt: undefined } : undefined;
          for (const h of rows.get(res.runId) ?? []) if (h.run.status === rec.planStale) old = h.run;
          remember(res);
          if (old && old.status !== res.status) {
            rec.stale = true;
            rec.status = old.status;
            return old;
          }
          rec.status = res.status;
          return res;
        }
        if (store.stale_read > 0 && rand() < store.stale_read) {
          const lag = rand() * (store.stale_lag_ms ?? 0);
          const hist = rows.get(res.runId) ?? [];
          // The newest row at least `lag` old; a lag reaching back before
          // any row the store answered with sees the run as created:
          // pending, not started.
          let old = { ...res, status: 'pending', startedAt: undefined };
          for (const h of hist) if (h.t <= now() - lag) old = h.run;
          remember(res);
          if (old && old.status !== res.status) {
            // A stale replica answers with the whole old row (a pending
            // row has no startedAt yet), not the new row with an old status.
            rec.stale = true;
            rec.status = old.status;
            return old;
          }
        } else {
          remember(res);
        }
        rec.status = res.status;
      }
      return res;
    } catch (err) {
      rec.result = err?.name ?? 'Error';
      rec.error = String(err?.message ?? err).slice(0, 200);
      throw err;
    } finally {
      if (readFirst) await sleep(latency);
      rec.end = now();
      if (pool) pool.release();
      gate?.phase(rec, 'done');
      // A plan's read the History answered late: its answer reaches the
      // runtime at its turn (the record keeps when the World answered).
      const turn = gate?.answerTurn(rec);
      if (turn) await turn;
    }
  };

  // createBatch stands in for a World with events.createBatch (simlab's
  // store.batch_creates): world-local has none, so the runtime would take
  // its single-event path. The batch is one write of the store model (one
  // slot, one drawn latency) whose events the real World applies in order;
  // each event is recorded as its own events.create so the counts read the
  // same either way. Not atomic against a concurrent writer, as the World
  // contract asks of a real createBatch — enough for a fan-out's fresh
  // step_created events and inline pre-claims, which nothing else writes.
  const createBatch = async (target, runId, events, params) => {
    const d = delivery.getStore();
    const rec = { op: 'events.createBatch', start: now(), end: -1, delivery: d?.index ?? -1, run: runId, size: events.length };
    calls.push(rec);
    await writes.acquire();
    rec.served = now();
    try {
      await sleep(draw(store.events_create, rand));
      // Events of one entity apply in order (the born-running pair), the
      // entities side by side: the batch's own time stays one write's.
      const results = new Array(events.length);
      const groups = new Map();
      events.forEach((item, i) => {
        const key = item.event?.correlationId ?? `#${i}`;
        if (!groups.has(key)) groups.set(key, []);
        groups.get(key).push(i);
      });
      await Promise.all([...groups.values()].map(async (idxs) => {
        for (const i of idxs) {
          const item = events[i];
          const sub = { op: 'events.create', batch: true, start: rec.start, served: rec.served, end: -1, delivery: rec.delivery, run: runId,
            event: item.event?.eventType, correlation: item.event?.correlationId, lazy: false };
          calls.push(sub);
          try {
            const res = await target.create(runId, item.event, { requestId: params?.requestId });
            sub.result = 'ok';
            gate?.answered(sub);
            if (res?.step) sub.attempt = res.step.attempt;
            results[i] = { status: 200, event: res.event, run: res.run, step: res.step, wait: res.wait };
          } catch (err) {
            sub.result = err?.name ?? 'Error';
            sub.error = String(err?.message ?? err).slice(0, 200);
            results[i] = { status: err?.status ?? 409, error: err?.code ?? 'conflict', message: String(err?.message ?? err) };
          } finally {
            sub.end = now();
          }
        }
      }));
      rec.result = 'ok';
      return { results };
    } finally {
      rec.end = now();
      writes.release();
    }
  };

  const wrapGroup = (name, group) =>
    new Proxy(group, {
      get(target, prop, recv) {
        if (name === 'events' && prop === 'createBatch' && opts.batchCreates) {
          return (runId, events, params) => createBatch(target, runId, events, params);
        }
        const v = Reflect.get(target, prop, recv);
        if (typeof v !== 'function') return v;
        const op = `${name}.${String(prop)}`;
        return (...args) => call(op, v.bind(target), args);
      },
    });

  const wrapped = new Proxy(world, {
    get(target, prop, recv) {
      if (prop === 'runs' || prop === 'events' || prop === 'steps' || prop === 'hooks') return wrapGroup(prop, target[prop]);
      if (prop === 'queue') {
        return async (queueName, message, qopts) => {
          const d = delivery.getStore();
          if (d?.crashed) throw new Crash('simlab: the consumer crashed');
          const rec = { op: 'queue', start: now(), end: -1, delivery: d?.index ?? -1, queue: queueName, step: message?.stepId, runContext: message?.runContext !== undefined,
            ctxStartedAt: message?.runContext?.startedAt !== undefined, delay: qopts?.delaySeconds ?? 0, stepInput: message?.stepInput !== undefined,
            key: qopts?.idempotencyKey ?? '' };
          calls.push(rec);
          if (opts.stripRunContext && message?.runContext !== undefined) {
            message = { ...message };
            delete message.runContext;
            rec.stripped = true;
          }
          gate?.phase(rec, 'run');
          try {
            await sleep(draw(store.publish, rand));
            const res = await target.queue(queueName, message, qopts);
            rec.message = res?.messageId;
            gate?.published(res?.messageId, qopts?.delaySeconds ?? 0);
            return res;
          } finally {
            rec.end = now();
            gate?.phase(rec, 'done');
          }
        };
      }
      if (opts.invoke && prop === 'capabilities') {
        // The World declares at most one active workflow runner per run
        // (@workflow/world beta.37's capabilities.invoke); the harness's
        // handler keeps that promise with a lane per run (harness.mjs).
        return { ...(target.capabilities ?? {}), invoke: true };
      }
      if (opts.invoke && prop === 'invoke') {
        // Core calls world.invoke only to resume a hook; the harness's
        // workflow has none.
        return async () => {
          throw new Error('simlab harness: world.invoke (hook resumes) is not served over world-local');
        };
      }
      const v = Reflect.get(target, prop, recv);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { world: wrapped, now, deliverLatency: () => draw(store.deliver, rand), rand };
}
