// Profiles on a listener of their own, bound to loopback, as docs/security.md shows: the debug port
// serves probes and /debug/vars where it always did; /debug/pprof answers only on 127.0.0.1 (the
// Go original's habit, ingress-nginx's 127.0.0.1:10245, controller-runtime's PprofBindAddress).
// Run it as the Quick start (`node pprof-loopback.mjs`); `npm run typecheck` checks it and
// __tests__/examples/pprof-loopback.test.ts runs it.
import express from 'express';
import { createIntrospectionState, createIntrospectionRouter, createPprofRouter } from 'controller-introspection';

const state = createIntrospectionState({ waitForConfig: false });

// #region loopback
// The debug port, on every interface: probes and /debug/vars, no profiles (/debug/pprof is a 404).
const introspection = createIntrospectionRouter(state, { pprof: false });
const debugApp = express();
debugApp.use(introspection);
const debugServer = debugApp.listen(Number(process.env.DEBUG_PORT ?? 8080), process.env.BIND_ADDRESS ?? '0.0.0.0');

// Profiles on loopback only: reached with `kubectl port-forward pod/<pod> 6060`, which arrives on
// the pod's loopback, and from no other pod whatever the network policy says.
const pprof = createPprofRouter(state); // the state: CPU samples carry the cycle they ran in
const pprofApp = express();
pprofApp.use('/debug/pprof', pprof);
const pprofServer = pprofApp.listen(Number(process.env.PPROF_PORT ?? 6060), '127.0.0.1');
// #endregion

process.once('SIGTERM', () => {
  void Promise.all([introspection.close(), pprof.close()]).then(() => {
    debugServer.close();
    pprofServer.close();
  });
});
