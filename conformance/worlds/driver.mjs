// driver.mjs hosts one real, published World for simlab's differential
// conformance test (conformance/*.go). It reads World calls as JSON lines on
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
//   {"op":"quit"}
// Answer: {"res":"ok|run_expired|entity_conflict|not_found|too_early|other",
//          "msg":"...", "run":"STATUS|", "step":"STATUS|", "attempt":N,
//          "peer_step":"STATUS|", "peer_attempt":N}
// peer_run (optional) names another run whose step CORR also is: its row
// under CORR is read back too, as peer_step and peer_attempt.
// retry_after_hours is relative to the wall clock: the test only uses values
// hours away from now, so the clock never decides an answer.
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { pathToFileURL } from 'node:url';

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
  const ev = { eventType: req.type, specVersion };
  if (req.step) ev.correlationId = req.step;
  const data = eventData(req);
  if (data !== undefined) ev.eventData = data;
  let res = 'ok';
  let msg = '';
  try {
    await world.events.create(runId, ev);
  } catch (err) {
    [res, msg] = classify(err);
  }
  const answer = { res, msg, ...(await readBack(runId, req.step)) };
  if (req.peer_run) {
    const peer = await readBack(runs.get(req.peer_run), req.step);
    answer.peer_step = peer.step;
    answer.peer_attempt = peer.attempt;
  }
  return answer;
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
  process.stdout.write(JSON.stringify(await handle(req)) + '\n');
}
if (world.close) await world.close();
process.exit(0);
