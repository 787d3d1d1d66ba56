/** `node:perf_hooks`'s `performance` is the platform's own in a browser. */
export const performance: Performance = globalThis.performance;
