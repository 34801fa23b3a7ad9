// Tests of store.mjs's wrapper on its own (node --test store.test.mjs; run by
// TestGateReleasesByCountAndEscapes): a fake World, no runtime.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { wrapWorld } from './store.mjs';

const fixed = (ms) => ({ min: ms, p50: ms, p90: ms, p99: ms, max: ms });

// A read takes effect as the store serves it and its latency delays only
// its answer, as simlab's read sees the World when served; a write reaches
// the World after its latency, as simlab applies it at its answer.
test('a read reaches the World before its latency, a write after it', async () => {
  const seen = {};
  const world = {
    events: {
      list: async () => {
        seen.list = performance.now();
        return { data: [] };
      },
      create: async () => {
        seen.create = performance.now();
        return {};
      },
    },
  };
  const calls = [];
  const w = wrapWorld(world, { events_list: fixed(80), events_create: fixed(80) }, calls).world;
  let t0 = performance.now();
  await w.events.list({ runId: 'wrun_a' });
  const listAnswered = performance.now() - t0;
  assert.ok(seen.list - t0 < 40, `the list reached the World ${seen.list - t0} ms after it was served, want before its 80 ms latency`);
  assert.ok(listAnswered >= 75, `the list answered after ${listAnswered} ms, want its 80 ms latency`);
  t0 = performance.now();
  await w.events.create('wrun_a', { eventType: 'step_completed', correlationId: 'step_1' });
  assert.ok(seen.create - t0 >= 75, `the write reached the World ${seen.create - t0} ms after it was served, want after its 80 ms latency`);
});
