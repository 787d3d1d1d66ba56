import { createInspectorCpuBackend } from '../../../lib/pprof/cpu/inspector';
import { startBusyLoop } from '../fixtures/workload';

const names = (profile: { nodes: Array<{ callFrame: { functionName: string } }> }): string[] =>
  profile.nodes.map((n) => n.callFrame.functionName);

describe.each([true, false])('inspector CPU backend with keepCodeLog: %s', (keep) => {
  it('records profiles back to back, after a cancel too, and releases cleanly', async () => {
    const backend = createInspectorCpuBackend({ samplingIntervalMicros: 1000, keepCodeLog: keep });
    expect(backend.startCost).toMatch(keep ? /^starts are cheap/ : /^each start blocks the event loop/);
    const release = backend.keepWarm();
    const stopBusy = startBusyLoop();
    try {
      for (let i = 0; i < 2; i++) {
        const run = await backend.start(1000);
        await new Promise((r) => setTimeout(r, 300));
        const profile = await run.stop();
        expect(profile.samples.length).toBeGreaterThan(0);
        expect(names(profile)).toContain('busyFibonacciForProfile');
      }
      const cancelled = await backend.start(1000);
      cancelled.cancel();
      cancelled.cancel();
      // Another interval than the kept session's gets a session of its own.
      const other = await backend.start(2000);
      await new Promise((r) => setTimeout(r, 200));
      expect((await other.stop()).samples.length).toBeGreaterThan(0);
      const again = await backend.start(1000);
      await new Promise((r) => setTimeout(r, 200));
      expect(names(await again.stop())).toContain('(root)');
    } finally {
      stopBusy();
      release();
      release();
    }
  });
});
