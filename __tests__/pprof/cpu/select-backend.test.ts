import { createAddonCpuBackend, loadAddon, type AddonLoad, type V8ProfilerAddon } from '../../../lib/pprof/cpu/addon';
import type { CpuProfilerBackend } from '../../../lib/pprof/cpu/backend';
import { createInspectorCpuBackend } from '../../../lib/pprof/cpu/inspector';
import { loadInspector, type InspectorAvailability } from '../../../lib/pprof/inspector-session';
import { PROFILER_ENV, resolvePprofOptions, type PprofOptions } from '../../../lib/pprof/options';
import { selectCpuBackend } from '../../../lib/pprof/cpu/select-backend';

// The loaders and backend factories are replaced so every combination of "the addon loads or
// not" and "node:inspector is available or not" can be tried in one process.
jest.mock('../../../lib/pprof/cpu/addon', () => ({ loadAddon: jest.fn(), createAddonCpuBackend: jest.fn() }));
jest.mock('../../../lib/pprof/inspector-session', () => ({ loadInspector: jest.fn() }));
jest.mock('../../../lib/pprof/cpu/inspector', () => ({ createInspectorCpuBackend: jest.fn() }));

const mockLoadAddon = jest.mocked(loadAddon);
const mockCreateAddon = jest.mocked(createAddonCpuBackend);
const mockLoadInspector = jest.mocked(loadInspector);
const mockCreateInspector = jest.mocked(createInspectorCpuBackend);

const FAKE_ADDON = { tag: 'addon module' } as unknown as V8ProfilerAddon;
const ADDON_BACKEND = { name: 'v8-profiler-next' } as unknown as CpuProfilerBackend;
const INSPECTOR_BACKEND = { name: 'inspector' } as unknown as CpuProfilerBackend;
const ADDON_ERROR = 'Cannot find module v8-profiler-next/build/binding/Release/node-v115-linux-x64/profiler.node';
const INSPECTOR_ERROR = 'No such built-in module: node:inspector/promises';

type Addon = 'loads' | 'fails';
type Inspector = 'available' | 'missing';

function world(addon: Addon, inspector: Inspector): void {
  mockLoadAddon.mockReturnValue((addon === 'loads' ? { ok: true, addon: FAKE_ADDON } : { ok: false, reason: ADDON_ERROR }) as AddonLoad);
  mockLoadInspector.mockReturnValue(
    (inspector === 'available' ? { available: true } : { available: false, reason: INSPECTOR_ERROR }) as InspectorAvailability,
  );
}

function select(options: PprofOptions, env: NodeJS.ProcessEnv = {}) {
  return selectCpuBackend(resolvePprofOptions(options, env));
}

beforeEach(() => {
  jest.clearAllMocks();
  mockCreateAddon.mockReturnValue(ADDON_BACKEND);
  mockCreateInspector.mockReturnValue(INSPECTOR_BACKEND);
});

describe('selectCpuBackend: auto', () => {
  it.each([
    ['unset', {}, {}],
    ["'auto'", { profiler: 'auto' }, {}],
    ['unset, env empty', {}, { [PROFILER_ENV]: '' }],
    ["'auto', env auto", { profiler: 'auto' }, { [PROFILER_ENV]: 'auto' }],
  ] as const)('profiler %s prefers the native addon when it loads', (_label, options, env) => {
    world('loads', 'available');
    const selection = select(options as PprofOptions, env);
    expect(selection.backend).toBe(ADDON_BACKEND);
    expect(selection.reason).toBe('native addon v8-profiler-next loaded');
    expect(mockCreateAddon).toHaveBeenCalledWith(FAKE_ADDON);
    expect(mockLoadInspector).not.toHaveBeenCalled();
    expect(mockCreateInspector).not.toHaveBeenCalled();
  });

  it('falls back to node:inspector with the addon load error as reason', () => {
    world('fails', 'available');
    const selection = select({ cpuSamplingIntervalMicros: 250, keepCodeLog: false });
    expect(selection.backend).toBe(INSPECTOR_BACKEND);
    expect(selection.reason).toBe(`v8-profiler-next failed to load (${ADDON_ERROR}); fell back to node:inspector`);
    expect(mockCreateInspector).toHaveBeenCalledWith({ samplingIntervalMicros: 250, keepCodeLog: false });
    expect(mockCreateAddon).not.toHaveBeenCalled();
  });

  it('passes the default sampling interval and keepCodeLog to the inspector backend', () => {
    world('fails', 'available');
    select({});
    expect(mockCreateInspector).toHaveBeenCalledWith({ samplingIntervalMicros: 10_000, keepCodeLog: true });
  });

  it('throws naming both failures when neither backend can load', () => {
    world('fails', 'missing');
    expect(() => select({})).toThrow(
      `v8-profiler-next failed to load (${ADDON_ERROR}), but node:inspector is not available either: ${INSPECTOR_ERROR}`,
    );
    expect(mockCreateInspector).not.toHaveBeenCalled();
  });

  it('does not need node:inspector when the addon loads', () => {
    world('loads', 'missing');
    expect(select({}).backend).toBe(ADDON_BACKEND);
  });
});

describe('selectCpuBackend: forced inspector', () => {
  it.each([
    ['option', { profiler: 'inspector' }, {}, "option profiler: 'inspector'"],
    ['environment', {}, { [PROFILER_ENV]: 'inspector' }, `${PROFILER_ENV}=inspector`],
    ["environment under option 'auto'", { profiler: 'auto' }, { [PROFILER_ENV]: 'inspector' }, `${PROFILER_ENV}=inspector`],
    ['option over environment', { profiler: 'inspector' }, { [PROFILER_ENV]: 'v8-profiler-next' }, "option profiler: 'inspector'"],
  ] as const)('by %s uses the inspector even though the addon loads, and never loads the addon', (_label, options, env, by) => {
    world('loads', 'available');
    const selection = select(options as PprofOptions, env);
    expect(selection.backend).toBe(INSPECTOR_BACKEND);
    expect(selection.reason).toBe(`forced by ${by}`);
    expect(mockLoadAddon).not.toHaveBeenCalled();
    expect(mockCreateAddon).not.toHaveBeenCalled();
  });

  it.each([
    ['option', { profiler: 'inspector' }, {}, "option profiler: 'inspector'"],
    ['environment', {}, { [PROFILER_ENV]: 'inspector' }, `${PROFILER_ENV}=inspector`],
  ] as const)('by %s throws when node:inspector is missing, without falling back to the addon', (_label, options, env, by) => {
    world('loads', 'missing');
    expect(() => select(options as PprofOptions, env)).toThrow(
      `the inspector backend was forced by ${by}, but node:inspector is not available either: ${INSPECTOR_ERROR}`,
    );
    expect(mockCreateAddon).not.toHaveBeenCalled();
  });
});

describe('selectCpuBackend: forced v8-profiler-next', () => {
  it.each([
    ['option', { profiler: 'v8-profiler-next' }, {}, "option profiler: 'v8-profiler-next'"],
    ['environment', {}, { [PROFILER_ENV]: 'v8-profiler-next' }, `${PROFILER_ENV}=v8-profiler-next`],
    ['option over environment', { profiler: 'v8-profiler-next' }, { [PROFILER_ENV]: 'inspector' }, "option profiler: 'v8-profiler-next'"],
  ] as const)('by %s uses the addon when it loads', (_label, options, env, by) => {
    world('loads', 'available');
    const selection = select(options as PprofOptions, env);
    expect(selection.backend).toBe(ADDON_BACKEND);
    expect(selection.reason).toBe(`forced by ${by}; native addon loaded`);
    expect(mockCreateAddon).toHaveBeenCalledWith(FAKE_ADDON);
    expect(mockLoadInspector).not.toHaveBeenCalled();
  });

  it.each([
    ['option', { profiler: 'v8-profiler-next' }, {}, "option profiler: 'v8-profiler-next'"],
    ['environment', {}, { [PROFILER_ENV]: 'v8-profiler-next' }, `${PROFILER_ENV}=v8-profiler-next`],
  ] as const)('by %s is a start-up error when the addon fails, never a silent fallback', (_label, options, env, by) => {
    world('fails', 'available');
    expect(() => select(options as PprofOptions, env)).toThrow(
      `v8-profiler-next was forced by ${by} but failed to load: ${ADDON_ERROR}; use profiler 'auto' or 'inspector'`,
    );
    expect(mockCreateInspector).not.toHaveBeenCalled();
    expect(mockLoadInspector).not.toHaveBeenCalled();
  });
});

describe('choices that never reach selection', () => {
  it.each([
    [{ profiler: 'V8' }, {}, /createPprofRouter: profiler must be one of auto, v8-profiler-next, inspector, got "V8"/],
    [
      {},
      { [PROFILER_ENV]: 'addon' },
      new RegExp(`environment variable ${PROFILER_ENV} must be one of auto, v8-profiler-next, inspector \\(or unset\\), got "addon"`),
    ],
  ])('%j with env %j is rejected by option resolution', (options, env, message) => {
    expect(() => select(options as PprofOptions, env as NodeJS.ProcessEnv)).toThrow(message);
    expect(mockLoadAddon).not.toHaveBeenCalled();
  });
});
