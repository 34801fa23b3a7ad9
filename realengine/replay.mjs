// Offline replays through the real @workflow/core: a log in, what core's own
// replay (dist/workflow.js replayWorkflow) makes of it out, with no World and
// no queue. simlab's model/program replay is held against it log by log
// (realengine/replay.go, TestOfflineReplayCorpus).
//
//   node replay.mjs build DIR BUILDERS   compile DIR/programs.ts with the
//                                        builders package BUILDERS (DIR's
//                                        node_modules resolves @workflow/core
//                                        to the release under test)
//   node replay.mjs serve DIR            read cases as JSON lines on stdin,
//                                        answer each with a JSON line
//
// A case: {"id", "workflow": "prog_NAME", "events": [{"type", "kind",
// "ordinal", "name", "result", "resume_at", "token", "resume_id", "at"}],
// "timed"}: with timed, each event's createdAt is the run's creation plus
// its at (ms), else one second after the event before it. An event's
// correlation id is its kind's prefix and the ordinal-th id of the run's
// sequence, computed as core computes it (a monotonic ULID over the VM's
// seeded Math.random, one fixed timestamp); payloads are dehydrated with
// core's own serializer.
//
// Hook events carry what core's hook consumer (dist/workflow/hook.js) and
// @workflow/world's event schemas read. hook_created and hook_conflict:
// eventData.token, the token-th token of the run's token sequence (core
// draws a hook's token with nanoid's customRandom over the same seeded
// Math.random, which after the first correlation id's ULID draws nothing
// else: token j is the j-th nanoid drawn after it), or for token -1 a
// token the run never draws; a hook_conflict also names the run holding
// the token (conflictingRunId). hook_received: eventData.payload, 1
// dehydrated as resumeHook dehydrates it; hook_received and hook_disposed
// carry the token the log's last hook_created or hook_conflict of their
// hook gave it, as resumeHook and the suspension write them (none when the
// log holds no such event before them). A resume_id becomes the event's
// top-level resumeId (a lazy resume's idempotency key: core delivers the
// first hook_received of a resumeId and drops the rest).
//
// The answer: {"id", "outcome": completed|suspended|diverged|failed|hung|error
// (hung: neither suspended nor ended within SIMLAB_REPLAY_HANG_MS, 5 s),
// "pending": [{"ordinal", "kind", "name", "created", "token", "dispose"}],
// "at", "message"}: a pending hook's token is its place in the run's token
// sequence (-1: none of the first 4096), dispose whether the program
// disposed of it with no hook_disposed read (the suspension writes one).
import { readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { compileBundles } from './bundle.mjs';
import { pathToFileURL } from 'node:url';

const [mode, dirArg, buildersPkg] = process.argv.slice(2);
if (!['build', 'serve'].includes(mode) || !dirArg || (mode === 'build' && !buildersPkg)) {
  console.error('usage: node replay.mjs build DIR BUILDERS | serve DIR');
  process.exit(2);
}
const dir = path.resolve(dirArg);

if (mode === 'build') {
  await build();
  process.exit(0);
}
await serve();

async function build() {
  const versions = await compileBundles(dir, buildersPkg, ['programs.ts']);
  await writeFile(path.join(dir, 'build.json'), JSON.stringify(versions) + '\n');
}

async function serve() {
  const coreDir = path.join(dir, 'node_modules', '@workflow', 'core');
  const coreUrl = (p) => pathToFileURL(path.join(coreDir, 'dist', p)).href;
  const coreRequire = createRequire(path.join(coreDir, 'package.json'));

  // Keep core offline. getPortLazy() would probe this process's sockets:
  // pin it. The only World call a replay makes is the end-of-run drain of a
  // program that returns with entities pending (workflow.js
  // drainPendingQueueItems): a stub World refuses it, which core logs and
  // ignores. Core's logs go nowhere: stdout carries the answers.
  globalThis[Symbol.for('@workflow/core//devServerPort/v1')] = { getPort: async () => 3000, cachedPort: 3000, inFlight: undefined };
  const { SPEC_VERSION_CURRENT } = await import(pathToFileURL(coreRequire.resolve('@workflow/world')).href);
  const refuse = new Proxy(function () {}, {
    get: (_t, k) => (k === 'then' || typeof k === 'symbol' ? undefined : refuse),
    apply: () => { throw new Error('offline replay: no World'); },
  });
  const stubWorld = new Proxy({}, {
    get(_t, k) {
      if (k === 'specVersion') return SPEC_VERSION_CURRENT;
      if (k === 'capabilities') return {};
      if (k === 'getEncryptionKeyForRun') return async () => undefined;
      if (k === 'then' || typeof k === 'symbol') return undefined;
      return refuse;
    },
  });
  globalThis[Symbol.for('@workflow/world//cache')] = stubWorld;
  globalThis[Symbol.for('@workflow/world//stubbedCache')] = stubWorld;
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) console[level] = () => {};

  const { replayWorkflow } = await import(coreUrl('workflow.js'));
  const { ReplayPayloadCache } = await import(coreUrl('replay-payload-cache.js'));
  const { createContext } = await import(coreUrl('vm/index.js'));
  const { runIdCreatedAt } = await import(coreUrl('runtime/run-id-time.js'));
  const ser = await import(coreUrl('serialization.js'));
  const { monotonicFactory } = await import(pathToFileURL(coreRequire.resolve('ulid')).href);
  const nanoid = await import(pathToFileURL(coreRequire.resolve('nanoid')).href);
  const coreVersion = JSON.parse(await readFile(path.join(coreDir, 'package.json'), 'utf8')).version;

  // workflows.mjs is `const workflowCode = \`...\`; export const POST = ...`:
  // the replay takes the code itself.
  const bundle = await readFile(path.join(dir, 'workflows.mjs'), 'utf8');
  const m = bundle.match(/const workflowCode = (`[\s\S]*?`);\n\nexport const POST/);
  if (!m) throw new Error(`${dir}/workflows.mjs: no workflowCode`);
  const workflowCode = new Function(`return ${m[1]};`)();

  // One run identity for every case: ids are positional, so a log names
  // its entities by ordinal and the run's sequence decides the strings.
  const startedAt = new Date('2026-01-01T00:00:00.000Z');
  const runId = 'wrun_01KDWQ0Z00AAAAAAAAAAAAAAAA';
  const deploymentId = 'dpl_simlab_offline';
  const fixedTimestamp = runIdCreatedAt(runId) ?? startedAt.getTime() - 1000;
  const sequences = new Map(); // workflow name -> the run's ids, grown on demand
  const ids = (workflowName, n) => {
    let s = sequences.get(workflowName);
    if (!s) {
      const { globalThis: g } = createContext({ seed: `${runId}:${workflowName}:${deploymentId}`, fixedTimestamp });
      const gen = monotonicFactory(() => g.Math.random());
      s = { gen, list: [] };
      sequences.set(workflowName, s);
    }
    while (s.list.length < n) s.list.push(s.gen(fixedTimestamp));
    return s.list;
  };
  // The run's hook tokens: the nanoids the VM's Math.random draws after the
  // first correlation id's ULID (core's generateNanoid in workflow.js; a
  // monotonic ULID at one timestamp draws randomness once, then increments).
  const tokenSequences = new Map();
  const tokens = (workflowName, n) => {
    let s = tokenSequences.get(workflowName);
    if (!s) {
      const { globalThis: g } = createContext({ seed: `${runId}:${workflowName}:${deploymentId}`, fixedTimestamp });
      monotonicFactory(() => g.Math.random())(fixedTimestamp);
      const next = nanoid.customRandom(nanoid.urlAlphabet, 21, (size) => new Uint8Array(size).map(() => 256 * g.Math.random()));
      s = { next, list: [] };
      tokenSequences.set(workflowName, s);
    }
    while (s.list.length < n) s.list.push(s.next());
    return s.list;
  };
  const foreignToken = 'simlab-foreign-token-0';
  const otherRunId = 'wrun_01KDWQ0Z00BBBBBBBBBBBBBBBB';
  const workflowId = (fn) => `workflow//./programs//${fn}`;
  const stepId = (name) => `step//./programs//s_${name}`;
  const stepName = (id) => id.replace(/^step\/\/\.\/programs\/\/s_/, '');

  const hangMS = Number(process.env.SIMLAB_REPLAY_HANG_MS) || 5000;
  const replay = async (c) => {
    const workflowName = workflowId(c.workflow);
    const seq = ids(workflowName, Math.max(0, ...c.events.map((e) => (e.ordinal ?? -1) + 1), 64) + 64);
    const ordinalOf = (correlationId) => {
      const k = seq.indexOf(correlationId.slice(correlationId.indexOf('_') + 1));
      return k;
    };
    const most = Math.max(0, ...c.events.map((e) => (e.token ?? 0) + 1));
    const toks = tokens(workflowName, Math.max(most, 64));
    const tokenString = (t) => (t === -1 ? foreignToken : toks[t ?? 0]);
    const tokenIndex = (s) => {
      if (s === foreignToken) return -1;
      let i = toks.indexOf(s);
      if (i < 0) {
        const more = tokens(workflowName, 4096);
        i = more.indexOf(s);
      }
      return i;
    };
    const hookTokens = new Map(); // ordinal -> the token its last hook_created/hook_conflict gave it
    const events = [];
    for (const [i, e] of c.events.entries()) {
      const createdAt = c.timed ? new Date(fixedTimestamp + (e.at ?? 0)) : new Date(startedAt.getTime() + 1000 * (i + 1));
      const d = {};
      if (e.name) d.stepName = stepId(e.name);
      switch (e.type) {
        case 'run_created':
          d.deploymentId = deploymentId;
          d.workflowName = workflowName;
          d.input = await ser.dehydrateWorkflowArguments([], runId, undefined);
          break;
        case 'step_created':
          d.input = await ser.dehydrateStepArguments([], runId, undefined);
          break;
        case 'step_completed':
          d.result = await ser.dehydrateStepReturnValue(e.result ?? 0, runId, undefined);
          break;
        case 'step_failed':
        case 'step_retrying':
          d.error = await ser.dehydrateStepError(new Error('simlab: step failed'), runId, undefined);
          break;
        case 'wait_created':
          d.resumeAt = new Date(startedAt.getTime() + (e.resume_at ?? 0));
          break;
        case 'wait_completed':
          if (e.resume_at) d.resumeAt = new Date(startedAt.getTime() + e.resume_at);
          break;
        case 'hook_created':
          d.token = tokenString(e.token);
          d.isWebhook = false;
          hookTokens.set(e.ordinal, d.token);
          break;
        case 'hook_conflict':
          d.token = tokenString(e.token);
          d.conflictingRunId = otherRunId;
          hookTokens.set(e.ordinal, d.token);
          break;
        case 'hook_received':
          if (hookTokens.has(e.ordinal)) d.token = hookTokens.get(e.ordinal);
          d.payload = await ser.dehydrateStepReturnValue(1, runId, undefined);
          break;
        case 'hook_disposed':
          if (hookTokens.has(e.ordinal)) d.token = hookTokens.get(e.ordinal);
          break;
      }
      const ev = { eventId: `evnt_${String(i).padStart(6, '0')}`, runId, eventType: e.type, eventData: d, createdAt, specVersion: SPEC_VERSION_CURRENT };
      if (e.kind) ev.correlationId = `${e.kind}_${seq[e.ordinal]}`;
      if (e.resume_id) ev.resumeId = e.resume_id;
      events.push(ev);
    }
    const workflowRun = {
      runId, workflowName, deploymentId, status: 'running',
      input: await ser.dehydrateWorkflowArguments([], runId, undefined),
      createdAt: new Date(fixedTimestamp), startedAt, updatedAt: startedAt,
      specVersion: SPEC_VERSION_CURRENT, executionContext: {},
    };
    const item = (it) => {
      const p = {
        ordinal: ordinalOf(it.correlationId),
        kind: it.type,
        name: it.type === 'step' ? stepName(it.stepName) : '',
        created: !!it.hasCreatedEvent,
      };
      if (it.type === 'hook') {
        p.token = tokenIndex(it.token);
        p.dispose = !!it.disposed;
      }
      return p;
    };
    try {
      // A replay that neither suspends nor ends (the program awaits what no
      // consumer will settle and nothing schedules a suspension) is hung: as
      // an invocation it would run until its time limit.
      let timer;
      const hung = new Promise((resolve) => { timer = setTimeout(() => resolve('hung'), hangMS); });
      const res = await Promise.race([
        replayWorkflow({ workflowCode, workflowRun, events, encryptionKey: undefined, replayPayloadCache: new ReplayPayloadCache(undefined) }),
        hung,
      ]).finally(() => clearTimeout(timer));
      if (res === 'hung') return { outcome: 'hung', message: `no suspension nor end after ${hangMS} ms` };
      if (res.type === 'suspended') return { outcome: 'suspended', pending: res.suspension.items.map(item) };
      return { outcome: 'completed' };
    } catch (err) {
      if (err?.name === 'ReplayDivergenceError') {
        return { outcome: 'diverged', at: events.findIndex((e) => e.eventId === err.eventId), message: String(err.message).split('\n')[0] };
      }
      if (err?.message === 'simlab: step failed') return { outcome: 'failed' };
      // A receive of a hook whose token another run holds (hook_conflict).
      if (err?.name === 'HookConflictError') return { outcome: 'failed', message: String(err.message).split('\n')[0] };
      return { outcome: 'error', message: `${err?.name}: ${String(err?.message ?? err).split('\n')[0]}` };
    }
  };

  process.stdout.write(JSON.stringify({ ready: true, core: coreVersion }) + '\n');
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    if (!line.trim()) continue;
    let c;
    try {
      c = JSON.parse(line);
    } catch (err) {
      process.stdout.write(JSON.stringify({ outcome: 'error', message: `bad case: ${err.message}` }) + '\n');
      continue;
    }
    const out = await replay(c);
    out.id = c.id;
    process.stdout.write(JSON.stringify(out) + '\n');
  }
}
