'use strict';
// Benchmark 4: publishEvent on the host's hot path. Rate against the irreducible part of it (one
// Date.now() per event, measured in the same run), and heap after GC at 1 M and at 10 M events:
// the ring must not grow. Needs --expose-gc (bench/run.js passes it).

const { performance } = require('node:perf_hooks');
const { createIntrospectionState } = require('controller-introspection');
const { main, median, ratio, report, row } = require('./common');

const TOTAL = 10_000_000;
const RUNS = 3;
const TYPES = [
  'reconciliation.triggered',
  'config.validated',
  'deployment.started',
  'deployment.pod_updated',
  'deployment.completed',
  'reconciliation.completed',
];

/** Events per second over `count` calls of publishEvent. */
function publishRate(state, count) {
  const start = performance.now();
  for (let i = 0; i < count; i++) state.publishEvent(TYPES[i % 6], TYPES[(i + 1) % 6]);
  return count / ((performance.now() - start) / 1000);
}

function clockRate(count) {
  let sink = 0;
  const start = performance.now();
  for (let i = 0; i < count; i++) sink += Date.now() & TYPES[i % 6].length;
  const rate = count / ((performance.now() - start) / 1000);
  return sink === -1 ? 0 : rate;
}

function heapAfterGc() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed;
}

async function run() {
  if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc (npm run bench does)');
  const state = createIntrospectionState();
  publishRate(state, 1_000_000); // warm-up
  clockRate(1_000_000);

  const rates = [];
  const clock = [];
  for (let r = 0; r < RUNS; r++) {
    clock.push(clockRate(TOTAL / 2));
    rates.push(publishRate(state, TOTAL / 2));
  }

  // Heap: a fresh store, measured after 1 M and after 10 M events.
  const fresh = createIntrospectionState();
  publishRate(fresh, 1_000_000);
  const heap1M = heapAfterGc();
  publishRate(fresh, TOTAL - 1_000_000);
  const heap10M = heapAfterGc();
  if (fresh.eventStats().published !== TOTAL) throw new Error('not every event was counted');

  // Context: with one subscriber, every event is materialised for it (an object and a timestamp).
  const subscribed = createIntrospectionState();
  let seen = 0;
  subscribed.subscribe(() => {
    seen++;
  });
  publishRate(subscribed, 500_000);
  const withSubscriber = median([
    publishRate(subscribed, 2_000_000),
    publishRate(subscribed, 2_000_000),
    publishRate(subscribed, 2_000_000),
  ]);
  if (seen === 0) throw new Error('the subscriber saw nothing');

  const rate = median(rates);
  const clockMedian = median(clock);
  const growth = heap10M - heap1M;
  const mps = (n) => `${(n / 1e6).toFixed(1)} M/s`;
  console.log(`[4] publishEvent: ${RUNS} runs of ${TOTAL / 2 / 1e6} M events (median); heap after GC at 1 M and 10 M events`);
  const rows = [
    row(
      '4a',
      'publishEvent rate (no subscriber)',
      `${mps(rate)} (${ratio(clockMedian / rate, 1)} the cost of Date.now())`,
      '≥ 5 M/s',
      rate >= 5e6,
    ),
    row(
      '4b',
      'heap growth 1 M → 10 M events (after GC)',
      `${(growth / 1024).toFixed(0)} KiB (${(heap1M / 1048576).toFixed(1)} → ${(heap10M / 1048576).toFixed(1)} MiB)`,
      '≤ 1 MiB',
      growth <= 1048576,
    ),
    row('4c', 'context: with one subscriber (same-ms bursts)', mps(withSubscriber), '-', null),
  ];
  report(rows, { rates, clockRates: clock, heap1M, heap10M, withSubscriber });
}

main(run);
