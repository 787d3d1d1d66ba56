import type { Session } from 'node:inspector/promises';
import { keepCodeLog, type CodeLogKeeper } from './code-log-keeper';
import { mapCooperatively, startOfRun } from '../../util/cooperative';
import type { CpuProfileRun, CpuProfilerBackend } from './backend';
import { openSession } from '../inspector-session';
import type { V8CpuProfile, V8CpuProfileNode } from '../v8-shapes';

/** What a start costs with the inspector when the code log is kept; see {@link createInspectorCpuBackend}. */
const INSPECTOR_KEPT_START_COST =
  'starts are cheap: V8 walked the heap once, when the router was created, and a low-cost profile kept running since keeps its code log (option keepCodeLog)';

/** What a start costs with the inspector without the kept code log. */
const INSPECTOR_START_COST =
  'each start blocks the event loop while V8 walks the heap to log existing code, for a time that grows with the heap and the compiled functions (100-300 ms with a 50 MB state); keepCodeLog: true avoids it';

/** Options of {@link createInspectorCpuBackend}. */
export interface InspectorBackendOptions {
  /** The sampling interval of every profile (fixed per session once profiling starts). */
  readonly samplingIntervalMicros: number;
  /** Keep V8's code log on between profiles (see `keepCodeLog` in code-log-keeper.ts). */
  readonly keepCodeLog: boolean;
}

/** A session for one profile: the kept one, or a fresh one that the profile's end disconnects. */
interface ProfileSession {
  readonly session: Session;
  /** Ends the profile on this session without reading it; never throws. */
  readonly discard: () => void;
}

async function freshSession(samplingIntervalMicros: number): Promise<ProfileSession> {
  const session = openSession();
  let open = true;
  const discard = (): void => {
    if (!open) return;
    open = false;
    // Disconnecting makes V8 stop and drop the profile, so cancelling cannot leak.
    session.disconnect();
  };
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: samplingIntervalMicros });
  } catch (err) {
    discard();
    throw err;
  }
  return { session, discard };
}

/**
 * CPU profiles through an in-process `node:inspector` session. With `keepCodeLog`, profiles run on
 * the kept session, whose profiler never goes idle, so a start does not walk the heap; without
 * it, each profile gets its own session and each start walks the heap (the inspector disposes of
 * V8's profiler when a session's last profile stops).
 */
export function createInspectorCpuBackend(options: InspectorBackendOptions): CpuProfilerBackend {
  let keeper: CodeLogKeeper | undefined;
  // A cancelled profile on the kept session must be stopped before the next one starts.
  let stopping: Promise<unknown> = Promise.resolve();
  const keptSession = async (): Promise<ProfileSession | undefined> => {
    if (keeper === undefined) return undefined;
    const session = await keeper.session;
    return { session, discard: () => (stopping = session.post('Profiler.stop').catch(() => undefined)) };
  };
  return {
    name: 'inspector',
    keepWarm() {
      if (!options.keepCodeLog) return () => undefined;
      const current = keepCodeLog(options.samplingIntervalMicros);
      keeper = current;
      return () => {
        if (keeper === current) keeper = undefined;
        current.release();
      };
    },
    get startCost() {
      return options.keepCodeLog ? INSPECTOR_KEPT_START_COST : INSPECTOR_START_COST;
    },
    async start(samplingIntervalMicros: number): Promise<CpuProfileRun> {
      await stopping;
      const kept = samplingIntervalMicros === options.samplingIntervalMicros ? await keptSession().catch(() => undefined) : undefined;
      const { session, discard } = kept ?? (await freshSession(samplingIntervalMicros));
      try {
        await session.post('Profiler.start');
      } catch (err) {
        discard();
        throw err;
      }
      let ended = false;
      const cancel = (): void => {
        if (ended) return;
        ended = true;
        discard();
      };
      return {
        async stop(): Promise<V8CpuProfile> {
          ended = true;
          try {
            // Before the stop, so that V8 serialising the profile counts against the first slice.
            startOfRun();
            const { profile } = await session.post('Profiler.stop');
            const nodes = await mapCooperatively(profile.nodes, (node): V8CpuProfileNode => ({
              id: node.id,
              callFrame: node.callFrame,
              hitCount: node.hitCount ?? 0,
              ...(node.children ? { children: node.children } : {}),
              ...(node.positionTicks ? { positionTicks: node.positionTicks } : {}),
            }));
            return {
              nodes,
              startTime: profile.startTime,
              endTime: profile.endTime,
              samples: profile.samples ?? [],
              timeDeltas: profile.timeDeltas ?? [],
            };
          } finally {
            // The kept session stays (its profile just ended); a fresh one is closed.
            if (!kept) discard();
          }
        },
        cancel,
      };
    },
  };
}
