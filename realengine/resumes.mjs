// The outside system that resumes a program's hooks (simlab's flow.Resumes),
// for a real run: it learns each run's live hooks from the World's accepted
// writes (hook_created with its token, hook_disposed, the run's end) and,
// at a cadence from the runs' start, in bursts spread over a window, and at
// each wait's resumeAt when aimed at deadlines, calls core's own
// resumeHook(token, 1): the by-token lookup, the hook_received write and
// the wake it publishes are the runtime's, through the harness's World.
//
// cfg: {every_ms, count, burst, spread_ms, one, at_deadlines}. A resume the
// runtime refuses (the hook disposed or the run ended between the tick and
// the write) is counted by its error's name, as simlab counts a refused
// hook_received.
export function createResumeDriver(cfg, resumeHook, rand) {
  const live = new Map(); // runId -> Map(correlationId -> token)
  const timers = new Set();
  const pending = new Set();
  let stopped = false;
  const report = { ticks: 0, sent: 0, refused: {} };

  const after = (ms, fn) => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (!stopped) fn();
    }, Math.max(0, ms));
    timers.add(t);
  };
  const resume = (token) => {
    const p = resumeHook(token, 1).then(
      () => { report.sent++; },
      (err) => {
        const name = err?.name ?? 'Error';
        report.refused[name] = (report.refused[name] ?? 0) + 1;
      },
    );
    pending.add(p);
    p.finally(() => pending.delete(p));
  };
  // tick resumes every live hook of the runs named (all when none), each
  // burst times after a delay drawn from [0, spread_ms].
  const tick = (runId) => {
    const burst = Math.max(1, cfg.burst ?? 0);
    const tokens = [];
    for (const [run, hooks] of live) {
      if (!runId || run === runId) tokens.push(...hooks.values());
    }
    // cfg.one: one live hook, drawn, not every one.
    const chosen = cfg.one ? (tokens.length ? [tokens[Math.floor(rand() * tokens.length)]] : []) : tokens;
    for (const token of chosen) {
      for (let i = 0; i < burst; i++) {
        const spread = (cfg.spread_ms ?? 0) > 0 ? rand() * cfg.spread_ms : 0;
        if (spread > 0) after(spread, () => resume(token));
        else resume(token);
      }
    }
  };

  return {
    report,
    // created is an events.create the World accepted: ev is the event it
    // stored (a hook_created whose token was taken comes back hook_conflict).
    created(runId, ev) {
      if (!ev) return;
      switch (ev.eventType) {
        case 'hook_created': {
          if (!live.has(runId)) live.set(runId, new Map());
          const token = ev.eventData?.token;
          if (typeof token === 'string') live.get(runId).set(ev.correlationId, token);
          break;
        }
        case 'hook_disposed':
          live.get(runId)?.delete(ev.correlationId);
          break;
        case 'run_completed':
        case 'run_failed':
        case 'run_cancelled':
          live.delete(runId);
          break;
        case 'wait_created':
          // Aimed at the deadline: the tick's resumes land within spread_ms
          // around it, half before, half after.
          if (cfg.at_deadlines && ev.eventData?.resumeAt) after(+new Date(ev.eventData.resumeAt) - Date.now() - (cfg.spread_ms ?? 0) / 2, () => tick(runId));
          break;
      }
    },
    start() {
      let n = 0;
      const next = () => {
        if (n >= (cfg.count ?? 0)) return;
        after(cfg.every_ms, () => {
          n++;
          report.ticks++;
          tick();
          next();
        });
      };
      next();
    },
    // stop cancels what is scheduled and waits for the resumes in flight.
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await Promise.allSettled([...pending]);
    },
  };
}
