import { createAddonCpuBackend, loadAddon } from './addon';
import type { CpuProfilerBackend } from './backend';
import { createInspectorCpuBackend } from './inspector';
import { loadInspector } from '../inspector-session';
import { PROFILER_ENV, type ResolvedPprofOptions } from '../options';

/** The chosen CPU profiler and a sentence saying why, shown on the index page. */
export interface BackendSelection {
  /** The backend to use. */
  readonly backend: CpuProfilerBackend;
  /** Why this backend, e.g. the addon's load error when falling back. */
  readonly reason: string;
}

function forcedBy(options: ResolvedPprofOptions): string {
  return options.profilerSource === 'env' ? `${PROFILER_ENV}=${options.profiler}` : `option profiler: '${options.profiler}'`;
}

function inspectorOrThrow(why: string, options: ResolvedPprofOptions): CpuProfilerBackend {
  const inspector = loadInspector();
  if (!inspector.available) throw new Error(`${why}, but node:inspector is not available either: ${inspector.reason}`);
  return createInspectorCpuBackend({ samplingIntervalMicros: options.cpuSamplingIntervalMicros, keepCodeLog: options.keepCodeLog });
}

/**
 * Picks the CPU profiler: the native addon when it loads (it hands V8's profile over without a
 * JSON round trip), else `node:inspector`, which every standard Node build has. A backend forced
 * by option or environment that cannot load is a start-up error, not a silent fallback.
 */
export function selectCpuBackend(options: ResolvedPprofOptions): BackendSelection {
  if (options.profiler === 'inspector') {
    return {
      backend: inspectorOrThrow(`the inspector backend was forced by ${forcedBy(options)}`, options),
      reason: `forced by ${forcedBy(options)}`,
    };
  }
  const addon = loadAddon();
  if (options.profiler === 'v8-profiler-next') {
    if (!addon.ok) {
      throw new Error(
        `v8-profiler-next was forced by ${forcedBy(options)} but failed to load: ${addon.reason}; use profiler 'auto' or 'inspector'`,
      );
    }
    return { backend: createAddonCpuBackend(addon.addon), reason: `forced by ${forcedBy(options)}; native addon loaded` };
  }
  if (addon.ok) return { backend: createAddonCpuBackend(addon.addon), reason: 'native addon v8-profiler-next loaded' };
  return {
    backend: inspectorOrThrow(`v8-profiler-next failed to load (${addon.reason})`, options),
    reason: `v8-profiler-next failed to load (${addon.reason}); fell back to node:inspector`,
  };
}
