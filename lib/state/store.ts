import { CycleTimeline, type CycleTimelineReading } from './cycle-spans';
import { EventLog } from './events';
import { HealthState } from './health';
import { PushedValues } from './pushed';
import { compileKeyMatcher, type KeyMatcher } from './redaction';
import type {
  AuxFilesInput,
  CycleLabels,
  ControllerConfig,
  EventListener,
  EventPage,
  EventReadOptions,
  EventQuery,
  EventStats,
  HealthCheck,
  HealthCheckOptions,
  IntrospectionState,
  ProgressRecord,
  PublishEventOptions,
  PublishVarOptions,
  ReadinessGate,
  ReadinessGateStatus,
  ReadVarOptions,
  RegisteredHealthCheck,
  VarProvider,
  VarReading,
} from './types';
import { describeUptime } from './uptime';
import { VariableRegistry, type BuiltinReader } from './variables';
import { resultCheckedOption, type ResultCheck } from '../options';
import * as option from '../options/spec';
import { optionSpec, type SameOptions } from '../options/spec';

/** Options of {@link createIntrospectionState}; omitted ones take {@link STATE_DEFAULTS}. */
export interface IntrospectionStateOptions {
  /** How many events the ring keeps (the most `?limit=` can ask for). Default 1000. */
  eventCapacity?: number;
  /** How many events `events` answers without `?limit=`. Default 100 (the last 100 events). */
  defaultEventLimit?: number;
  /**
   * Keys whose values are served as `"[REDACTED]"` in `config` and in custom variables, for hosts
   * whose configuration embeds secrets. Strings match whole keys case-insensitively. Default none.
   */
  redactKeys?: readonly (string | RegExp)[];
  /** How long a custom variable's provider may take before its read fails. Default 5000 ms. */
  providerTimeoutMs?: number;
  /**
   * Wall clock in milliseconds, for tests. Default `Date.now`. Called once at creation: a function
   * that throws or answers anything but a finite time a `Date` can hold throws there. One that goes
   * wrong later fails what needs the time then (a push, `uptime`, `state`) with an error naming this
   * option; answers that do not need it (`config`, `events`, probes) still work.
   */
  now?: () => number;
  /**
   * Hold readiness with the built-in gate `config-loaded` until the first `setConfig`, the
   * Kubernetes convention of not-ready until the first sync. Default `true`; `false` turns it off.
   */
  waitForConfig?: boolean;
}

/** The built-in readiness gate that the first `setConfig` opens. */
export const CONFIG_GATE = 'config-loaded';

/**
 * The built-in variables, in the order `/debug/vars` lists them. `event_counts` is
 * `eventStats()` (`{published, subscribers, watchers}`): what the fleet view compares between
 * gathers to see a component that stopped listening.
 */
export const BUILTIN_VARS = [
  'config',
  'credentials',
  'rendered',
  'auxfiles',
  'resources',
  'events',
  'state',
  'uptime',
  'event_counts',
] as const;

/** The ring preallocates its columns: a million events is ~50 MB before any is published. */
const MAX_EVENT_CAPACITY = 1_000_000;
const MAX_TIMER_MS = 2_147_483_647;
/** The largest time a `Date` holds, in ms either side of the epoch. */
const MAX_DATE_MS = 8.64e15;
/** What `now` must return: a time every timestamp of the state can be written from. */
const WALL_CLOCK_READING: ResultCheck<number> = {
  valid: (ms): ms is number => typeof ms === 'number' && Math.abs(ms) <= MAX_DATE_MS,
  expected: 'milliseconds since the epoch (a finite number within the range of a Date, like Date.now() returns)',
};

function isKeyPattern(key: unknown): key is string | RegExp {
  return typeof key === 'string' || key instanceof RegExp;
}

/** The options of {@link createIntrospectionState}, declared once: kinds, ranges and defaults. */
const STATE_SPEC = optionSpec('createIntrospectionState', {
  /** The ring keeps 1000 events. */
  eventCapacity: option.integer(1000, { min: 1, max: MAX_EVENT_CAPACITY }),
  /** `events` answers the last 100 without `?limit=` (at most `eventCapacity`). */
  defaultEventLimit: option.integer(100, { min: 1, max: MAX_EVENT_CAPACITY }),
  /** No keys are redacted. */
  redactKeys: option.array(Object.freeze([]) as readonly (string | RegExp)[], isKeyPattern, 'strings or RegExps'),
  /** A custom variable's provider has 5 s to answer. */
  providerTimeoutMs: option.integer(5000, { min: 1, max: MAX_TIMER_MS }),
  /** The wall clock: `Date.now()`, looked up at each call (so fake timers in a host's tests apply). */
  now: option.custom(
    (): number => Date.now(),
    ({ where, path, value, fallback }) =>
      resultCheckedOption(where, path, value, fallback, 'a function returning milliseconds, like Date.now', WALL_CLOCK_READING),
  ),
  /** Readiness waits for the first `setConfig`. */
  waitForConfig: option.boolean(true),
});

/**
 * What every option of {@link createIntrospectionState} resolves to when omitted. Frozen.
 */
export const STATE_DEFAULTS = STATE_SPEC.defaults;

/** The declaration and {@link IntrospectionStateOptions} name the same options: one added to either alone is a compile error. */
const optionsMatch: SameOptions<IntrospectionStateOptions, ReturnType<typeof STATE_SPEC.resolve>> = true;
void optionsMatch;

/** {@link IntrospectionStateOptions} checked once, with their defaults applied: the declaration's, with `redactKeys` compiled. */
type ResolvedStateOptions = Omit<ReturnType<typeof STATE_SPEC.resolve>, 'redactKeys'> & { readonly redactKeys: KeyMatcher | undefined };

/** {@link IntrospectionStateOptions} checked, with {@link STATE_DEFAULTS} applied: the options the state runs with. */
export function resolveStateOptions(options: IntrospectionStateOptions): ResolvedStateOptions {
  const resolved = STATE_SPEC.resolve(options);
  return {
    ...resolved,
    // More than the ring holds cannot be answered.
    defaultEventLimit: Math.min(resolved.eventCapacity, resolved.defaultEventLimit),
    redactKeys: compileKeyMatcher(resolved.redactKeys),
  };
}

/**
 * Creates the in-memory {@link IntrospectionState} a host pushes into.
 *
 * Setters keep references and timestamps only; the served shapes (sizes, redacted copies,
 * credential metadata) are built on the first read after each change and reused until the next.
 */
export function createIntrospectionState(options: IntrospectionStateOptions = {}): IntrospectionState {
  return new IntrospectionStore(resolveStateOptions(options));
}

/**
 * The facade: the host-pushed values, the variable registry, the event log and the health state,
 * each a module of its own, behind the one {@link IntrospectionState} interface.
 */
class IntrospectionStore implements IntrospectionState {
  readonly startedAt: Date;
  private readonly pushed: PushedValues;
  private readonly vars: VariableRegistry;
  private readonly events: EventLog;
  private readonly health: HealthState;
  private readonly cycles = new CycleTimeline();

  constructor(options: ResolvedStateOptions) {
    const { now, redactKeys } = options;
    this.startedAt = new Date(now());
    this.pushed = new PushedValues(redactKeys, now);
    this.events = new EventLog(options.eventCapacity, options.defaultEventLimit, now);
    this.health = new HealthState(now);
    this.vars = new VariableRegistry(redactKeys, options.providerTimeoutMs, now);
    const started = this.startedAt.getTime();
    // One provider per built-in, in a record the compiler checks against BUILTIN_VARS.
    const builtins: Readonly<Record<(typeof BUILTIN_VARS)[number], BuiltinReader>> = {
      config: () => this.pushed.readConfig(),
      credentials: () => this.pushed.readCredentials(),
      rendered: () => this.pushed.readRendered(),
      auxfiles: () => this.pushed.readAuxFiles(),
      resources: () => this.pushed.readResources(),
      events: (read) => this.events.reading(read),
      state: async (read) => ({ ok: true, value: await this.vars.snapshot(read) }),
      uptime: () => ({ ok: true, value: describeUptime(started, now()) }),
      event_counts: () => ({ ok: true, value: this.events.stats() }),
    };
    for (const name of BUILTIN_VARS) this.vars.builtin(name, builtins[name]);
    if (options.waitForConfig) this.health.addReadinessGate(CONFIG_GATE, 'config not loaded yet');
  }

  setConfig(config: ControllerConfig, version: string): void {
    this.pushed.setConfig(config, version);
    this.health.openReadinessGate(CONFIG_GATE);
  }

  setRendered(text: string): void {
    this.pushed.setRendered(text);
  }

  setAuxFiles(files: AuxFilesInput): void {
    this.pushed.setAuxFiles(files);
  }

  setResourceCounts(counts: Readonly<Record<string, number>>): void {
    this.pushed.setResourceCounts(counts);
  }

  setCredentials(credentials: Readonly<Record<string, unknown>>, version?: string): void {
    this.pushed.setCredentials(credentials, version);
  }

  resourceCounts(): Readonly<Record<string, number>> {
    return this.pushed.resourceCounts();
  }

  publishVar(name: string, provider: VarProvider, options?: PublishVarOptions): void {
    this.vars.publish(name, provider, options);
  }

  listVars(): string[] {
    return this.vars.list();
  }

  readVar(name: string, options?: ReadVarOptions): Promise<VarReading> {
    return this.vars.read(name, options);
  }

  publishEvent(type: string, summary?: string, options?: PublishEventOptions): void {
    this.events.publish(type, summary, options);
  }

  readEvents(query: EventQuery, limit: number, options?: EventReadOptions): EventPage {
    return this.events.read(query, limit, options);
  }

  watchEvents(wake: () => void): () => void {
    return this.events.watch(wake);
  }

  subscribe(listener: EventListener): () => void {
    return this.events.subscribe(listener);
  }

  eventStats(): EventStats {
    return this.events.stats();
  }

  addHealthCheck(name: string, check: HealthCheck, options?: HealthCheckOptions): () => void {
    return this.health.addHealthCheck(name, check, options);
  }

  healthChecks(): readonly RegisteredHealthCheck[] {
    return this.health.healthChecks();
  }

  setShuttingDown(shuttingDown: boolean, reason?: string): void {
    this.health.setShuttingDown(shuttingDown, reason);
  }

  shutdownReason(): string | undefined {
    return this.health.shutdownReason();
  }

  runCycle<T>(labels: CycleLabels, cycle: () => Promise<T>): Promise<T> {
    return this.cycles.run(labels, cycle);
  }

  cycleTimeline(fromMicros: number, toMicros: number): CycleTimelineReading {
    return this.cycles.read(fromMicros, toMicros);
  }

  traceCycles(): () => void {
    return this.cycles.trace();
  }

  recordProgress(activity?: string): void {
    this.health.recordProgress(activity);
  }

  progress(): readonly ProgressRecord[] {
    return this.health.progress();
  }

  addReadinessGate(name: string, reason?: string): ReadinessGate {
    return this.health.addReadinessGate(name, reason);
  }

  openReadinessGate(name: string): boolean {
    return this.health.openReadinessGate(name);
  }

  readinessGates(): readonly ReadinessGateStatus[] {
    return this.health.readinessGates();
  }
}
