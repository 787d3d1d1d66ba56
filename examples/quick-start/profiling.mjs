// The profiling options of docs/profiling.md. Run it as the Quick start (`node profiling.mjs`, add
// --enable-source-maps for a compiled host); `npm run typecheck` checks it.
import express from 'express';
import { createIntrospectionState, createIntrospectionRouter, createPprofRouter } from 'controller-introspection';

const state = createIntrospectionState({ waitForConfig: false });

// #region options
const introspection = createIntrospectionRouter(state, {
  pprof: {
    trace: true, // /debug/pprof/trace is off by default; true turns it on with its default limits
    heapSamplingIntervalBytes: 1024 * 1024, // sample less often on a host that allocates heavily
    maxProfileSeconds: 120, // the longest ?seconds= a CPU profile may ask for
  },
});
// #endregion

// #region standalone
// Profiles alone, on a port of their own: mount the pprof router at /debug/pprof.
const pprof = createPprofRouter(state, { cpuSamplingIntervalMicros: 10_000 });
const profilingApp = express();
profilingApp.use('/debug/pprof', pprof);
const profilingServer = profilingApp.listen(Number(process.env.PPROF_PORT ?? 6060));
// #endregion

const debugApp = express();
debugApp.use(introspection);
const debugServer = debugApp.listen(Number(process.env.DEBUG_PORT ?? 8080));

process.once('SIGTERM', () => {
  // close() stops heap sampling, a running profile or trace, and the event-loop monitor.
  void Promise.all([introspection.close(), pprof.close()]).then(() => {
    debugServer.close();
    profilingServer.close();
  });
});
