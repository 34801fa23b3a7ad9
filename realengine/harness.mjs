// Runs the real Workflow SDK runtime (@workflow/core) on world-local for
// simlab validate.
//
//   node --import ./register.mjs harness.mjs build DIR [BUILDERS]   compile workflow/fanout.ts into DIR
//   node --import ./register.mjs harness.mjs run CONFIG              run it once, print a JSON summary
//
// CONFIG is a JSON file written by simlab (realengine.go): the
// resolved scenario's store model, the widths, the body latencies and where
// to put the data dir and the OTLP JSON Lines trace. SIMLAB_CORE_ALIAS
// (hooks.mjs) picks the runtime: unset for @workflow/core, an npm alias of
// package.json (core-b50, core-b55, ...) for another release; CONFIG's
// world_local the World's package (@workflow/world-local or an alias such
// as wl-b46). BUILDERS is the @workflow/builders package that compiles the
// workflow (builders-b55, ...: the core's own release); DIR's node_modules,
// when the caller laid it out (runner.go, overlayModules), resolves
// @workflow/core to the release under test. Everything counted is counted from the World's
// calls (store.mjs wraps the World) and the deliveries the queue made, never
// inferred. CONFIG's gate (gate.mjs) holds chosen World calls (and, with
// record_bodies, chosen step bodies) and releases them together or on a
// chosen happening; its race (race.mjs) forces a run's start and its cancel
// into one interleaving of the real World's own I/O.

import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format } from 'node:util';
import { Crash, delivery, rng, draw, wrapWorld } from './store.mjs';
import { compileBundles } from './bundle.mjs';
import { createGate } from './gate.mjs';
import { createStartCancelRace } from './race.mjs';
import { createResumeDriver } from './resumes.mjs';
import { instrumentLocal } from '../realworld/node/gate.mjs';
import { createServer } from 'node:http';

const here = path.dirname(fileURLToPath(import.meta.url));
const [, , mode, arg, arg2] = process.argv;

if (mode === 'build') {
  await build(arg, arg2 || '@workflow/builders');
  process.exit(0);
} else if (mode === 'run') {
  const cfg = JSON.parse(await readFile(arg, 'utf8'));
  // Keep the process alive while the runtime waits on a delayed message
  // alone (a backstop of the inline-ownership lease: world-local's delay
  // timer does not hold the event loop, and Node would exit mid-run).
  const keepAlive = setInterval(() => {}, 1 << 30);
  const out = await run(cfg);
  clearInterval(keepAlive);
  // Exit once the summary is written out: on a pipe the write may still be
  // under way when write() returns, and exit would cut it short (seen with
  // dump_calls' large summaries).
  await new Promise((resolve) => process.stdout.write(JSON.stringify(out) + '\n', resolve));
  process.exit(out.error ? 1 : 0);
} else {
  console.error('usage: harness.mjs build DIR [BUILDERS] | run CONFIG.json');
  process.exit(2);
}

// build compiles the workflow with @workflow/builders (the steps bundle
// registers the step functions; the workflow bundle exports the POST handler
// of the __wkf_workflow_ queue). Non-step imports stay external and the
// workflow bundle imports `workflow/runtime` at run time, so the runtime that
// executes is the one hooks.mjs resolves, not one frozen into the bundle.
async function build(dir, buildersPkg) {
  await mkdir(dir, { recursive: true });
  await cp(path.join(here, 'workflow', 'fanout.ts'), path.join(dir, 'fanout.ts'));
  // A build for programs (Runner.ProgramBundle) finds programs.ts, which
  // the caller wrote, beside the fan-out workflow.
  const files = ['fanout.ts'];
  if (await readFile(path.join(dir, 'programs.ts')).then(() => true, () => false)) files.push('programs.ts');
  const versions = await compileBundles(dir, buildersPkg, files);
  const code = await readFile(path.join(dir, 'workflows.mjs'), 'utf8');
  const id = code.match(/workflow\/\/\.\/fanout\/\/fanout/);
  if (!id) throw new Error('build: the compiled workflow bundle names no workflow//./fanout//fanout');
  // Which builders compiled it and which core's code the bundles inlined
  // (the @workflow/core DIR's node_modules resolves to).
  await writeFile(path.join(dir, 'build.json'), JSON.stringify({ workflowId: id[0], ...versions }) + '\n');
}

async function run(cfg) {
  // Env the runtime reads: the inline count; the local queue's concurrency
  // (simlab's store.consumers); no recovery of old runs.
  process.env.WORKFLOW_MAX_INLINE_STEPS = String(cfg.max_inline);
  if (cfg.consumers > 0) process.env.WORKFLOW_LOCAL_QUEUE_CONCURRENCY = String(cfg.consumers);
  // The runtime's delivery cap (48 by default; it can only be lowered).
  if (cfg.max_queue_deliveries > 0) process.env.WORKFLOW_MAX_QUEUE_DELIVERIES = String(cfg.max_queue_deliveries);
  // The explicit opt-out turbo honours: inline bodies await their claim.
  if (cfg.await_inline_claims) process.env.WORKFLOW_OPTIMISTIC_INLINE_START = '0';
  if (cfg.inline_ownership_lease_seconds) process.env.WORKFLOW_INLINE_OWNERSHIP_LEASE_SECONDS = String(cfg.inline_ownership_lease_seconds);
  process.env.WORKFLOW_LOCAL_RECOVER_ACTIVE_RUNS = '0';
  // The retained VM (on by default in every pinned core): off, each pass
  // of an invocation replays afresh (simlab's workflow.cold_replays: true).
  if (cfg.no_retained_vm) process.env.WORKFLOW_RETAINED_VM = '0';
  // default_dispatch leaves the switch unset: the runtime's own default.
  if (cfg.default_dispatch) delete process.env.WORKFLOW_RESILIENT_STEP_DISPATCH;
  else process.env.WORKFLOW_RESILIENT_STEP_DISPATCH = cfg.resilient_dispatch ? '1' : '0';

  // The tracer provider must exist before the runtime is imported.
  const { NodeTracerProvider } = await import('@opentelemetry/sdk-trace-node');
  const { SimpleSpanProcessor, InMemorySpanExporter } = await import('@opentelemetry/sdk-trace-base');
  const exporter = new InMemorySpanExporter();
  // Every workflow.replay.execute span, with the delivery it ran in and its
  // times on the harness's clock (performance.now; made relative below):
  // what a replay costs the real runtime (replayCosts).
  const replaySpans = [];
  const open = new Map();
  const replayWatch = {
    onStart(span) {
      if (span.name !== 'workflow.replay.execute') return;
      open.set(span, { delivery: delivery.getStore()?.index ?? -1, start: performance.now() });
    },
    onEnd(span) {
      const r = open.get(span);
      if (!r) return;
      open.delete(span);
      replaySpans.push({ ...r, end: performance.now() });
    },
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const provider = new NodeTracerProvider({ spanProcessors: [replayWatch, new SimpleSpanProcessor(exporter)] });
  provider.register();

  const coreVersion = JSON.parse(await readFile(
    path.join(here, 'node_modules', process.env.SIMLAB_CORE_ALIAS || '@workflow/core', 'package.json'), 'utf8')).version;
  // cfg.world_postgres: world-postgres (an alias such as wpg-b29) over the
  // PostgreSQL at its url, whose schema the caller migrated. Its queue is
  // graphile-worker, which POSTs each message to the app's flow route over
  // HTTP: the harness serves that route on 127.0.0.1 (served below).
  const pg = cfg.world_postgres;
  const worldPkg = pg ? pg.package : (cfg.world_local || '@workflow/world-local');
  const worldVersion = JSON.parse(await readFile(path.join(here, 'node_modules', worldPkg, 'package.json'), 'utf8')).version;
  const { createWorld } = await import(worldPkg);
  let flowRoute; // the queue handler, once defined
  const flowServer = pg ? await serveFlowRoute((req) => flowRoute(req)) : undefined;
  if (pg) process.env.WORKFLOW_LOCAL_BASE_URL = flowServer.url;
  const real = pg
    ? createWorld({ connectionString: pg.url, queueConcurrency: cfg.consumers > 0 ? cfg.consumers : 50, applicationManagedShutdown: true })
    : createWorld({ dataDir: cfg.data_dir, recoverActiveRuns: false });
  await real.start();

  const calls = [];
  const deliveries = [];
  const rand = rng((cfg.seed ?? 1) * 7919 + 1);
  const crashAt = (rec, d) => {
    if (d.crashed) return false;
    if (cfg.crash_first_delivery && d.step && d.attempt === 1 && rec.op === 'events.create' && rec.event === 'step_started') return true;
    return cfg.crash > 0 && rand() < cfg.crash;
  };
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  // A race also needs the gate's account of the deliveries (with nothing
  // to hold): it says when the runtime is done (gate.quiet()).
  const gate = cfg.gate || cfg.race ? createGate({ ...(cfg.gate ?? {}), turbo_bodies: !cfg.await_inline_claims, bodies: !!cfg.record_bodies }, now) : undefined;
  // A plan that forces races inside World calls holds world-local's own
  // file-system I/O (realworld/node/gate.mjs), tied to each call.
  // (No SQL gate: reproduce refuses world-postgres, which no pinned core
  // runs on; TestNoPinnedCoreRunsOnWorldPostgres.)
  if (gate?.plan?.fs) instrumentLocal((ctx) => ctx.runId);
  // race (race.mjs): each run's first run_started meets the run's cancel, in
  // the schedule the model gives; the cancel is the runtime's own Run#cancel.
  let getRunHandle;
  const race = cfg.race ? createStartCancelRace(cfg.race, (runId) => getRunHandle(runId).cancel(), now) : gate?.plan ? gate.plan : undefined;
  // cfg.resumes: an outside system resuming the program's hooks
  // (resumes.mjs), told of every event the World stores.
  let resumes;
  const store = wrapWorld(real, cfg.store, calls, { seed: cfg.seed, stripRunContext: cfg.strip_run_context, batchCreates: cfg.batch_creates, invoke: cfg.invoke, crash: crashAt, t0, gate, race, listed: cfg.dump_calls,
    onCreated: cfg.resumes ? (run, ev) => resumes?.created(run, ev) : undefined });
  const world = store.world;

  // The runtime logs its warnings and errors to the console (core's
  // logger.js); keep them for the summary as well as on stderr.
  const logLines = [];
  for (const level of ['warn', 'error']) {
    const orig = console[level];
    console[level] = (...a) => {
      logLines.push({ level, at: Math.round(now()), text: format(...a).slice(0, 600) });
      orig.apply(console, a);
    };
  }

  // Step bodies (workflow/fanout.ts calls the hook when it is installed):
  // which delivery ran which step's body, from when to when, and the gate's
  // body holds. The step's id and attempt come from the runtime's own step
  // context (a process-wide AsyncLocalStorage under a Symbol.for key, the
  // store getStepMetadata() reads).
  // A flaky step (the last flaky_steps of each fan-out, as simlab's
  // workflow.flaky_steps) throws a plain Error in its first flaky_times
  // attempts, which the runtime retries (step_retrying).
  const bodies = [];
  const flaky = (fanout, index, attempt) =>
    cfg.flaky_steps > 0 && index >= cfg.fanouts[fanout] - cfg.flaky_steps && attempt <= cfg.flaky_times;
  if (cfg.record_bodies || cfg.flaky_steps > 0) {
    const stepContext = () => globalThis[Symbol.for('WORKFLOW_STEP_CONTEXT_STORAGE')]?.getStore?.();
    globalThis[Symbol.for('simlab.step_body')] = {
      async begin(fanout, index) {
        const d = delivery.getStore();
        const meta = stepContext()?.stepMetadata;
        const b = { run: stepContext()?.workflowMetadata?.workflowRunId, step: meta?.stepId, attempt: meta?.attempt, fanout, index,
          delivery: d?.index ?? -1, begin: store.now(), end: -1 };
        if (cfg.record_bodies) bodies.push(b);
        const held = gate?.body(b, 'body_begin');
        if (held) await held;
        if (flaky(fanout, index, meta?.attempt ?? 1)) {
          b.end = store.now();
          b.failed = true;
          throw new Error(`simlab: flaky step ${fanout}.${index}, attempt ${meta?.attempt}`);
        }
        return b;
      },
      end(b) {
        if (!b) return undefined;
        b.end = store.now();
        const held = gate?.body(b, 'body_end');
        if (!held) return undefined;
        // A plan holds the end until its turn: the body ends, for the
        // runtime, when its step function returns.
        return held.then(() => { b.end = store.now(); });
      },
    };
  }

  const runtime = await import('workflow/runtime');
  const { start: startRun, getRun, resumeHook } = await import('workflow/api');
  if (cfg.resumes) resumes = createResumeDriver(cfg.resumes, resumeHook, rng((cfg.seed ?? 1) + 7));
  getRunHandle = getRun;
  // The plan's own calls: a cancel is the client's, out of any delivery.
  const harnessActions = { cancel: (runId) => delivery.exit(() => getRun(runId).cancel()) };
  gate?.plan?.setActions(harnessActions);
  gate?.setActions(harnessActions);
  // A hold rule that names an entity by its ordinal, or waits for the
  // run's clock, needs each run's id sequence and clock, as core has them.
  if ((cfg.gate?.holds ?? []).some((h) => h.what?.ordinal !== undefined || h.until?.ordinal !== undefined || h.until?.kind === 'elapsed')) {
    const seqOf = await idSequences();
    gate.setIdentity((run) => seqOf(run, 1 << 16));
  }
  runtime.setWorld(world);
  const bundles = pathToFileURL(cfg.bundle_dir + '/').href;
  await import(bundles + 'steps.mjs');
  const { POST } = await import(bundles + 'workflows.mjs');
  const built = JSON.parse(await readFile(path.join(cfg.bundle_dir, 'build.json'), 'utf8'));
  // cfg.program: a program of programs.ts (realengine.ProgramsTS) instead of
  // the fan-out workflow; each step's body runs for its statement's body
  // time and returns a result drawn as the statement says (cfg.program_steps,
  // by statement index).
  const workflowId = cfg.program ? `workflow//./programs//${cfg.program}` : built.workflowId;
  // A step's first st.hangs attempts hang (hangs: N): the body never
  // returns on its own. A body whose delivery dies (killed at
  // max_duration_ms, or crashed) ends with it, in a throw, as the process
  // running it would: the runtime's in-process state (its per-step single
  // flight) is released, not left to a body nobody awaits.
  if (cfg.program) {
    const stepAttempt = () => globalThis[Symbol.for('WORKFLOW_STEP_CONTEXT_STORAGE')]?.getStore?.()?.stepMetadata?.attempt ?? 1;
    const begun = new Map(); // `${run} ${statement}` -> bodies begun (st.pinned's next)
    globalThis[Symbol.for('simlab.program_step')] = async (i) => {
      const st = cfg.program_steps[i];
      const key = `${globalThis[Symbol.for('WORKFLOW_STEP_CONTEXT_STORAGE')]?.getStore?.()?.workflowMetadata?.workflowRunId} ${i}`;
      const n = begun.get(key) ?? 0;
      begun.set(key, n + 1);
      // A pinned body (simlab reproduce of a program): the simulated
      // run's nth body of this statement; else drawn.
      const pin = st.pinned?.[n];
      const ms = pin ? Math.round(pin.ms) : Math.round(draw(st.body, rand));
      const result = pin ? pin.result : st.results > 0 ? Math.floor(rand() * st.results) : 1;
      const d = delivery.getStore();
      // body_crash: the process dies between the step's claim and its
      // body (flow.Config.Crash): its delivery, queued or running the
      // step inline, crashes here.
      if (d && !d.crashed && cfg.body_crash > 0 && rand() < cfg.body_crash) d.crash();
      const hang = stepAttempt() <= (st.hangs ?? 0);
      if (ms > 0 || hang) {
        let timer;
        await Promise.race([
          hang ? new Promise(() => {}) : new Promise((r) => { timer = setTimeout(r, ms); }),
          d?.dead ?? new Promise(() => {}),
        ]);
        clearTimeout(timer);
      }
      if (d?.crashed) throw new Crash(d.killed ? 'simlab: the invocation was killed at its time limit' : 'simlab: the consumer crashed');
      return result;
    };
  }

  let inFlight = 0;
  let probing = false;
  // Each probe delivery that ended, per run, until the prober takes it.
  const probeEnded = new Map(); // run -> { ended: [d...], wake }
  const probeBox = (run) => {
    if (!probeEnded.has(run)) probeEnded.set(run, { ended: [], wake: null });
    return probeEnded.get(run);
  };
  const nextProbe = (run) => {
    const box = probeBox(run);
    if (box.ended.length) return Promise.resolve(box.ended.shift());
    return new Promise((resolve) => { box.wake = () => { box.wake = null; resolve(box.ended.shift()); }; });
  };
  const runMessages = new Map(); // run -> the run's own first message
  const stepMessages = new Map(); // run -> the first queued step's message
  // cfg.invoke: the World declares capabilities.invoke, whose contract is
  // at most one active workflow runner per run. world-local delivers a
  // run's workflow messages at once, so the handler keeps the contract: a
  // workflow message of a run waits, before it counts as a delivery, until
  // the run's active one has answered (the lane simlab's queue models,
  // model/queue.go releaseRunner). It waits while holding one of
  // world-local's consumer slots, which simlab's lane does not.
  const lanes = new Map(); // run -> the tail of its workflow deliveries
  const enterLane = async (body) => {
    if (!cfg.invoke || !body.runId || body.stepId) return () => {};
    const ahead = lanes.get(body.runId) ?? Promise.resolve();
    let leave;
    const mine = new Promise((resolve) => { leave = resolve; });
    const tail = ahead.then(() => mine);
    lanes.set(body.runId, tail);
    await ahead;
    return () => {
      leave();
      if (lanes.get(body.runId) === tail) lanes.delete(body.runId);
    };
  };
  const handler = async (req) => {
    gate?.enter(req.headers.get('x-vqs-message-id'));
    const body = await req.clone().json().catch(() => ({}));
    const leaveLane = await enterLane(body);
    try {
      return await deliver(req, body);
    } finally {
      leaveLane();
    }
  };
  const deliver = async (req, body) => {
    if (body.runId && !body.stepId && !runMessages.has(body.runId)) runMessages.set(body.runId, body);
    if (body.runId && body.stepId && !stepMessages.has(body.runId)) stepMessages.set(body.runId, body);
    const d = {
      index: deliveries.length, attempt: Number(req.headers.get('x-vqs-message-attempt')),
      message: req.headers.get('x-vqs-message-id'), queue: req.headers.get('x-vqs-queue-name'),
      run: body.runId, step: body.stepId, runContext: body.runContext !== undefined, keys: Object.keys(body).sort(),
      start: store.now(), end: -1, crashed: false, status: 0, probe: probing,
    };
    deliveries.push(d);
    gate?.started(d);
    inFlight++;
    let limit;
    try {
      const lat = store.deliverLatency();
      if (lat > 0) await new Promise((r) => setTimeout(r, lat));
      const crashed = new Promise((resolve) => {
        d.crash = () => {
          d.crashed = true;
          resolve(new Response(JSON.stringify({ error: d.killed ? 'simlab: killed at the time limit' : 'simlab: injected consumer crash' }), { status: 500 }));
        };
      });
      d.dead = crashed;
      // max_duration_ms: the platform's time limit kills the invocation
      // (a crash at that moment: no more World calls, its bodies end, no
      // ack; world-local brings the message back after its 5 s backoff).
      if (cfg.max_duration_ms > 0) {
        limit = setTimeout(() => {
          if (d.end < 0 && !d.crashed) {
            d.killed = true;
            d.crash();
          }
        }, Math.max(0, cfg.max_duration_ms - (store.now() - d.start)));
      }
      const res = await Promise.race([delivery.run(d, () => POST(req)), crashed]);
      d.status = res.status;
      // An error or a timeoutSeconds answer brings the message back.
      if (res.status >= 400) d.redeliver = true;
      else if (gate) d.redeliver = typeof (await res.clone().json().catch(() => null))?.timeoutSeconds === 'number';
      return res;
    } finally {
      clearTimeout(limit);
      d.end = store.now();
      inFlight--;
      gate?.ended(d);
      if (d.probe) {
        const box = probeBox(d.run);
        box.ended.push(d);
        box.wake?.();
      }
    }
  };
  if (pg) flowRoute = handler;
  else {
    world.registerHandler('__wkf_workflow_', handler);
    world.registerHandler('__wkf_step_', handler);
  }

  // A gate action (a cancel) ends runs the client then sees rejected.
  const settleQuietly = (cfg.gate?.actions?.length ?? 0) > 0;
  const runs = [];
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), cfg.timeout_ms ?? 120000).unref());
  let error;
  let timedOut = false;
  for (let r = 0; r < cfg.runs; r++) {
    if (r > 0 && cfg.run_interval_ms > 0) await new Promise((res) => setTimeout(res, cfg.run_interval_ms));
    const bodyMs = cfg.fanouts.map((w) => Array.from({ length: w }, () => Math.round(draw(cfg.body, rand))));
    const start = store.now();
    const run = await startRun({ workflowId }, cfg.program ? [] : [cfg.fanouts, bodyMs]);
    const entry = { run_id: run.runId, start, handle: run };
    if (cfg.race || gate?.plan || settleQuietly) {
      // The client awaits the run's returnValue from its start on, as a
      // caller of start() would, so it is waiting when the cancel lands.
      entry.value = run.returnValue;
      entry.value.then((v) => { entry.settled = { state: 'fulfilled', value: v }; },
        (e) => { entry.settled = { state: 'rejected', error: e?.name ?? 'Error', message: String(e?.message ?? e).slice(0, 300) }; });
    }
    runs.push(entry);
  }
  // The outside driver's cadence runs from the runs' start.
  resumes?.start();
  let outcomes;
  if (gate?.plan) {
    // A plan (simlab reproduce): wait until every entry is answered (or the
    // plan broke), then until the runs' returnValues settle or the runtime
    // is done (a run the plan leaves running never settles), then take each
    // returnValue as it stands. The deadline is only a backstop.
    if ((await Promise.race([gate.plan.done(), timeout])) === 'timeout') {
      error = `timed out after ${cfg.timeout_ms} ms: the plan did not finish (${JSON.stringify(gate.plan.report().next)} of ${gate.plan.entries.length} entries released)`;
    } else if (cfg.gate.plan.cut) {
      // The History stopped at its time limit with work left (a delivery
      // looping on an ended run): its story ends with the last entry, and
      // the runtime, which goes on, is judged as it stands.
    } else if ((await Promise.race([Promise.allSettled(runs.map((r) => r.value)), gate.quiet(), timeout])) === 'timeout') {
      error = `timed out after ${cfg.timeout_ms} ms: the runs did not settle and the runtime did not go quiet`;
    }
    for (const r of runs) {
      r.return_value = r.settled ?? { state: 'pending' };
      r.status = r.settled?.state === 'fulfilled' ? 'completed' : r.settled ? 'failed' : 'pending';
      if (r.settled?.state === 'fulfilled') r.output = r.settled.value;
    }
    outcomes = 'race';
  } else if (cfg.race || settleQuietly) {
    // A forced race may leave a run that never ends, and a client's
    // returnValue that settles early or never (a gate action's cancel
    // rejects it): wait until the runtime is done with every run
    // (gate.quiet()), then take each returnValue as it stands. The
    // deadline is only a backstop.
    if ((await Promise.race([gate.quiet(), timeout])) === 'timeout') {
      error = `timed out after ${cfg.timeout_ms} ms: the runtime did not go quiet`;
    }
    for (const r of runs) {
      r.return_value = r.settled ?? { state: 'pending' };
      r.status = r.settled?.state === 'fulfilled' ? 'completed' : r.settled ? 'failed' : 'pending';
      if (r.settled?.state === 'fulfilled') r.output = r.settled.value;
    }
    outcomes = 'race';
  } else {
    outcomes = await Promise.race([
      Promise.allSettled(runs.map((r) => r.handle.returnValue)),
      timeout,
    ]);
  }
  if (outcomes === 'race') {
    // judged by the caller from return_value and the read-back
  } else if (outcomes === 'timeout' && cfg.program && cfg.program_timeout_is_outcome) {
    // A program's run that has not ended by the deadline is an outcome
    // (a run that never ends), judged on its read-back, not an error.
    for (const r of runs) r.status = r.status ?? 'pending';
    timedOut = true;
  } else if (outcomes === 'timeout') {
    error = `timed out after ${cfg.timeout_ms} ms waiting for the runs' return values`;
  } else {
    outcomes.forEach((o, i) => {
      runs[i].status = o.status === 'fulfilled' ? 'completed' : 'failed';
      if (o.status === 'fulfilled') {
        runs[i].output = o.value;
        return;
      }
      const message = String(o.reason?.message ?? o.reason).slice(0, 300);
      // A program's run may fail as the runtime fails runs (a corrupted
      // log, the delivery cap): an outcome its read-back is judged on,
      // not a harness error.
      if (cfg.program) runs[i].return_value = { state: 'rejected', error: o.reason?.name ?? 'Error', message };
      else if (!error) error = `run ${runs[i].run_id} failed: ${message}`;
    });
  }
  // The driver sends nothing more once the runs are judged.
  await resumes?.stop();
  // A concurrent last completer may still be replaying after the run ended:
  // wait (polled, with a deadline) until no delivery is in flight.
  const quiet = performance.now() + 10000;
  while (inFlight > 0 && performance.now() < quiet) await new Promise((r) => setTimeout(r, 20));
  const callsRun = calls.length, deliveriesRun = deliveries.length, logRun = logLines.length;

  // probe_replay: deliver each finished run's own message once more, and
  // then its first queued step's, as late redeliveries would, and record
  // what the runtime does with the log (a replay of the run; a step consumer
  // that finds its step done and checks the fan-out). probe_kinds picks the
  // probes (default run and step): ghost is the first queued step's message
  // with a fresh step id (a step whose step_created never landed, on the
  // ended run), its stepInput kept when the runtime sent one (resilient
  // dispatch); ghost_bare the same without stepInput. A probe answered with
  // an error is delivered again by world-local (after its 5 s backoff): with
  // probe_until_acked, every redelivery is recorded too (attempt 2, 3, ...)
  // until one is acked (the runtime's WORKFLOW_MAX_QUEUE_DELIVERIES,
  // max_queue_deliveries, bounds them).
  const probes = [];
  if (cfg.probe_replay && !error) {
    probing = true;
    const kinds = cfg.probe_kinds ?? ['run', 'step'];
    for (const r of runs) {
      const first = deliveries.find((d) => d.run === r.run_id && !d.step);
      const msgs = kinds.map((k) => [k, k === 'run' ? runMessages.get(r.run_id) : stepMessages.get(r.run_id)]);
      for (const [kind, msg] of msgs) {
        if (!msg || !first) continue;
        let probe;
        if (kind === 'run') probe = { runId: r.run_id, traceCarrier: msg.traceCarrier, requestedAt: new Date() };
        else if (kind === 'step') probe = { ...msg, requestedAt: new Date() };
        else {
          probe = { ...msg, stepId: ghostStepId(rand), requestedAt: new Date() };
          if (kind === 'ghost_bare') delete probe.stepInput;
        }
        await world.queue(first.queue, probe);
        for (;;) {
          const d = await Promise.race([nextProbe(r.run_id), timeout]);
          if (d === 'timeout') {
            error = `timed out after ${cfg.timeout_ms} ms waiting for the ${kind} probe of run ${r.run_id}`;
            break;
          }
          probes.push({
            run_id: r.run_id, kind, status: d.status, attempt: d.attempt, step: probe.stepId, step_input: probe.stepInput !== undefined,
            calls: calls.filter((c) => c.delivery === d.index)
              .map((c) => ({ op: c.op, event: c.event, result: c.result, error: c.error, status: c.status, run_ends: c.run_ends })),
          });
          if (!cfg.probe_until_acked || d.status < 400) break;
        }
        if (error) break;
      }
      if (error) break;
    }
    probing = false;
  }

  // Read every run back from the real World itself (no wrapper, no gate):
  // the log, all pages, and every run and step row it names.
  const readBack = [];
  for (const r of runs) readBack.push(await readRunBack(real, r.run_id));

  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  if (cfg.trace_out) await writeTrace(cfg.trace_out, spans);
  const summary = summarize({ cfg, coreVersion, calls: calls.slice(0, callsRun), deliveries: deliveries.slice(0, deliveriesRun), runs, spans });
  summary.read_back = readBack;
  if (timedOut) summary.timed_out = true;
  summary.replays = replayCosts(replaySpans.map((r) => ({ ...r, start: r.start - t0, end: r.end - t0 })), calls.slice(0, callsRun), deliveries.slice(0, deliveriesRun));
  if (pg) summary.world_postgres = worldVersion;
  else summary.world_local = worldVersion;
  summary.builders = built.builders;
  summary.bundle_core = built.bundleCore;
  summary.world_capabilities = Object.keys(world.capabilities ?? {}).sort(); // what the runtime saw
  summary.runtime_log = {
    warn: logLines.slice(0, logRun).filter((l) => l.level === 'warn').length,
    error: logLines.slice(0, logRun).filter((l) => l.level === 'error').length,
    lines: logLines.slice(0, 30),
  };
  if (gate) summary.gate = { releases: gate.releases, escapes: gate.escapes, actions: gate.actionsDone };
  if (gate?.plan) summary.plan = gate.plan.report();
  if (race) summary.race = race.reports;
  if (resumes) summary.resumes = resumes.report;
  if (cfg.probe_replay) {
    summary.probes = probes;
    summary.probe_log = logLines.slice(logRun, logRun + 30);
  }
  if (cfg.record_bodies) summary.bodies = bodies;
  if (cfg.dump_calls) {
    summary.calls = calls;
    summary.deliveries = deliveries.map(({ crash, ...d }) => d);
  }
  if (error) {
    summary.error = error;
    summary.run_ids = runs.map((r) => r.run_id);
    summary.last_spans = spans.slice(-15).map((s) => ({ name: s.name, attributes: s.attributes, status: s.status }));
    summary.world_log = calls.slice(-40);
  }
  await Promise.race([real.close?.(), new Promise((r) => setTimeout(r, 2000))]);
  flowServer?.close();
  await rm(cfg.data_dir, { recursive: true, force: true });
  return summary;
}

// ghostStepId is a step id no step of the World has: step_ and a ULID's 26
// Crockford base-32 characters, as world-local mints them.
function ghostStepId(rand) {
  const abc = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let s = 'step_01';
  for (let i = 0; i < 24; i++) s += abc[Math.floor(rand() * 32)];
  return s;
}

// readRunBack reads a run back from the real World once it is quiet: its
// log through events.list, every page (a small page size, so pagination is
// exercised), counting the accepted terminal run events; then runs.get and
// steps.get of every step the log names. A row that cannot be read back
// (the call throws, or its answer fails the World's own schema) is listed.
async function readRunBack(real, runId) {
  const { WorkflowRunSchema, StepSchema, TERMINAL_RUN_EVENT_TYPES } = await import('@workflow/world');
  const out = { run_id: runId, events: 0, pages: 0, terminal_events: 0, terminal_by_type: {}, step_terminal_max: 0, steps: 0, unreadable: [],
    first_terminal: '', before_terminal: {}, after_terminal: {}, run_status: '', error_codes: [], log: [] };
  const logged = []; // every event, for the log simlab's replay reads
  const steps = new Map(); // step id -> terminal events of that step in the log
  const seen = new Set();
  let cursor;
  for (;;) {
    let page;
    try {
      page = await real.events.list({ runId, pagination: { limit: 50, cursor } });
    } catch (err) {
      out.unreadable.push({ kind: 'events', id: runId, error: String(err?.message ?? err).slice(0, 300) });
      break;
    }
    out.pages++;
    for (const e of page.data ?? []) {
      out.events++;
      logged.push(e);
      if (e.eventType === 'run_failed' && e.eventData?.errorCode) out.error_codes.push(e.eventData.errorCode);
      // The log's order (events.list's, ascending): what came before and
      // after the run's first terminal event, by type.
      const side = out.first_terminal ? out.after_terminal : out.before_terminal;
      if (out.first_terminal || !TERMINAL_RUN_EVENT_TYPES.includes(e.eventType)) side[e.eventType] = (side[e.eventType] ?? 0) + 1;
      if (!out.first_terminal && TERMINAL_RUN_EVENT_TYPES.includes(e.eventType)) out.first_terminal = e.eventType;
      if (TERMINAL_RUN_EVENT_TYPES.includes(e.eventType)) {
        out.terminal_events++;
        out.terminal_by_type[e.eventType] = (out.terminal_by_type[e.eventType] ?? 0) + 1;
      }
      if (e.eventType?.startsWith('step_') && e.correlationId) {
        const n = steps.get(e.correlationId) ?? 0;
        steps.set(e.correlationId, n + (e.eventType === 'step_completed' || e.eventType === 'step_failed' ? 1 : 0));
      }
    }
    // A cursor seen before would page forever: the log is unreadable there.
    if (!page.hasMore || !page.cursor) break;
    if (seen.has(page.cursor)) {
      out.unreadable.push({ kind: 'events', id: runId, error: `events.list repeats cursor ${page.cursor}` });
      break;
    }
    seen.add(page.cursor);
    cursor = page.cursor;
  }
  const check = async (kind, id, get, schema) => {
    try {
      const row = await get();
      if (kind === 'run') out.run_status = row?.status ?? '';
      const ok = schema.safeParse(row);
      if (!ok.success) out.unreadable.push({ kind, id, error: `does not parse: ${String(ok.error?.message ?? ok.error).slice(0, 300)}` });
    } catch (err) {
      out.unreadable.push({ kind, id, error: String(err?.message ?? err).slice(0, 300) });
    }
  };
  out.log = await replayLog(runId, logged);
  await check('run', runId, () => real.runs.get(runId), WorkflowRunSchema);
  for (const [stepId, ends] of steps) {
    out.steps++;
    out.step_terminal_max = Math.max(out.step_terminal_max, ends);
    await check('step', stepId, () => real.steps.get(runId, stepId), StepSchema);
  }
  return out;
}

// replayLog is a run's log as simlab's replay reads it (realengine
// ReplayEvent): each event's type, the kind and ordinal of the entity its
// correlation id names (its position in the run's id sequence, computed as
// core computes it: a monotonic ULID over the workflow VM's Math.random
// seeded with run id, workflow name and deployment id, one fixed timestamp;
// -1 for an id outside the sequence), the step name its data carries, the
// short name after the bundle's file (a program's without its s_), a
// step_completed's result, and when it was written (ms since the run's
// creation). The run's identity is run_created's.
async function replayLog(runId, events) {
  const created = events.find((e) => e.eventType === 'run_created');
  if (!created) return [];
  const main = fileURLToPath(import.meta.resolve('@workflow/core'));
  const dist = path.dirname(main);
  const { workflowName, deploymentId } = created.eventData ?? {};
  const seq = (await idSequences())({ runId, workflowName, deploymentId, createdAt: created.createdAt }, events.filter((e) => e.correlationId).length + 16);
  const fixed = seq.fixed;
  // A step's result, for a program whose if tests it (a number as is,
  // anything else by its truth), hydrated with core's own serializer.
  const ser = await import(pathToFileURL(path.join(dist, 'serialization.js')).href);
  const results = new Map();
  for (const e of events) {
    if (e.eventType !== 'step_completed' || e.eventData?.result === undefined) continue;
    try {
      const v = await ser.hydrateStepReturnValue(e.eventData.result, runId, undefined);
      results.set(e, typeof v === 'number' ? v : v ? 1 : 0);
    } catch {
      // an encrypted or foreign payload: the replay reads no result
    }
  }
  return events.map((e) => {
    const ev = { type: e.eventType, ordinal: -1 };
    if (e.correlationId) {
      const cut = e.correlationId.indexOf('_');
      ev.kind = e.correlationId.slice(0, cut);
      ev.ordinal = seq.ordinal(e.correlationId);
    }
    const name = e.eventData?.stepName;
    if (name) {
      // programs.ts names its steps s_NAME (realengine.StepFunction).
      const short = name.slice(name.lastIndexOf('//') + 2);
      ev.name = name.includes('//./programs//') && short.startsWith('s_') ? short.slice(2) : short;
    }
    if (results.has(e)) ev.result = results.get(e);
    // A hook's token, by its place in the run's token sequence.
    if ((e.eventType === 'hook_created' || e.eventType === 'hook_conflict') && typeof e.eventData?.token === 'string') ev.token = seq.token(e.eventData.token);
    // When it was written, in ms since the run's creation (the VM clock's
    // start): a program's clock statement reads it.
    const at = +new Date(e.createdAt) - fixed;
    if (at > 0) ev.at = at;
    return ev;
  });
}

// idSequences loads what core computes a run's correlation ids with and
// returns seqOf(run, cap): the run's sequence (run id, workflowName and
// deploymentId seeding the workflow VM's Math.random, a monotonic ULID at
// one fixed timestamp: the run id's time, else its createdAt) as fixed, that
// timestamp, and ordinal(correlationId), the id's place in it (-1 outside
// its first cap ids), drawn as far as a lookup needs; and token(t), a hook
// token's place in the run's token sequence (core draws a hook's token
// with nanoid from the same Math.random, which after the first correlation
// id draws nothing else: a monotonic ULID at one timestamp increments), -1
// outside its first 4096.
async function idSequences() {
  const main = fileURLToPath(import.meta.resolve('@workflow/core'));
  const dist = path.dirname(main);
  const { createContext } = await import(pathToFileURL(path.join(dist, 'vm', 'index.js')).href);
  const { runIdCreatedAt } = await import(pathToFileURL(path.join(dist, 'runtime', 'run-id-time.js')).href);
  const { monotonicFactory } = await import(pathToFileURL(createRequire(main).resolve('ulid')).href);
  const nanoid = await import(pathToFileURL(createRequire(main).resolve('nanoid')).href);
  return ({ runId, workflowName, deploymentId, createdAt }, cap) => {
    const fixed = runIdCreatedAt(runId) ?? +new Date(createdAt);
    const { globalThis: g } = createContext({ seed: `${runId}:${workflowName}:${deploymentId}`, fixedTimestamp: fixed });
    const gen = monotonicFactory(() => g.Math.random());
    const ids = new Map();
    let last = '';
    const ordinal = (correlationId) => {
      const id = correlationId.slice(correlationId.indexOf('_') + 1);
      // Monotonic ids grow: past the newest drawn, draw on until it.
      while (!ids.has(id) && id > last && ids.size < cap) {
        last = gen(fixed);
        ids.set(last, ids.size);
      }
      return ids.get(id) ?? -1;
    };
    let tokens;
    const token = (t) => {
      if (!tokens) {
        const { globalThis: h } = createContext({ seed: `${runId}:${workflowName}:${deploymentId}`, fixedTimestamp: fixed });
        monotonicFactory(() => h.Math.random())(fixed);
        const next = nanoid.customRandom(nanoid.urlAlphabet, 21, (size) => new Uint8Array(size).map(() => 256 * h.Math.random()));
        tokens = { next, list: [] };
      }
      let i = tokens.list.indexOf(t);
      while (i < 0 && tokens.list.length < 4096) {
        tokens.list.push(tokens.next());
        if (tokens.list[tokens.list.length - 1] === t) i = tokens.list.length - 1;
      }
      return i;
    };
    return { fixed, ordinal, token };
  };
}

// writeTrace writes spans as OTLP JSON Lines, one {"resourceSpans":[...]}
// per trace and line, as simlab's traces.WriteJSONL does.
async function writeTrace(file, spans) {
  const { JsonTraceSerializer } = await import('@opentelemetry/otlp-transformer');
  const byTrace = new Map();
  for (const s of spans) {
    const id = s.spanContext().traceId;
    if (!byTrace.has(id)) byTrace.set(id, []);
    byTrace.get(id).push(s);
  }
  const lines = [];
  for (const group of byTrace.values()) {
    lines.push(Buffer.from(JsonTraceSerializer.serializeRequest(group)).toString('utf8'));
  }
  await writeFile(file, lines.join('\n') + (lines.length ? '\n' : ''), { mode: 0o644 });
}

function percentile(xs, p) {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(1, Math.min(s.length, Math.ceil((p / 100) * s.length))) - 1];
}

// summarize counts what the World and the queue saw.
export function summarize({ cfg, coreVersion, calls, deliveries, runs, spans }) {
  const byDelivery = new Map();
  for (const c of calls) {
    if (c.delivery < 0) continue;
    if (!byDelivery.has(c.delivery)) byDelivery.set(c.delivery, []);
    byDelivery.get(c.delivery).push(c);
  }
  // Fan-out of a step: the order in which step_created first landed, cut
  // by the widths (fan-outs are sequential: the next starts after the last).
  const fanOfStep = new Map();
  let created = 0;
  const bounds = [];
  let acc = 0;
  for (const w of cfg.fanouts) bounds.push((acc += w));
  const perRun = new Map();
  for (const c of calls) {
    if (c.op !== 'events.create' || c.result !== 'ok') continue;
    if (c.event === 'step_created' || (c.event === 'step_started' && c.lazy)) {
      const key = c.run + '/' + c.correlation;
      if (!fanOfStep.has(key)) {
        const n = (perRun.get(c.run) ?? 0);
        perRun.set(c.run, n + 1);
        fanOfStep.set(key, bounds.findIndex((b) => n < b));
        created++;
      }
    }
  }
  const fanouts = [];
  for (const r of runs) {
    cfg.fanouts.forEach((w, i) => fanouts.push({ run_id: r.run_id, index: i, branches: w, inline: Math.min(w, cfg.max_inline), prologue_reads: 0, lazy_reads: 0, last_completers: 0, step_deliveries: 0 }));
  }
  const fanKey = (run, idx) => fanouts.find((f) => f.run_id === run && f.index === idx);
  let prologueReads = 0, lazyReads = 0, otherReads = 0;
  for (const d of deliveries) {
    const cs = byDelivery.get(d.index) ?? [];
    if (!d.step) {
      otherReads += cs.filter((c) => c.op === 'runs.get').length;
      continue;
    }
    const f = fanKey(d.run, fanOfStep.get(d.run + '/' + d.step));
    if (f) f.step_deliveries++;
    const claim = cs.findIndex((c) => c.op === 'events.create' && c.event === 'step_started');
    const term = cs.findIndex((c) => c.op === 'events.create' && (c.event === 'step_completed' || c.event === 'step_failed'));
    let p = 0, l = 0, last = false;
    cs.forEach((c, i) => {
      if (c.op !== 'runs.get') return;
      if (claim < 0 || i < claim) p++;
      else if (term >= 0 && i > term) l++;
    });
    // The last completer lists the log after its terminal write (or skip)
    // and goes on to replay; the others return right after that list.
    const after = term >= 0 ? term : claim;
    const list = cs.findIndex((c, i) => i > after && c.op.startsWith('events.list'));
    if (after >= 0 && list >= 0 && cs.length > list + 1) last = true;
    prologueReads += p;
    lazyReads += l;
    if (f) {
      f.prologue_reads += p;
      f.lazy_reads += l;
      if (last) f.last_completers++;
    }
  }
  const clientReads = calls.filter((c) => c.op === 'runs.get' && c.delivery < 0).length;
  const started = calls.filter((c) => c.op === 'events.create' && c.event === 'step_started' && c.result !== undefined);
  const rejected = {};
  for (const c of started) if (c.result !== 'ok') rejected[c.result] = (rejected[c.result] ?? 0) + 1;
  const ttfs = [], ttls = [];
  for (const r of runs) {
    const ends = calls.filter((c) => c.op === 'events.create' && c.result === 'ok' && c.run === r.run_id && (c.event === 'step_completed' || c.event === 'step_failed')).map((c) => c.end - r.start);
    if (ends.length) {
      ttfs.push(Math.min(...ends));
      ttls.push(Math.max(...ends));
    }
  }
  const spanNames = {};
  const dispatchPrologue = {};
  const attrKeys = new Set();
  for (const s of spans) {
    spanNames[s.name] = (spanNames[s.name] ?? 0) + 1;
    for (const k of Object.keys(s.attributes)) attrKeys.add(k);
    const v = s.attributes['workflow.step.dispatch_prologue'];
    if (v !== undefined) dispatchPrologue[v] = (dispatchPrologue[v] ?? 0) + 1;
  }
  const stepDeliveries = deliveries.filter((d) => d.step);
  return {
    core: coreVersion,
    prologue: cfg.strip_run_context ? 'runs_get' : undefined,
    seed: cfg.seed,
    runs: runs.map((r) => ({ run_id: r.run_id, status: r.status ?? 'unknown', output: r.output, return_value: r.return_value, ...whoEnded(r.run_id, calls, deliveries) })),
    fanouts,
    counts: {
      deliveries: deliveries.length,
      redeliveries: deliveries.filter((d) => d.attempt > 1).length,
      step_deliveries: stepDeliveries.length,
      step_redeliveries: stepDeliveries.filter((d) => d.attempt > 1).length,
      step_messages_with_run_context: stepDeliveries.filter((d) => d.runContext).length,
      crashes: deliveries.filter((d) => d.crashed && !d.killed).length,
      kills: deliveries.filter((d) => d.killed).length,
      runs_get: calls.filter((c) => c.op === 'runs.get').length,
      runs_get_prologue: prologueReads,
      runs_get_lazy: lazyReads,
      runs_get_orchestrator: otherReads,
      runs_get_client: clientReads,
      stale_reads: calls.filter((c) => c.stale).length,
      events_list: calls.filter((c) => c.op.startsWith('events.list')).length,
      events_create: calls.filter((c) => c.op === 'events.create').length,
      events_create_batch: calls.filter((c) => c.op === 'events.createBatch').length,
      step_created: calls.filter((c) => c.op === 'events.create' && c.event === 'step_created' && c.result === 'ok').length,
      steps_created_total: created,
      step_started_accepted: started.filter((c) => c.result === 'ok').length,
      step_started_rejected: started.filter((c) => c.result !== 'ok').length,
      step_started_rejected_by: rejected,
      publishes: calls.filter((c) => c.op === 'queue').length,
      publishes_delayed: calls.filter((c) => c.op === 'queue' && c.delay > 0).length,
      // Step messages whose runContext lacks startedAt: stamped from a row the
      // producer held that had none (a stale pending read).
      run_context_without_started_at: calls.filter((c) => c.op === 'queue' && c.runContext && !c.ctxStartedAt).length,
    },
    ttfs_ms: ttfs,
    write_own_ms: calls.filter((c) => c.op === 'events.create' && c.real !== undefined).map((c) => c.real),
    ttls_ms: ttls,
    ttfs_p50_ms: percentile(ttfs, 50),
    ttls_p50_ms: percentile(ttls, 50),
    span_names: spanNames,
    dispatch_prologue: dispatchPrologue,
    attribute_keys: [...attrKeys].sort(),
  };
}

// whoEnded says who wrote a run's first accepted terminal event: 'step' for
// a step message's delivery (a queued last completer's inline replay),
// 'workflow' for a workflow message's (the orchestrator, its inline steps
// included), 'client' for a call outside any delivery; and how many
// terminal run writes were attempted, accepted or not.
export function whoEnded(runId, calls, deliveries) {
  const ends = calls.filter((c) => c.op === 'events.create' && c.run === runId && ['run_completed', 'run_failed', 'run_cancelled'].includes(c.event));
  const first = ends.filter((c) => c.result === 'ok').sort((a, b) => a.end - b.end)[0];
  const d = first ? deliveries[first.delivery] : undefined;
  return { ended_by: !first ? '' : first.delivery < 0 ? 'client' : d?.step ? 'step' : 'workflow', end_attempts: ends.length };
}

// replayCosts is each replay span with what it replayed: the delivery it
// ran in (and whether that was a step's, a last completer's inline replay),
// its time in ms, the events its replay loaded (the pages the delivery
// listed since its last write before the span began) and how many other replays ran in
// this one Node process meanwhile (they share its one thread, so only a
// replay that overlapped none measures its own cost).
export function replayCosts(spans, calls, deliveries) {
  const byDelivery = new Map();
  for (const c of calls) {
    if (c.delivery < 0) continue;
    if (!byDelivery.has(c.delivery)) byDelivery.set(c.delivery, []);
    byDelivery.get(c.delivery).push(c);
  }
  return spans.map((r) => {
    const cs = (byDelivery.get(r.delivery) ?? []).filter((c) => c.end >= 0 && c.end <= r.start);
    // The listing is every page (and the delta the runtime fetches after
    // a lazy read) since the delivery's last write: reads only.
    let events = 0;
    for (let i = cs.length - 1; i >= 0 && (cs[i].op.startsWith('events.list') || cs[i].op === 'runs.get'); i--) events += cs[i].events ?? 0;
    const overlap = spans.filter((o) => o !== r && o.start < r.end && o.end > r.start).length;
    return { delivery: r.delivery, step: !!deliveries[r.delivery]?.step, start_ms: r.start, ms: r.end - r.start, events, overlap };
  });
}

// serveFlowRoute listens on 127.0.0.1 (a free port) and answers every POST
// with route(Request): the app's flow route world-postgres's queue delivers
// each message to (dist/queue.js, executeMessageOverHttp).
async function serveFlowRoute(route) {
  const server = createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const request = new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: req.method === 'POST' ? Buffer.concat(chunks) : undefined });
      const answer = await route(request);
      res.writeHead(answer.status, Object.fromEntries(answer.headers.entries()));
      res.end(Buffer.from(await answer.arrayBuffer()));
    } catch (e) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(e?.message ?? e) }));
    }
  });
  await new Promise((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}
