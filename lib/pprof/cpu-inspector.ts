import { cooperativeTicker } from './cooperative';
import type { CpuProfileRun, CpuProfilerBackend } from './cpu-backend';
import { openSession } from './inspector-session';
import type { V8CpuProfile, V8CpuProfileNode } from './v8-shapes';

/** What a start costs with the inspector; see {@link createInspectorCpuBackend}. */
export const INSPECTOR_START_COST =
  'each start blocks the event loop while V8 walks the heap to log existing code, for a time that grows with the heap (100-250 ms with a 50 MB state); the inspector offers no way to keep that log between profiles';

/**
 * CPU profiles through an in-process `node:inspector` session. Each profile gets its own
 * session: disconnecting it makes V8 stop and discard the profile, so cancelling cannot leak.
 * Nothing keeps starts cheap here: the inspector creates V8's profiler at every `Profiler.start`
 * and disposes of it at `Profiler.stop`, in lazy-logging mode, whatever session or domain state
 * is kept (measured: a session kept open with `Profiler.enable` walks the heap at every start).
 */
export function createInspectorCpuBackend(): CpuProfilerBackend {
  return {
    name: 'inspector',
    keepWarm: () => () => undefined,
    startCost: INSPECTOR_START_COST,
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
            // Before the stop, so that V8 serialising the profile counts against the first slice.
            const tick = cooperativeTicker();
            const { profile } = await session.post('Profiler.stop');
            const nodes: V8CpuProfileNode[] = [];
            for (const node of profile.nodes) {
              nodes.push({
                id: node.id,
                callFrame: node.callFrame,
                hitCount: node.hitCount ?? 0,
                ...(node.children ? { children: node.children } : {}),
                ...(node.positionTicks ? { positionTicks: node.positionTicks } : {}),
              });
              const pause = tick();
              if (pause) await pause;
            }
            return {
              nodes,
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
