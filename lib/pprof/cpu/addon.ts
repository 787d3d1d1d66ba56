import { isAbsolute } from 'node:path';
import { errorMessage } from '../../util/error-message';
import { pathToFileURL } from 'node:url';
import { EAGER_LOGGING, addonWarmState, keepAddonWarm } from './addon-warm';
import { mapCooperatively, startOfRun } from '../../util/cooperative';
import type { CpuProfileRun, CpuProfilerBackend } from './backend';
import type { V8CallFrame, V8CpuProfile, V8CpuProfileNode } from '../v8-shapes';

/** The node shape v8-profiler-next builds with `setGenerateType(1)` (lines 1-based, ids numeric). */
interface AddonNode {
  id: number;
  hitCount: number;
  children: number[];
  callFrame: {
    functionName: string;
    scriptId: number;
    url: string;
    lineNumber: number;
    columnNumber: number;
    lineTicks?: Array<{ line: number; hitCount: number }>;
  };
}

/** What `stopProfiling` answers with generate type 1. */
interface AddonProfile {
  nodes: AddonNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
  delete(): void;
}

/** The part of v8-profiler-next this package uses (its own typings are not a dependency). */
export interface V8ProfilerAddon {
  setGenerateType(type: 0 | 1): void;
  setSamplingInterval(micros: number): void;
  setProfilesCleanupLimit(limit: number): void;
  startProfiling(name: string, recordSamples: boolean, mode?: 0 | 1): void;
  stopProfiling(name: string): AddonProfile | undefined;
  readonly profiles: Record<string, unknown>;
}

/** Outcome of loading the optional native addon. */
export type AddonLoad = { ok: true; addon: V8ProfilerAddon } | { ok: false; reason: string };

let cached: AddonLoad | undefined;

/**
 * Requires v8-profiler-next once. It is an optional dependency with a native build per Node ABI,
 * so "not installed", "built for another Node" and "no prebuilt binary" all end up here as a
 * reason string instead of an exception.
 */
export function loadAddon(): AddonLoad {
  if (cached) return cached;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional native addon: loaded on demand, and its absence is a reason, not an error
    cached = { ok: true, addon: require('v8-profiler-next') as V8ProfilerAddon };
  } catch (err) {
    cached = { ok: false, reason: errorMessage(err).split('\n')[0]! };
  }
  return cached;
}

// The addon reports paths and 1-based positions; the inspector (and DevTools) use file URLs and
// 0-based positions. Converting here is what lets one converter and one .cpuprofile serve both.
// pathToFileURL costs microseconds and a profile repeats each script at many nodes.
function urlConverter(): (path: string) => string {
  const urls = new Map<string, string>();
  return (path) => {
    if (!path || !isAbsolute(path)) return path;
    let url = urls.get(path);
    if (url === undefined) {
      url = pathToFileURL(path).href;
      urls.set(path, url);
    }
    return url;
  };
}

function toCallFrame(frame: AddonNode['callFrame'], toUrl: (path: string) => string): V8CallFrame {
  return {
    functionName: frame.functionName,
    scriptId: String(frame.scriptId),
    url: toUrl(frame.url),
    lineNumber: frame.lineNumber - 1,
    columnNumber: frame.columnNumber - 1,
  };
}

function toNode(node: AddonNode, toUrl: (path: string) => string): V8CpuProfileNode {
  const result: V8CpuProfileNode = { id: node.id, callFrame: toCallFrame(node.callFrame, toUrl), hitCount: node.hitCount };
  if (node.children.length > 0) result.children = [...node.children];
  if (node.callFrame.lineTicks && node.callFrame.lineTicks.length > 0) {
    result.positionTicks = node.callFrame.lineTicks.map((tick) => ({ line: tick.line, ticks: tick.hitCount }));
  }
  return result;
}

async function toDevToolsShape(profile: AddonProfile): Promise<V8CpuProfile> {
  const toUrl = urlConverter();
  const nodes = await mapCooperatively(profile.nodes, (node) => toNode(node, toUrl));
  return {
    nodes,
    startTime: profile.startTime,
    endTime: profile.endTime,
    samples: [...profile.samples],
    timeDeltas: [...profile.timeDeltas],
  };
}

let titleCounter = 0;

/**
 * CPU profiles through the v8-profiler-next native addon. With {@link CpuProfilerBackend.keepWarm}
 * held, V8's profiler and its code log persist between profiles, so a start does not walk the heap.
 */
export function createAddonCpuBackend(addon: V8ProfilerAddon): CpuProfilerBackend {
  return {
    name: 'v8-profiler-next',
    keepWarm: () => keepAddonWarm(addon),
    get startCost(): string {
      const state = addonWarmState();
      if (state.warm) return "starting a profile does not block: V8's code log is kept from router creation on (eager logging)";
      const why = state.error === undefined ? 'no router holds the profiler warm' : `keeping the profiler warm failed: ${state.error}`;
      return `${why}; each start blocks the event loop while V8 walks the heap, for a time that grows with the heap (100-250 ms with a 50 MB state)`;
    },
    async start(samplingIntervalMicros: number): Promise<CpuProfileRun> {
      titleCounter += 1;
      const title = `controller-introspection-${process.pid}-${titleCounter}`;
      try {
        addon.setSamplingInterval(samplingIntervalMicros);
      } catch {
        // Another user of the addon is profiling right now; V8 then keeps its current interval.
      }
      // Eager, in case something disposed of the warm profiler: the profiler created now stays.
      addon.startProfiling(title, true, EAGER_LOGGING);
      let done = false;
      // The addon keeps every stopped profile in a registry until delete(); forgetting that leaks.
      const stopAndFree = (): AddonProfile | undefined => {
        done = true;
        // Generate type is module-global in the addon; set it at the last moment in case another
        // user of the addon changed it meanwhile. Type 1 is the DevTools shape.
        addon.setGenerateType(1);
        return addon.stopProfiling(title);
      };
      return {
        async stop(): Promise<V8CpuProfile> {
          if (done) throw new Error('CPU profile already stopped');
          // Before the stop, so that V8 building the profile counts against the first slice.
          startOfRun();
          const profile = stopAndFree();
          if (!profile) throw new Error('v8-profiler-next lost the running profile');
          try {
            return await toDevToolsShape(profile);
          } finally {
            profile.delete();
          }
        },
        cancel(): void {
          if (done) return;
          try {
            stopAndFree()?.delete();
          } catch {
            // Cancelling is best effort by contract; the profiler is stopped either way.
          }
        },
      };
    },
  };
}
