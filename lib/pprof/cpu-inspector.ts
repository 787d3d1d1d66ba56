import type { CpuProfileRun, CpuProfilerBackend } from './cpu-backend';
import { openSession } from './inspector-session';
import type { V8CpuProfile } from './v8-shapes';

/**
 * CPU profiles through an in-process `node:inspector` session. Each profile gets its own
 * session: disconnecting it makes V8 stop and discard the profile, so cancelling cannot leak.
 */
export function createInspectorCpuBackend(): CpuProfilerBackend {
  return {
    name: 'inspector',
    async start(samplingIntervalMicros: number): Promise<CpuProfileRun> {
      const session = openSession();
      let open = true;
      const disconnect = (): void => {
        if (!open) return;
        open = false;
        session.disconnect();
      };
      try {
        await session.post('Profiler.enable');
        await session.post('Profiler.setSamplingInterval', { interval: samplingIntervalMicros });
        await session.post('Profiler.start');
      } catch (err) {
        disconnect();
        throw err;
      }
      return {
        async stop(): Promise<V8CpuProfile> {
          try {
            const { profile } = await session.post('Profiler.stop');
            return {
              nodes: profile.nodes.map((node) => ({
                id: node.id,
                callFrame: node.callFrame,
                hitCount: node.hitCount ?? 0,
                ...(node.children ? { children: node.children } : {}),
                ...(node.positionTicks ? { positionTicks: node.positionTicks } : {}),
              })),
              startTime: profile.startTime,
              endTime: profile.endTime,
              samples: profile.samples ?? [],
              timeDeltas: profile.timeDeltas ?? [],
            };
          } finally {
            disconnect();
          }
        },
        cancel: disconnect,
      };
    },
  };
}
