// gate.mjs forces an interleaving of a batch's calls on the real World: a
// schedule names, in order, the steps the calls take (call i's k-th step),
// and a call that reaches the start of a step waits until every step
// before it in the schedule has finished. A step is a contiguous run of the
// World's own I/O: file-system calls (world-local) or SQL statements
// (world-postgres), from the operation that begins it to the one that
// begins the call's next step (or the call's answer). Which operations begin
// a step is the model's account of the adapter (world.Txn in model/world):
// if it is wrong, the forced batch either answers otherwise than the model
// said it would (the test's verdict) or cannot go on (reported, below).
//
// Operations are tied to calls with an AsyncLocalStorage context set around
// each call of a batch. Nothing here waits on a clock: a schedule that cannot
// be honoured (every call still running waits at a gate, no operation is in
// flight, and nothing happened over two turns of the event loop) lets its
// earliest waiter go and reports the step it had to break.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';

const als = new AsyncLocalStorage();

// The gate of the batch in progress, or null.
let current = null;
let inflight = 0;
let activity = 0;

export function runInCall(ctx, fn) {
  return als.run(ctx, fn);
}

// newGate arms a schedule ([[call, step], ...]) for a batch of n calls,
// late of which are still to come (lateArrived): while one is, the gate
// does not break its schedule for want of activity (the late call is on its
// way once an earlier call has answered, through the runtime's own awaits).
export function newGate(schedule, n, late = 0) {
  const pos = new Map();
  schedule.forEach(([c, k], p) => pos.set(`${c}:${k}`, p));
  const g = {
    pos,
    completed: new Array(schedule.length).fill(false),
    current: new Array(n).fill(-1), // each call's step in progress
    waiters: [], // {p, resolve}
    finished: new Array(n).fill(false),
    broken: [],
    checking: false,
    late,
  };
  current = g;
  return g;
}

// lateArrived says one of the gate's late calls has come.
export function lateArrived(g) {
  g.late--;
  activity++;
  wake(g);
}

export function closeGate(g) {
  if (current === g) current = null;
}

function completeStep(g, call) {
  const k = g.current[call];
  if (k < 0) return;
  const p = g.pos.get(`${call}:${k}`);
  if (p !== undefined) g.completed[p] = true;
}

function mayStart(g, p) {
  for (let q = 0; q < p; q++) if (!g.completed[q]) return false;
  return true;
}

function wake(g) {
  for (let i = 0; i < g.waiters.length; ) {
    const w = g.waiters[i];
    if (mayStart(g, w.p)) {
      g.waiters.splice(i, 1);
      w.resolve();
    } else {
      i++;
    }
  }
  watch(g);
}

// watch looks, two turns of the event loop after the last change, for a
// schedule that can no longer be honoured.
function watch(g) {
  if (g.checking || g.waiters.length === 0) return;
  g.checking = true;
  const seen = activity;
  setImmediate(() =>
    setImmediate(() => {
      g.checking = false;
      if (current !== g || g.waiters.length === 0) return;
      if (inflight === 0 && activity === seen && g.late === 0) {
        g.waiters.sort((a, b) => a.p - b.p);
        const w = g.waiters.shift();
        g.broken.push(w.label);
        w.resolve();
      }
      watch(g);
    }),
  );
}

// beginStep is called when call ctx reaches the start of its next step.
async function beginStep(ctx) {
  const g = current;
  if (!g || ctx.gate !== g) return;
  completeStep(g, ctx.call);
  const k = g.current[ctx.call] + 1;
  g.current[ctx.call] = k;
  activity++;
  wake(g);
  const p = g.pos.get(`${ctx.call}:${k}`);
  if (debug) debugWrite(`gate: call ${ctx.call} begins step ${k} (schedule position ${p}, ${p === undefined || mayStart(g, p) ? 'goes' : 'waits'}; completed ${g.completed})\n`);
  if (p === undefined || mayStart(g, p)) return;
  await new Promise((resolve) => {
    g.waiters.push({ p, resolve, label: `call ${ctx.call} step ${k}` });
    watch(g);
  });
}

// finishCall is called when call ctx has answered: its last step is done.
export function finishCall(ctx) {
  const g = current;
  if (!g || ctx.gate !== g) return;
  completeStep(g, ctx.call);
  g.finished[ctx.call] = true;
  activity++;
  wake(g);
}

// A classifier decides, for each operation of a call, whether the call's
// next step begins before it ('before'), right after it has completed
// ('after', used where the adapter then takes an in-process lock that no
// I/O shows), both, or not at all: (ctx, op) -> 'before' | 'after' |
// 'both' | false.
// ctx carries the call's kind (op, type, lazy) and the classifier's state.
async function around(op, fn, classify, afterward) {
  const ctx = als.getStore();
  const gated = ctx && ctx.gate && ctx.gate === current;
  let b = false;
  if (gated) {
    b = classify(ctx, op);
    if (debug) debugWrite(`gate: call ${ctx.call} ${b ? b + ' ' + (ctx.gate.current[ctx.call] + 1) : '        '} ${op.name} ${String(op.args?.[op.name === 'rename' || op.name === 'link' ? 1 : 0] ?? op.text ?? '').replace(/.*\/data\//, '').slice(0, 90)}\n`);
    if (b === 'before' || b === 'both') await beginStep(ctx);
    ctx.ops = (ctx.ops ?? 0) + 1;
  }
  inflight++;
  let r;
  let err;
  let failed = false;
  try {
    r = await fn();
  } catch (e) {
    // A probe that finds nothing (stat: ENOENT) still ends where a step
    // begins: the adapter expects the error.
    err = e;
    failed = true;
  } finally {
    inflight--;
    activity++;
    if (current) wake(current);
  }
  if (b === 'after' || b === 'both' || (gated && afterward?.(ctx, op, r, failed))) await beginStep(ctx);
  if (failed) throw err;
  return r;
}

// SIMLAB_GATE_DEBUG=FILE appends every gated operation to FILE.
const debugFile = process.env.SIMLAB_GATE_DEBUG;
const debug = !!debugFile;
const debugWrite = (s) => require_('node:fs').appendFileSync(debugFile, s);
function require_(m) {
  return createRequire(import.meta.url)(m);
}

// world-local (dist/storage/events-storage.js, createImpl), per call:
//   - every call: a step begins before its first operation;
//   - a run event: its run-file write begins right after the slot probe
//     (stat of the next event file) that comes just before the adapter
//     takes its run-file lock (writeRunUnderLifecycleLock): for run_started
//     the first probe, for a terminal event the probe after the rescan of
//     the events directory (mintDominantEventKey); its publish begins before
//     the link that makes the event file visible;
//   - step_created, step_started, step_failed: the write begins right after
//     the read of the run file (under the step's in-process lock); a lazy
//     step_started's step_started begins right after its step_created's
//     link.
function classifyLocal(runOf) {
  return (ctx, op) => {
    const run = runOf(ctx);
    const path0 = String(op.args?.[0] ?? '');
    const path1 = String(op.args?.[1] ?? '');
    const isRunFile = (p) => p.endsWith(`runs/${run}.json`);
    const isEventFile = (p) => p.includes(`events/${run}-evnt_`) && !p.includes('.tmp');
    const first = !ctx.ops;
    if (ctx.op !== 'event') return first ? 'before' : false;
    if (!ctx.type.startsWith('step_')) {
      if (first) return 'before';
      ctx.st ??= 'read';
      if (ctx.st === 'read') {
        if (op.name === 'readdir' && path0.endsWith('events')) ctx.rescanned = true;
        const probe = op.name === 'stat' && isEventFile(path0);
        if (probe && (ctx.type === 'run_started' || ctx.rescanned)) {
          ctx.st = 'write';
          return 'after';
        }
        return false;
      }
      if (ctx.st === 'write' && op.name === 'link' && isEventFile(path1)) {
        ctx.st = 'published';
        return 'before';
      }
      return false;
    }
    if (ctx.type === 'step_completed' || ctx.type === 'step_retrying') return first ? 'before' : false;
    if (!ctx.readRun && op.name === 'readFile' && isRunFile(path0)) {
      // The read of the run is the call's first operation: its step begins
      // before it, and the write right after it.
      ctx.readRun = true;
      return first ? 'both' : 'after';
    }
    if (first) return 'before';
    if (ctx.lazy && ctx.readRun && !ctx.linked && op.name === 'link' && isEventFile(path1)) {
      ctx.linked = true;
      return 'after';
    }
    return false;
  };
}

// instrumentLocal wraps the file-system functions world-local calls.
export function instrumentLocal(runOf) {
  const require = createRequire(import.meta.url);
  const fsp = require('node:fs').promises;
  const classify = classifyLocal(runOf);
  for (const name of ['readFile', 'writeFile', 'rename', 'link', 'unlink', 'stat', 'access', 'readdir', 'mkdir', 'rm', 'open']) {
    const orig = fsp[name];
    if (typeof orig !== 'function') continue;
    fsp[name] = function (...args) {
      return around({ name, args }, () => orig.apply(this, args), classify);
    };
  }
}

// world-postgres (dist/storage.js, events.create): a step begins before
// every statement but the ones that carry one on (deleting hooks and waits
// but the first, a transaction's statements after its BEGIN but its guarded
// UPDATE, the SELECT after it and step_started's INSERT, its COMMIT); and, where the event's id is
// minted in the JavaScript that goes on after a statement answered (not in a
// transaction), right after that statement: run_started's UPDATE,
// step_created's INSERT of the row, a step write's guarded UPDATE that
// matched its row or the SELECT after one that did not, when the write goes
// on. A terminal run event's mint follows its two deletes, whose first begins
// that step.
const terminalStep = new Set(['completed', 'failed']);

function kindOf(text) {
  const t = text.trim().toLowerCase();
  if (t.startsWith('begin')) return 'begin';
  if (t.startsWith('commit') || t.startsWith('rollback')) return 'end';
  const table = /"workflow_(runs|steps|events|hooks|waits)"/.exec(t)?.[1] ?? '';
  const verb = t.split(/\s+/)[0];
  return `${verb}_${table}`;
}

function classifyPostgres(ctx, op) {
  const k = kindOf(op.text);
  const prev = ctx.lastKind;
  ctx.lastKind = k;
  op.kind = k;
  op.prev = prev;
  if (k === 'end') return false;
  if (k.startsWith('delete_')) {
    // A terminal run event's deletes: the first begins the mint's step.
    if (ctx.deleted) return false;
    ctx.deleted = true;
    return 'before';
  }
  if (ctx.inTx && ctx.type === 'step_started') {
    if (k === 'update_steps') return 'before';
    if (k === 'select_steps' && prev === 'update_steps') return 'before';
    // step_started's own INSERT, after its id was minted behind the
    // UPDATE (or the SELECT after one): it and the COMMIT are one step,
    // so another call can be minted and seen in between.
    if (k === 'insert_events' && (prev === 'update_steps' || prev === 'select_steps')) return 'before';
    return false;
  }
  if (k === 'begin') {
    ctx.inTx = true;
    return 'before';
  }
  return 'before';
}

function afterPostgres(ctx, op, result, failed) {
  if (failed || ctx.inTx) return false;
  const k = op.kind;
  if (ctx.type === 'run_started' && k === 'update_runs') return true;
  if (ctx.type === 'step_created' && k === 'insert_steps') return true;
  if (ctx.type === 'step_completed' || ctx.type === 'step_failed' || ctx.type === 'step_retrying') {
    if (k === 'update_steps') return (result?.rowCount ?? 0) > 0;
    if (k === 'select_steps' && op.prev === 'update_steps') {
      const row = result?.rows?.[0];
      return !!row && !terminalStep.has(row.status);
    }
  }
  return false;
}

// instrumentPostgres wraps node-postgres's Pool#query and Client#query in
// their promise form, as world-postgres (through drizzle) calls them: the
// pool for single statements, a pooled client inside a transaction. (The
// pool runs a statement on a client with a callback: not wrapped twice.)
// pkgURL locates the world-postgres package, whose pg is the one it uses.
export function instrumentPostgres(pkgURL) {
  const require = createRequire(pkgURL);
  const pg = require('pg');
  for (const proto of [pg.Pool.prototype, pg.Client.prototype]) {
    const orig = proto.query;
    proto.query = function (config, values, cb) {
      const ctx = als.getStore();
      if (!ctx || !ctx.gate || typeof cb === 'function' || typeof values === 'function') {
        return orig.call(this, config, values, cb);
      }
      const text = typeof config === 'string' ? config : (config?.text ?? '');
      return around({ name: 'query', text }, () => orig.call(this, config, values), classifyPostgres, afterPostgres);
    };
  }
}
