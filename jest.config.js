'use strict';
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  // Peer tests start real Prometheus / go tool pprof and CPU profiles take seconds.
  testTimeout: 60000,
  maxWorkers: 2,
};
