// The workflow simlab validates against: a sequence of fan-outs, each a
// Promise.all over `widths[f]` steps whose bodies sleep bodyMs[f][i]
// milliseconds (drawn from the scenario's body distribution by the harness).
//
// A harness that wants to see the bodies (which delivery ran which, when
// each began and ended) or to hold one installs a hook under
// Symbol.for("simlab.step_body"); without it the body only sleeps.

export async function branch(fanout: number, index: number, ms: number) {
  "use step";
  const hook = (globalThis as any)[Symbol.for("simlab.step_body")];
  const body = hook ? await hook.begin(fanout, index) : undefined;
  if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
  // The hook may hold the body's end (a plan's turn for it).
  if (hook) await hook.end(body);
  return fanout * 100000 + index;
}

export async function fanout(widths: number[], bodyMs: number[][]) {
  "use workflow";
  let done = 0;
  for (let f = 0; f < widths.length; f++) {
    const results = await Promise.all(
      Array.from({ length: widths[f] }, (_, i) => branch(f, i, bodyMs[f][i]))
    );
    done += results.length;
  }
  return done;
}
