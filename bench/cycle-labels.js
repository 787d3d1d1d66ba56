'use strict';
// What labelling CPU samples by cycle costs a busy pipeline: cycles per second of 4 concurrent
// workers (each cycle: a timer turn, ~0.2 ms of CPU in render, 8 awaits, a validate and a deploy
// to 2 endpoints) with the state's cycle tracing (async_hooks init/before/after, on only while a
// CPU profile records) off and on, alternating, median of 5 windows of 2 s each. The spans every
// cycle records always are in both. Run: npm run build && node bench/cycle-labels.js

const { performance } = require('node:perf_hooks');
const { setImmediate: immediate } = require('node:timers/promises');
const { createIntrospectionState, createPipeline } = require('controller-introspection');

const WORKERS = 4;
const WINDOW_MS = 2000;
const ROUNDS = 5;

function burn(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += 1;
  return x;
}

async function window(pipeline) {
  let cycles = 0;
  const until = performance.now() + WINDOW_MS;
  const spec = {
    trigger: 'bench',
    render: async () => {
      await immediate();
      burn(0.2);
      for (let i = 0; i < 8; i += 1) await Promise.resolve(i);
      return 'config';
    },
    validate: async () => true,
    endpoints: ['a', 'b'],
    deploy: async () => undefined,
  };
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (performance.now() < until) {
        await pipeline.run(spec);
        cycles += 1;
      }
    }),
  );
  return cycles / (WINDOW_MS / 1000);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  // Before any AsyncLocalStorage runs (on Node 20 and 22 its first run enables a process-wide
  // async hook): the pipeline without the timeline, its cycles run directly.
  const bare = createIntrospectionState({ eventCapacity: 1000 });
  bare.runCycle = (_labels, cycle) => cycle();
  const barePipeline = createPipeline(bare);
  await window(barePipeline); // warm-up
  const without = [];
  for (let r = 0; r < ROUNDS; r += 1) without.push(await window(barePipeline));

  const state = createIntrospectionState({ eventCapacity: 1000 });
  const pipeline = createPipeline(state);
  await window(pipeline); // warm-up
  const off = [];
  const on = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    off.push(await window(pipeline));
    const stop = state.traceCycles();
    on.push(await window(pipeline));
    stop();
  }
  const w = median(without);
  console.log(
    `node ${process.version}: ${WORKERS} workers, cycles/s without the timeline (no AsyncLocalStorage) ${w.toFixed(0)}: ${without.map((x) => x.toFixed(0)).join(' ')}`,
  );
  const a = median(off);
  const b = median(on);
  console.log(
    `cycles/s with the timeline, tracing off ${a.toFixed(0)}, on ${b.toFixed(0)} (${((100 * (b - a)) / a).toFixed(1)} %; timeline alone ${((100 * (a - w)) / w).toFixed(1)} %)`,
  );
  console.log(`off: ${off.map((x) => x.toFixed(0)).join(' ')}; on: ${on.map((x) => x.toFixed(0)).join(' ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
