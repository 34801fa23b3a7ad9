// driver.mjs hosts one real, published World for simlab's differential
// conformance test (conformance/*.go, driven from realworld/*.go). It reads World calls as JSON lines on
// stdin and answers each with one JSON line on stdout: the real World's answer
// (accepted, or the error class) and the run's and the step's status and
// attempt read back right after the call.
//
//   node driver.mjs --world wl-fixed|wl-pre|wl-b46|wpg-pre|wpg-b29 --dir TMPDIR
//
// world-local keeps its data in TMPDIR/data; world-postgres uses the database
// named by WORKFLOW_POSTGRES_URL (the Go test starts a throwaway cluster and
// applies the package's migrations before starting this driver). Nothing is
// written outside TMPDIR.
//
// Requests (one JSON object a line):
//   {"op":"create_run","run":"KEY"}            run_created; KEY names the run from now on
//   {"op":"event","run":"KEY","type":T,"step":"CORR","lazy":bool,"retry_after_hours":H,"peer_run":"KEY2"}
//   {"op":"event","run":"KEY","type":"hook_created|hook_received|hook_disposed","hook":"CORR","token":"TOKEN"}
//   {"op":"quit"}
// Answer: {"res":"ok|run_expired|entity_conflict|not_found|too_early|other",
//          "msg":"...", "run":"STATUS|", "step":"STATUS|", "attempt":N,
//          "peer_step":"STATUS|", "peer_attempt":N,
//          "event":"TYPE", "hook":"live|", "owner":"CORR|", "hook_log":[TYPE...]}
// peer_run (optional) names another run whose step CORR also is: its row
// under CORR is read back too, as peer_step and peer_attempt.
// retry_after_hours is relative to the wall clock: the test only uses values
// hours away from now, so the clock never decides an answer.
//
// Hook events are written the way core writes them (runtime/
// suspension-handler.js, runtime/resume-hook.js): hook_created carries
// {token, isWebhook: false}, hook_disposed {token}, hook_received {token,
// payload} and, on a World that says it deduplicates resumes
// (capabilities.hookResumeDedup), a fresh resumeId and the payload's SHA-256
// digest. Their answer adds the type of the event the World logged ("event":
// hook_conflict where a hook_created met a held token), and reads back the
// hook (hooks.get: "live" or "" when the World says not found), the token's
// owner (hooks.getByToken: the owning hook's correlation id, "" when not
// found) and the run's log entries under the hook's correlation id.
import { createHash, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';
import { closeGate, finishCall, instrumentLocal, instrumentPostgres, newGate, runInCall } from './gate.mjs';

const args = process.argv.slice(2);
function flag(name) {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : undefined;
}
const which = flag('--world');
const dir = flag('--dir');
const packages = { 'wl-fixed': 'wl-fixed', 'wl-pre': 'wl-pre', 'wl-b46': 'wl-b46', 'wpg-pre': 'wpg-pre', 'wpg-b29': 'wpg-b29' };
if (!packages[which] || !dir) {
  process.stderr.write('usage: node driver.mjs --world wl-fixed|wl-pre|wl-b46|wpg-pre|wpg-b29 --dir TMPDIR\n');
  process.exit(2);
}

// Forced interleavings (gate.mjs): the World's own I/O is wrapped before the
// World is loaded, so that a batch with a schedule can hold each call at the
// start of its steps.
if (which.startsWith('wpg-')) instrumentPostgres(import.meta.resolve(packages[which]));
else instrumentLocal((ctx) => ctx.runId);

const mod = await import(packages[which]);
let world;
if (which.startsWith('wpg-')) {
  if (!process.env.WORKFLOW_POSTGRES_URL) {
    process.stderr.write('driver: WORKFLOW_POSTGRES_URL is not set\n');
    process.exit(2);
  }
  // Storage only: world.start() would boot the job queue, which this test
  // does not use.
  world = mod.createWorld({ connectionString: process.env.WORKFLOW_POSTGRES_URL, maxPoolSize: 10 });
} else {
  world = mod.createWorld({ dataDir: path.join(dir, 'data'), recoverActiveRuns: false });
  await world.start();
}

// The spec version the World itself writes; older @workflow/world packages
// nested under each World define it when the World does not say.
let specVersion = world.specVersion;
if (specVersion === undefined) {
  const require = createRequire(import.meta.resolve(packages[which]));
  const w = await import(pathToFileURL(require.resolve('@workflow/world')).href);
  specVersion = w.SPEC_VERSION_CURRENT;
}

const runs = new Map(); // KEY -> real run id
const bytes = new Uint8Array([1, 2, 3]);

function classify(err) {
  const name = err?.name ?? '';
  const msg = String(err?.message ?? err);
  if (name === 'RunExpiredError') return ['run_expired', msg];
  if (name === 'EntityConflictError') return ['entity_conflict', msg];
  if (name === 'TooEarlyError') return ['too_early', msg];
  if (name === 'HookNotFoundError') return ['not_found', msg];
  if (/not found/i.test(msg) && name !== 'RunNotSupportedError') return ['not_found', msg];
  return ['other', `${name}: ${msg}`];
}

function eventData(req) {
  switch (req.type) {
    case 'run_created':
      return { deploymentId: 'dpl_conformance', workflowName: 'wf', input: bytes };
    case 'step_created':
      return { stepName: 'step', input: bytes };
    case 'step_started':
      return req.lazy ? { stepName: 'step', input: bytes } : undefined;
    case 'step_completed':
      return { result: bytes };
    case 'step_failed':
    case 'run_failed':
      return { error: bytes };
    case 'step_retrying':
      return {
        error: bytes,
        retryAfter: new Date(Date.now() + (req.retry_after_hours ?? 0) * 3600 * 1000),
      };
    case 'run_completed':
      return { output: bytes };
    case 'hook_created':
      return { token: req.token, isWebhook: false };
    case 'hook_received':
      return { token: req.token, payload: bytes };
    case 'hook_disposed':
      return { token: req.token };
    default:
      return undefined;
  }
}

async function readBack(runId, stepId) {
  let run = '';
  let step = '';
  let attempt = 0;
  if (runId) {
    try {
      run = (await world.runs.get(runId, { resolveData: 'none' })).status;
    } catch {
      run = '';
    }
    if (stepId) {
      try {
        const s = await world.steps.get(runId, stepId, { resolveData: 'none' });
        if (s) {
          step = s.status;
          attempt = s.attempt;
        }
      } catch {
        step = '';
      }
    }
  }
  return { run, step, attempt };
}

// newEvent is the events.create argument of an event request.
function newEvent(req) {
  const ev = { eventType: req.type, specVersion };
  if (req.step) ev.correlationId = req.step;
  if (req.hook) ev.correlationId = req.hook;
  const data = eventData(req);
  if (data !== undefined) ev.eventData = data;
  return ev;
}

// eventParams is the params argument core passes with the event: a
// hook_received on a World that deduplicates resumes carries a per-call
// resumeId and the payload's digest (resume-hook.js).
function eventParams(req) {
  if (req.type !== 'hook_received' || world.capabilities?.hookResumeDedup !== true) return undefined;
  return { resumeId: randomUUID(), resumePayloadDigest: createHash('sha256').update(bytes).digest('hex') };
}

// readHook reads a hook back by its correlation id (hooks.get) and its token
// (hooks.getByToken). world-postgres's hooks.get reads a missing row's
// fields without looking (a TypeError reading 'metadata'); that, like a
// not-found error, is a missing hook.
async function readHook(hookId, token) {
  const out = { hook: '', owner: '' };
  if (hookId) {
    try {
      const h = await world.hooks.get(hookId, { resolveData: 'none' });
      out.hook = h && h.hookId === hookId ? 'live' : `unreadable: hooks.get answered ${JSON.stringify(h?.hookId)}`;
    } catch (err) {
      const [res, msg] = classify(err);
      if (res !== 'not_found' && !(which.startsWith('wpg-') && err instanceof TypeError && /reading 'metadata'/.test(msg))) out.hook = `unreadable: ${msg}`;
    }
  }
  if (token) {
    try {
      const h = await world.hooks.getByToken(token);
      out.owner = h?.hookId ?? `unreadable: hooks.getByToken answered no hook`;
    } catch (err) {
      const [res, msg] = classify(err);
      if (res !== 'not_found') out.owner = `unreadable: ${msg}`;
    }
  }
  return out;
}

// hookLog is the types of the run's logged events under one correlation id,
// in the log's order.
async function hookLog(runId, corr) {
  try {
    return (await readLog(runId)).filter((e) => e.endsWith(`:${corr}`)).map((e) => e.slice(0, e.indexOf(':')));
  } catch (err) {
    return [`unreadable: ${classify(err)[1]}`];
  }
}

async function handle(req) {
  if (req.op === 'create_run') {
    try {
      const r = await world.events.create(null, {
        eventType: 'run_created',
        specVersion,
        eventData: eventData({ type: 'run_created' }),
      });
      const id = r.run?.runId ?? r.event?.runId;
      runs.set(req.run, id);
      return { res: 'ok', msg: '', ...(await readBack(id)) };
    } catch (err) {
      const [res, msg] = classify(err);
      return { res, msg, run: '', step: '', attempt: 0 };
    }
  }
  if (req.op !== 'event') {
    return { res: 'other', msg: `driver: unknown op ${JSON.stringify(req.op)}`, run: '', step: '', attempt: 0 };
  }
  const runId = runs.get(req.run);
  if (!runId) {
    return { res: 'other', msg: `driver: unknown run key ${JSON.stringify(req.run)}`, run: '', step: '', attempt: 0 };
  }
  const ev = newEvent(req);
  let res = 'ok';
  let msg = '';
  let logged = '';
  try {
    const r = await world.events.create(runId, ev, eventParams(req));
    logged = r?.event?.eventType ?? '';
  } catch (err) {
    [res, msg] = classify(err);
  }
  const answer = { res, msg, ...(await readBack(runId, req.step)) };
  if (req.hook) {
    if (res === 'ok') answer.event = logged;
    Object.assign(answer, await readHook(req.hook, req.token));
    answer.hook_log = await hookLog(runId, req.hook);
  }
  if (req.peer_run) {
    const peer = await readBack(runs.get(req.peer_run), req.step);
    answer.peer_step = peer.step;
    answer.peer_attempt = peer.attempt;
  }
  return answer;
}

// ---------------------------------------------------------------------------
// Concurrent batches (realworld/concurrent*.go): every call of a batch is
// issued at once on the World, each stamped with its invocation and response
// on one monotonic clock, then the rows and logs are read back.
//
//   {"op":"batch","calls":[CALL...],"readback":[{"run":KEY,"steps":[CORR...],"hooks":[CORR...],"tokens":[TOKEN...]}],
//    "schedule":[[CALL_INDEX, STEP], ...]}
//   CALL: {"op":"event",...as above...,"delay_ticks":K,"delay_us":U,"after":I}
//       | {"op":"get_run","run":KEY} | {"op":"get_step","run":KEY,"step":CORR}
//       | {"op":"list_events","run":KEY}
// Answer: {"answers":[{"res","msg","t0","t1","run","step","attempt","log","event"}],
//          "readback":[{"run","steps":[{"step","attempt"}],"log","t0","t1","hooks","owners"}]}
// A hook event's answer carries the type of the event the World logged
// ("event"); a read-back that names hooks and tokens reads each hook back
// ("hooks": "live" or "", as readHook) and each token's owner ("owners": a
// hook's correlation id or "").
// t0/t1 are nanoseconds on process.hrtime since the driver started; a call's
// interval covers the World call only. delay_ticks holds a call back for K
// turns of the event loop after the batch starts (setImmediate), delay_us
// for U microseconds on the monotonic clock (yielding the loop meanwhile),
// after until call I of the batch has answered: so that a repetition can aim
// a call at a later point of the others (a targeted repetition); none of
// them issues it with the rest. schedule, when given, forces the order in
// which the calls take their steps (gate.mjs); the answer then says which
// steps it had to let go out of order ("broken"). A read's answer is its row or log;
// a row the World cannot give back is "unreadable: <why>", a missing one "".
const epoch = process.hrtime.bigint();

// What an unreadable world-postgres run row holds, read past the World's
// schema with a plain query: its status and which of output, error and
// completedAt it carries ("" for world-local, whose rows are written whole).
let rawPool;
if (which.startsWith('wpg-')) {
  const require = createRequire(import.meta.resolve(packages[which]));
  const pg = require('pg');
  rawPool = new pg.Pool({ connectionString: process.env.WORKFLOW_POSTGRES_URL, max: 2 });
}
async function rawRun(runId) {
  if (!rawPool) return '';
  const q = await rawPool.query(
    `SELECT status, (output_cbor IS NOT NULL OR output IS NOT NULL) AS o,
            (error_cbor IS NOT NULL OR error IS NOT NULL) AS e, completed_at IS NOT NULL AS c
       FROM workflow.workflow_runs WHERE id = $1`,
    [runId],
  );
  const r = q.rows[0];
  if (!r) return '(no row)';
  return `(${r.status}${r.o ? '+output' : ''}${r.e ? '+error' : ''}${r.c ? '+completedAt' : ''})`;
}
const clock = () => Number(process.hrtime.bigint() - epoch);

// readRun is runs.get's answer. raw (read-backs, after a batch, when
// nothing else runs) adds what an unreadable row holds; a read inside a batch
// does not, since the row may change between the two reads.
async function readRun(runId, raw) {
  try {
    const r = await world.runs.get(runId, { resolveData: 'none' });
    return r?.status ?? 'unreadable: runs.get answered no row';
  } catch (err) {
    const [res, msg] = classify(err);
    if (res === 'not_found') return '';
    return `unreadable${raw ? await rawRun(runId) : ''}: ${msg}`;
  }
}

async function readStep(runId, stepId) {
  try {
    const s = await world.steps.get(runId, stepId, { resolveData: 'none' });
    return s ? { step: s.status, attempt: s.attempt } : { step: '', attempt: 0 };
  } catch (err) {
    const [res, msg] = classify(err);
    return { step: res === 'not_found' ? '' : `unreadable: ${msg}`, attempt: 0 };
  }
}

// readLog lists the whole log, every page, as "type" or "type:CORR".
async function readLog(runId) {
  const out = [];
  let cursor;
  for (let page = 0; page < 1000; page++) {
    const p = await world.events.list({ runId, pagination: { limit: 100, cursor }, resolveData: 'none' });
    for (const e of p.data) out.push(e.correlationId ? `${e.eventType}:${e.correlationId}` : e.eventType);
    if (!p.hasMore) return out;
    cursor = p.cursor;
  }
  return [...out, 'unreadable: more than 1000 pages'];
}

function ticks(k) {
  let p = Promise.resolve();
  for (let i = 0; i < k; i++) p = p.then(() => new Promise((r) => setImmediate(r)));
  return p;
}

async function batchCall(c, i, done) {
  if (c.after !== undefined && c.after !== null && c.after >= 0) await done[c.after];
  if (c.delay_ticks) await ticks(c.delay_ticks);
  if (c.delay_us) {
    const until = clock() + c.delay_us * 1000;
    while (clock() < until) await new Promise((r) => setImmediate(r));
  }
  const runId = runs.get(c.run);
  const a = { res: 'ok', msg: '', t0: 0, t1: 0 };
  if (!runId) return { ...a, res: 'other', msg: `driver: unknown run key ${JSON.stringify(c.run)}` };
  a.t0 = clock();
  try {
    switch (c.op) {
      case 'event': {
        const r = await world.events.create(runId, newEvent(c), eventParams(c));
        if (c.hook) a.event = r?.event?.eventType ?? '';
        break;
      }
      case 'get_run':
        a.run = await readRun(runId);
        break;
      case 'get_step':
        Object.assign(a, await readStep(runId, c.step));
        break;
      case 'list_events':
        a.log = await readLog(runId);
        break;
      default:
        a.res = 'other';
        a.msg = `driver: unknown batch op ${JSON.stringify(c.op)}`;
    }
  } catch (err) {
    [a.res, a.msg] = classify(err);
  }
  a.t1 = clock();
  return a;
}

async function batch(req) {
  // Every call starts here, in this turn of the event loop: none waits for
  // another's answer.
  const calls = req.calls ?? [];
  const done = [];
  const settle = [];
  for (let i = 0; i < calls.length; i++) done.push(new Promise((r) => settle.push(r)));
  const gate = req.schedule ? newGate(req.schedule, calls.length) : null;
  const answers = await Promise.all(
    calls.map(async (c, i) => {
      if (c.after !== undefined && c.after !== null && (c.after < 0 || c.after >= calls.length || c.after === i)) {
        settle[i]();
        return { res: 'other', msg: `driver: after ${c.after}: not another call of the batch`, t0: 0, t1: 0 };
      }
      const ctx = { gate, call: i, op: c.op, type: c.type ?? '', lazy: !!c.lazy, runId: runs.get(c.run) };
      const a = gate ? await runInCall(ctx, () => batchCall(c, i, done)) : await batchCall(c, i, done);
      if (gate) finishCall(ctx);
      settle[i]();
      return a;
    }),
  );
  if (gate) closeGate(gate);
  const readback = [];
  for (const rb of req.readback ?? []) {
    const runId = runs.get(rb.run);
    const t0 = clock();
    const run = runId ? await readRun(runId, true) : '';
    const steps = [];
    for (const s of rb.steps ?? []) steps.push(runId ? await readStep(runId, s) : { step: '', attempt: 0 });
    let log;
    try {
      log = runId ? await readLog(runId) : [];
    } catch (err) {
      log = [`unreadable: ${classify(err)[1]}`];
    }
    const hooks = [];
    for (const hk of rb.hooks ?? []) hooks.push((await readHook(hk)).hook);
    const owners = [];
    for (const tok of rb.tokens ?? []) owners.push((await readHook('', tok)).owner);
    const back = { run, steps, log, t0, t1: clock() };
    if (hooks.length > 0) back.hooks = hooks;
    if (owners.length > 0) back.owners = owners;
    readback.push(back);
  }
  return gate ? { answers, readback, broken: gate.broken } : { answers, readback };
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  if (line.trim() === '') continue;
  let req;
  try {
    req = JSON.parse(line);
  } catch (err) {
    process.stdout.write(JSON.stringify({ res: 'other', msg: `driver: bad JSON: ${err.message}` }) + '\n');
    continue;
  }
  if (req.op === 'quit') break;
  const answer = req.op === 'batch' ? await batch(req) : await handle(req);
  process.stdout.write(JSON.stringify(answer) + '\n');
}
if (world.close) await world.close();
if (rawPool) await rawPool.end();
process.exit(0);
