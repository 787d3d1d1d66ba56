'use strict';
// EXPRESS_MAJOR=4 runs every in-process HTTP test against Express 4 (the devDependency alias
// `express4`), the other major the package supports; the default is Express 5.
const expressMajor = process.env.EXPRESS_MAJOR ?? '5';
if (expressMajor !== '4' && expressMajor !== '5') throw new Error(`EXPRESS_MAJOR must be 4 or 5, got ${expressMajor}`);

// METRICS_CLIENT=@prometheus-io/client runs the suites with prom-client's successor in place of
// prom-client 15 (`import ... from 'prom-client'` resolves to it, in the tests and in lib/ alike);
// the tests that need both clients at once import them by file (`prom-client/index.js`).
const metricsClient = process.env.METRICS_CLIENT ?? 'prom-client';
if (metricsClient !== 'prom-client' && metricsClient !== '@prometheus-io/client') {
  throw new Error(`METRICS_CLIENT must be prom-client or @prometheus-io/client, got ${metricsClient}`);
}

// host-promise measures the heap each wait retains: beside another suite in its worker (a profiler
// or sampler left running) it measured 2.2 KB per wait once in CI, against its usual 0.55-0.77 KB.
const ALONE = ['hardening/field-fuzz.test.ts', 'util/host-promise.test.ts'];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  // Suites that time each answer against a hang bound, or measure retained heap, run on their own,
  // after the rest (RUN_ALONE=1): beside another suite they measure the neighbour, not us.
  testMatch: process.env.RUN_ALONE === '1' ? ALONE.map((file) => `**/${file}`) : ['**/*.test.ts'],
  testPathIgnorePatterns: process.env.RUN_ALONE === '1' ? ['/node_modules/'] : ['/node_modules/', ...ALONE],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  moduleNameMapper: {
    ...(expressMajor === '4' && { '^express$': 'express4' }),
    ...(metricsClient !== 'prom-client' && { '^prom-client$': metricsClient }),
  },
  // Peer tests start real Prometheus / go tool pprof and CPU profiles take seconds.
  testTimeout: 60000,
  // One at a time when they run alone: each is alone on the machine, not only in its worker.
  maxWorkers: process.env.RUN_ALONE === '1' ? 1 : 2,
};
