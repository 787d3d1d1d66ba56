import { utf8ByteLength } from './byte-length';
import { describeCredentials, type CredentialsVariable } from './credentials';
import { EventRing, toEvent } from './event-ring';
import { compileKeyMatcher, eitherMatcher, redact, type KeyMatcher } from './redaction';
import {
  UnknownVariableError,
  type AuxFile,
  type AuxFilesInput,
  type ControllerConfig,
  type EventListener,
  type EventPage,
  type EventReadOptions,
  type EventQuery,
  type EventStats,
  type HealthCheck,
  type HealthCheckOptions,
  type IntrospectionState,
  type ProgressRecord,
  type PublishEventOptions,
  type PublishVarOptions,
  type ReadinessGate,
  type ReadinessGateStatus,
  type ReadVarOptions,
  type RegisteredHealthCheck,
  type VarProvider,
  type VarReading,
} from './types';
import { describeUptime } from './uptime';
import { booleanOption, checkOptionObject, integerOption } from '../options';
import { cutText, MAX_ECHOED_MESSAGE } from '../util/cut-text';
import { errorMessage } from '../util/error-message';
import { withTimeout } from '../util/with-timeout';

/** Options of {@link createIntrospectionState}. */
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
  /** Wall clock in milliseconds, for tests. Default `Date.now`. */
  now?: () => number;
  /**
   * Hold readiness with the built-in gate `config-loaded` until the first `setConfig`, the
   * Kubernetes convention of not-ready until the first sync. Default `true`; `false` turns it off.
   */
  waitForConfig?: boolean;
}

/** The built-in readiness gate that the first `setConfig` opens. */
export const CONFIG_GATE = 'config-loaded';

/** The built-in variables, in the order `/debug/vars` lists them. */
export const BUILTIN_VARS = ['config', 'credentials', 'rendered', 'auxfiles', 'resources', 'events', 'state', 'uptime'] as const;
const BUILTIN_SET: ReadonlySet<string> = new Set(BUILTIN_VARS);

const VAR_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const CHECK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Names readiness reserves for its own built-in checks. */
const RESERVED_CHECK_NAMES: ReadonlySet<string> = new Set(['ping', 'shutdown']);

interface GateEntry {
  readonly name: string;
  open: boolean;
  reason: string;
  since: number;
}

interface ProgressEntry {
  atWall: number;
  atMonotonic: number;
  count: number;
}

interface CustomVar {
  provider: VarProvider;
  matcher: KeyMatcher | undefined;
}

/** An auxiliary file as served: its content never is, only how large it is. */
interface AuxFileView {
  name: string;
  path: string;
  size: number | null;
}

const STATE_OPTIONS = ['eventCapacity', 'defaultEventLimit', 'redactKeys', 'providerTimeoutMs', 'now', 'waitForConfig'] as const;
/** The ring preallocates its columns: a million events is ~50 MB before any is published. */
const MAX_EVENT_CAPACITY = 1_000_000;
const STATE = 'createIntrospectionState';

function describeAuxFiles(files: readonly AuxFile[] | undefined, kind: string): AuxFileView[] {
  if (files === undefined) return [];
  if (!Array.isArray(files)) throw new TypeError(`setAuxFiles: ${kind} must be an array of { name, path }`);
  return files.map((file, i) => {
    if (!file || typeof file.name !== 'string' || typeof file.path !== 'string') {
      throw new TypeError(`setAuxFiles: ${kind}[${i}] needs string "name" and "path"`);
    }
    const content = file.content;
    const size = typeof content === 'string' ? Buffer.byteLength(content) : content instanceof Uint8Array ? content.byteLength : null;
    return { name: file.name, path: file.path, size };
  });
}

/**
 * Creates the in-memory {@link IntrospectionState} a host pushes into.
 *
 * Setters keep references and timestamps only; the served shapes (sizes, redacted copies,
 * credential metadata) are built on the first read after each change and reused until the next.
 */
export function createIntrospectionState(options: IntrospectionStateOptions = {}): IntrospectionState {
  return new IntrospectionStore(options);
}

class IntrospectionStore implements IntrospectionState {
  readonly startedAt: Date;
  private readonly now: () => number;
  private readonly ring: EventRing;
  private readonly defaultEventLimit: number;
  private readonly redactKeys: KeyMatcher | undefined;
  private readonly providerTimeoutMs: number;

  private config: { config: ControllerConfig; version: string; updated: number } | undefined;
  private configView: unknown;
  private rendered: { text: string; updated: number } | undefined;
  private renderedView: Promise<unknown> | undefined;
  private auxFiles: { input: AuxFilesInput; updated: number } | undefined;
  private auxFilesView: unknown;
  private credentials: { value: Readonly<Record<string, unknown>>; version: string | undefined; updated: number } | undefined;
  private credentialsView: CredentialsVariable | undefined;
  private counts: Readonly<Record<string, number>> | undefined;
  private readonly listeners = new Set<EventListener>();
  private readonly wakers = new Set<() => void>();
  private wakeScheduled = false;
  private published = 0;
  private readonly customVars = new Map<string, CustomVar>();
  private readonly checks: RegisteredHealthCheck[] = [];
  private shutdown: string | undefined;
  private readonly gates: GateEntry[] = [];
  private readonly progressByActivity = new Map<string, ProgressEntry>();

  constructor(options: IntrospectionStateOptions) {
    checkOptionObject(STATE, '', options, STATE_OPTIONS);
    const capacity = integerOption(STATE, 'eventCapacity', options.eventCapacity, 1000, 1, MAX_EVENT_CAPACITY);
    this.defaultEventLimit = Math.min(
      capacity,
      integerOption(STATE, 'defaultEventLimit', options.defaultEventLimit, 100, 1, MAX_EVENT_CAPACITY),
    );
    this.providerTimeoutMs = integerOption(STATE, 'providerTimeoutMs', options.providerTimeoutMs, 5000, 1, 2_147_483_647);
    if (options.now !== undefined && typeof options.now !== 'function')
      throw new TypeError(`${STATE}: now must be a function returning milliseconds, like Date.now`);
    this.redactKeys = compileKeyMatcher(options.redactKeys);
    this.now = options.now ?? Date.now;
    this.ring = new EventRing(capacity);
    this.startedAt = new Date(this.now());
    if (booleanOption(STATE, 'waitForConfig', options.waitForConfig, true)) this.addReadinessGate(CONFIG_GATE, 'config not loaded yet');
  }

  setConfig(config: ControllerConfig, version: string): void {
    if (config === null || typeof config !== 'object') throw new TypeError('setConfig: config must be an object');
    if (typeof version !== 'string') throw new TypeError('setConfig: version must be a string');
    this.config = { config, version, updated: this.now() };
    this.configView = undefined;
    const gate = this.gates.find((g) => g.name === CONFIG_GATE);
    if (gate !== undefined && !gate.open) this.setGate(gate, true, '');
  }

  setRendered(text: string): void {
    if (typeof text !== 'string') throw new TypeError('setRendered: text must be a string');
    this.rendered = { text, updated: this.now() };
    this.renderedView = undefined;
  }

  setAuxFiles(files: AuxFilesInput): void {
    if (files === null || typeof files !== 'object')
      throw new TypeError('setAuxFiles: expected { ssl_certificates, map_files, general_files }');
    this.auxFiles = { input: files, updated: this.now() };
    this.auxFilesView = undefined;
  }

  setResourceCounts(counts: Readonly<Record<string, number>>): void {
    if (counts === null || typeof counts !== 'object') throw new TypeError('setResourceCounts: counts must be an object of numbers');
    for (const [type, count] of Object.entries(counts)) {
      if (typeof count !== 'number' || !Number.isFinite(count)) {
        throw new TypeError(`setResourceCounts: count for "${type}" must be a finite number`);
      }
    }
    this.counts = counts;
  }

  setCredentials(credentials: Readonly<Record<string, unknown>>, version?: string): void {
    if (credentials === null || typeof credentials !== 'object') throw new TypeError('setCredentials: credentials must be an object');
    this.credentials = { value: credentials, version, updated: this.now() };
    this.credentialsView = undefined;
  }

  publishEvent(type: string, summary?: string, options?: PublishEventOptions): void {
    // Checked here, on the host's own call, so that a wrong value is a clear error at its source
    // rather than a surprise in a watcher's filter later; three typeof checks keep this O(1).
    if (typeof type !== 'string' || type === '') throw new TypeError(`publishEvent: type must be a non-empty string, got ${typeof type}`);
    if (summary !== undefined && typeof summary !== 'string')
      throw new TypeError(`publishEvent: summary must be a string, got ${typeof summary}`);
    const time = this.now();
    const text = summary ?? type;
    const correlationId = options?.correlationId;
    if (correlationId !== undefined && typeof correlationId !== 'string')
      throw new TypeError(`publishEvent: correlationId must be a string, got ${typeof correlationId}`);
    const details = options?.details;
    const seq = this.ring.push(time, type, text, correlationId, details);
    this.published++;
    // Watches read the ring on their own schedule: one wake-up per event-loop turn, however many
    // events and watchers, so publishing stays O(1) whatever the watchers do.
    if (this.wakers.size > 0 && !this.wakeScheduled) {
      this.wakeScheduled = true;
      setImmediate(this.wakeWatchers);
    }
    if (this.listeners.size === 0) return;
    const event = toEvent(seq, time, type, text, correlationId, details);
    for (const listener of this.listeners) {
      try {
        const result = listener(event);
        // TypeScript lets an async function stand for a void listener: its rejection must not
        // become an unhandled rejection that takes the host down.
        if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function')
          (result as PromiseLike<unknown>).then(undefined, ignore);
      } catch {
        // A broken subscriber must not break the publisher (the controller loop).
      }
    }
  }

  readEvents(query: EventQuery, limit: number, options?: EventReadOptions): EventPage {
    return this.ring.read(query, limit, options);
  }

  watchEvents(wake: () => void): () => void {
    if (typeof wake !== 'function') throw new TypeError('watchEvents: wake must be a function');
    const entry = (): void => wake();
    this.wakers.add(entry);
    return () => {
      this.wakers.delete(entry);
    };
  }

  private readonly wakeWatchers = (): void => {
    this.wakeScheduled = false;
    for (const wake of this.wakers) {
      try {
        wake();
      } catch {
        // One broken watch must not stop the others.
      }
    }
  };

  subscribe(listener: EventListener): () => void {
    if (typeof listener !== 'function') throw new TypeError('subscribe: listener must be a function');
    // Wrap so that subscribing the same function twice counts as two subscribers.
    const entry: EventListener = (event) => listener(event);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  publishVar(name: string, provider: VarProvider, options: PublishVarOptions = {}): void {
    if (typeof name !== 'string' || !VAR_NAME.test(name)) {
      throw new TypeError(`publishVar: name must match ${VAR_NAME.source} (letters, digits, "_", ".", "-"), got ${JSON.stringify(name)}`);
    }
    if (BUILTIN_SET.has(name)) throw new Error(`publishVar: "${name}" is a built-in variable and cannot be replaced`);
    if (this.customVars.has(name)) throw new Error(`publishVar: reuse of variable name "${name}" (publish each name once)`);
    if (typeof provider !== 'function') throw new TypeError('publishVar: provider must be a function returning the value');
    this.customVars.set(name, { provider, matcher: eitherMatcher(this.redactKeys, compileKeyMatcher(options.redactKeys)) });
  }

  addHealthCheck(name: string, check: HealthCheck, options: HealthCheckOptions = {}): () => void {
    if (typeof name !== 'string' || !CHECK_NAME.test(name)) {
      throw new TypeError(`addHealthCheck: name must match ${CHECK_NAME.source}, got ${JSON.stringify(name)}`);
    }
    this.assertFreeCheckName('addHealthCheck', name);
    if (typeof check !== 'function') throw new TypeError('addHealthCheck: check must be a function');
    const entry: RegisteredHealthCheck = { name, check, livez: options.livez ?? true, readyz: options.readyz ?? true };
    this.checks.push(entry);
    return () => {
      const index = this.checks.indexOf(entry);
      if (index >= 0) this.checks.splice(index, 1);
    };
  }

  setShuttingDown(shuttingDown: boolean, reason = 'shutting down'): void {
    this.shutdown = shuttingDown ? reason : undefined;
  }

  recordProgress(activity = 'reconciliation'): void {
    const entry = this.progressByActivity.get(activity);
    if (entry !== undefined) {
      // The hot path: no allocation, two clock reads.
      entry.atWall = this.now();
      entry.atMonotonic = performance.now();
      entry.count++;
      return;
    }
    if (typeof activity !== 'string' || !CHECK_NAME.test(activity)) {
      throw new TypeError(`recordProgress: activity must match ${CHECK_NAME.source}, got ${JSON.stringify(activity)}`);
    }
    this.progressByActivity.set(activity, { atWall: this.now(), atMonotonic: performance.now(), count: 1 });
  }

  addReadinessGate(name: string, reason?: string): ReadinessGate {
    if (typeof name !== 'string' || !CHECK_NAME.test(name)) {
      throw new TypeError(`addReadinessGate: name must match ${CHECK_NAME.source}, got ${JSON.stringify(name)}`);
    }
    if (reason !== undefined && typeof reason !== 'string') throw new TypeError('addReadinessGate: reason must be a string');
    this.assertFreeCheckName('addReadinessGate', name);
    const entry: GateEntry = { name, open: false, reason: reason ?? `waiting for ${name}`, since: this.now() };
    this.gates.push(entry);
    return {
      name,
      get isOpen() {
        return entry.open;
      },
      open: () => {
        if (!entry.open) this.setGate(entry, true, '');
      },
      close: (why?: string) => {
        if (why !== undefined && typeof why !== 'string') throw new TypeError('ReadinessGate.close: reason must be a string');
        this.setGate(entry, false, why ?? `waiting for ${name}`);
      },
      remove: () => {
        const index = this.gates.indexOf(entry);
        if (index >= 0) this.gates.splice(index, 1);
      },
    };
  }

  listVars(): string[] {
    return [...BUILTIN_VARS, ...this.customVars.keys()];
  }

  async readVar(name: string, options: ReadVarOptions = {}): Promise<VarReading> {
    switch (name) {
      case 'config':
        return this.config ? { ok: true, value: this.configValue() } : unavailable('config not loaded yet');
      case 'credentials':
        return this.credentials ? { ok: true, value: this.credentialsValue() } : unavailable('credentials not loaded yet');
      case 'rendered':
        return this.rendered ? { ok: true, value: await this.renderedValue() } : unavailable('rendered config not available yet');
      case 'auxfiles':
        return this.auxFiles ? { ok: true, value: this.auxFilesValue() } : unavailable('auxfiles not available yet');
      case 'resources':
        return this.counts ? { ok: true, value: this.counts } : unavailable('resources not counted yet');
      case 'events':
        return { ok: true, value: this.ring.read(options.events ?? {}, this.eventLimit(options.limit)).events };
      case 'uptime':
        return { ok: true, value: describeUptime(this.startedAt.getTime(), this.now()) };
      case 'state':
        return { ok: true, value: await this.stateValue(options) };
      default: {
        const custom = this.customVars.get(name);
        if (!custom) throw new UnknownVariableError(name, this.listVars());
        return { ok: true, value: await this.customValue(name, custom) };
      }
    }
  }

  healthChecks(): readonly RegisteredHealthCheck[] {
    return this.checks;
  }

  shutdownReason(): string | undefined {
    return this.shutdown;
  }

  openReadinessGate(name: string): boolean {
    const gate = this.gates.find((g) => g.name === name);
    if (gate === undefined) return false;
    if (!gate.open) this.setGate(gate, true, '');
    return true;
  }

  readinessGates(): readonly ReadinessGateStatus[] {
    return this.gates.map((g) => ({ name: g.name, open: g.open, reason: g.open ? '' : g.reason, since: new Date(g.since).toISOString() }));
  }

  progress(): readonly ProgressRecord[] {
    const now = performance.now();
    return [...this.progressByActivity].map(([activity, e]) => ({
      activity,
      at: new Date(e.atWall).toISOString(),
      ageMs: Math.max(0, now - e.atMonotonic),
      count: e.count,
    }));
  }

  private setGate(entry: GateEntry, open: boolean, reason: string): void {
    entry.open = open;
    entry.reason = reason.slice(0, 256);
    entry.since = this.now();
  }

  /** Health checks and readiness gates share one namespace: `/readyz/<name>` must mean one thing. */
  private assertFreeCheckName(caller: string, name: string): void {
    if (RESERVED_CHECK_NAMES.has(name) || this.checks.some((c) => c.name === name) || this.gates.some((g) => g.name === name)) {
      throw new Error(`${caller}: a check or readiness gate named "${name}" already exists`);
    }
  }

  resourceCounts(): Readonly<Record<string, number>> {
    return this.counts ?? {};
  }

  eventStats(): EventStats {
    return { published: this.published, subscribers: this.listeners.size, watchers: this.wakers.size };
  }

  private eventLimit(limit: number | undefined): number {
    if (limit === undefined) return this.defaultEventLimit;
    return Math.min(Math.max(0, Math.floor(limit)), this.ring.capacity);
  }

  private configValue(): unknown {
    const current = this.config!;
    this.configView ??= {
      config: this.redactKeys ? redact(current.config, this.redactKeys) : current.config,
      version: current.version,
      updated: new Date(current.updated).toISOString(),
    };
    return this.configView;
  }

  private credentialsValue(): CredentialsVariable {
    const current = this.credentials!;
    this.credentialsView ??= describeCredentials(current.value, current.version, new Date(current.updated).toISOString());
    return this.credentialsView;
  }

  private renderedValue(): Promise<unknown> {
    const current = this.rendered!;
    // Cached as a promise: concurrent first reads share one measurement of the text.
    this.renderedView ??= utf8ByteLength(current.text).then((size) => ({
      config: current.text,
      timestamp: new Date(current.updated).toISOString(),
      size,
    }));
    return this.renderedView;
  }

  private auxFilesValue(): unknown {
    if (this.auxFilesView === undefined) {
      const { input, updated } = this.auxFiles!;
      const ssl = describeAuxFiles(input.ssl_certificates, 'ssl_certificates');
      const maps = describeAuxFiles(input.map_files, 'map_files');
      const general = describeAuxFiles(input.general_files, 'general_files');
      this.auxFilesView = {
        files: { ssl_certificates: ssl, map_files: maps, general_files: general },
        timestamp: new Date(updated).toISOString(),
        summary: { ssl_count: ssl.length, map_count: maps.length, general_count: general.length },
      };
    }
    return this.auxFilesView;
  }

  private async customValue(name: string, custom: CustomVar): Promise<unknown> {
    const value = await withTimeout(
      custom.provider,
      this.providerTimeoutMs,
      () => new Error(`variable "${name}" did not answer within ${this.providerTimeoutMs} ms`),
    );
    return custom.matcher ? redact(value, custom.matcher) : value;
  }

  private async stateValue(options: ReadVarOptions): Promise<Record<string, unknown>> {
    const state: Record<string, unknown> = {
      snapshot_time: new Date(this.now()).toISOString(),
      config: this.config ? this.configValue() : null,
      credentials: this.credentials ? this.credentialsValue() : null,
      rendered: this.rendered ? await this.renderedValue() : null,
      auxfiles: this.auxFiles ? this.auxFilesValue() : null,
      resources: this.counts ?? null,
      events: this.ring.newest(this.eventLimit(options.limit)),
      uptime: describeUptime(this.startedAt.getTime(), this.now()),
    };
    const names = [...this.customVars.keys()];
    const values = await Promise.allSettled(names.map((n) => this.customValue(n, this.customVars.get(n)!)));
    names.forEach((n, i) => {
      const result = values[i]!;
      // One failing provider must not take the whole dump down; its slot says why instead.
      state[n] = result.status === 'fulfilled' ? result.value : { error: cutText(errorMessage(result.reason), MAX_ECHOED_MESSAGE) };
    });
    return state;
  }
}

function unavailable(message: string): VarReading {
  return { ok: false, reason: 'unavailable', message };
}

function ignore(): void {
  // deliberately nothing: see publishEvent
}
