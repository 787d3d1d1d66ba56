/**
 * The contract between a controller host and the routers of this package.
 *
 * Data flows one way: the host pushes into an {@link IntrospectionState}; the routers only read it
 * through this interface. A host may supply its own implementation (for example one backed by its
 * existing caches) instead of the store made by `createIntrospectionState`.
 */

import { quoteText } from '../util/cut-text';
import type { CycleLabels, CycleTimelineReading } from './cycle-spans';

export type { CycleLabels, CycleSegment, CycleSpan, CycleTimelineReading } from './cycle-spans';

/** An ISO 8601 UTC timestamp such as `2026-11-22T20:40:49.123Z`. */
export type Timestamp = string;

/** The controller configuration pushed with {@link IntrospectionState.setConfig}. */
export interface ControllerConfig {
  /** Template name → template text. */
  templates: Record<string, string>;
  /** The watched resource definitions, in the host's own shape. */
  watched_resources: unknown[];
  /** Anything else the host's configuration carries. */
  [key: string]: unknown;
}

/** One auxiliary file used by a deployment. `content` goes in; it is never served. */
export interface AuxFile {
  /** File name as the load balancer knows it. */
  name: string;
  /** Filesystem path on the load-balancer pod. */
  path: string;
  /** File content. Never served (a certificate file holds a private key); only its size is. */
  content?: string | Uint8Array;
}

/** The auxiliary files of the last deployment, as pushed with {@link IntrospectionState.setAuxFiles}. */
export interface AuxFilesInput {
  /** Certificate files (a certificate file may hold its private key: contents are never served). Missing means none. */
  ssl_certificates?: AuxFile[];
  /** Map files the configuration looks keys up in. Missing means none. */
  map_files?: AuxFile[];
  /** Any other file the configuration refers to. Missing means none. */
  general_files?: AuxFile[];
}

/** Structured data attached to an event (served as given: keep it small and free of secrets). */
export type EventDetails = Readonly<Record<string, unknown>>;

/** One entry of the event ring. */
export interface ControllerEvent {
  /** Sequence number: 1 for the first event published, never reused; resume a watch after it. */
  seq: number;
  /** When the event was published. */
  timestamp: Timestamp;
  /** Event kind, for example `reconciliation.triggered`. */
  type: string;
  /** Short text; equals `type` when the publisher gave none. */
  summary: string;
  /** The reconciliation cycle (or other unit of work) the event belongs to; only when given. */
  correlation_id?: string;
  /** Structured details; only when given. */
  details?: EventDetails;
  /**
   * Set instead of `details` when the host's details cannot be served (a cycle, a BigInt, a getter
   * or `toJSON()` that throws; in a watch, also details larger than it holds): the path and the
   * problem. The event itself, and the events around it, are served as usual.
   */
  details_error?: string;
}

/** Optional parts of a published event. */
export interface PublishEventOptions {
  /** Ties the event to a reconciliation cycle: every event of a cycle shares its id. */
  correlationId?: string;
  /** Structured details, served with the event (keep them small; never secrets). */
  details?: EventDetails;
}

/** What {@link IntrospectionState.readEvents} found: the matching events and where the ring stands. */
export interface EventPage {
  /** Matching events with `seq > since`, oldest first (at most `limit`, the newest ones). */
  readonly events: ControllerEvent[];
  /** The seq of the oldest event still in the ring (`nextSeq` when the ring is empty). */
  readonly oldestSeq: number;
  /** The seq the next published event will get. */
  readonly nextSeq: number;
  /**
   * The newest seq examined. Reading oldest first stops at `limit` matches or after `maxScan`
   * events; the next read carries on after this seq, so filters that match nothing never make one
   * read walk the ring. (A host's own reader must not count events past the last match it returns
   * when it stopped at `limit`: a watch would skip them.)
   */
  readonly scannedThrough: number;
}

/** How {@link IntrospectionState.readEvents} walks the ring. */
export interface EventReadOptions {
  /**
   * `newest` (default): the newest `limit` matches, for answers. `oldest`: the oldest `limit`
   * matches after `since`, for watches that deliver every event in order.
   */
  readonly from?: 'newest' | 'oldest';
  /** Reading oldest first, examine at most this many events (default: no bound). */
  readonly maxScan?: number;
}

/** Which events to read: every condition given must hold. */
export interface EventQuery {
  /** Only events with a larger seq. */
  since?: number;
  /** An exact type, or a prefix when it ends with `.` (`deployment.`). */
  type?: string;
  /** Only events of this correlation id. */
  correlationId?: string;
}

/**
 * Called for every published event. A listener that throws, or returns a promise that rejects, is
 * reported like any broken listener (ignored; it never reaches the publisher).
 */
export type EventListener = (event: ControllerEvent) => unknown;

/** Produces the value of a custom variable at read time, like Go's `expvar.Func`. */
export type VarProvider = () => unknown;

/** Options of {@link IntrospectionState.publishVar}. */
export interface PublishVarOptions {
  /**
   * Keys whose values are replaced by `"[REDACTED]"` wherever they appear in this variable (in
   * addition to the store's `redactKeys`). Matched case-insensitively against whole key names.
   */
  redactKeys?: readonly (string | RegExp)[];
}

/**
 * A health check's outcome with a sentence about it, shown by `?verbose` and `/healthz`: for example
 * how long ago a watched activity last made progress.
 */
export interface HealthCheckReport {
  /** Healthy or not. */
  readonly ok: boolean;
  /** One short sentence (cut to 256 characters when served). */
  readonly detail?: string;
}

/**
 * The outcome of a health check: `true`/`undefined` is healthy; `false` or a throw is not; a
 * {@link HealthCheckReport} says which with a detail.
 */
export type HealthCheckResult = boolean | void | HealthCheckReport | Promise<boolean | void | HealthCheckReport>;

/** A named health check registered by the host. A thrown error's message is reported. */
export type HealthCheck = () => HealthCheckResult;

/** Where a health check counts. */
export interface HealthCheckOptions {
  /** Include in `/livez` (and `/healthz`). Default `true`. */
  livez?: boolean;
  /** Include in `/readyz` (and `/healthz`). Default `true`. */
  readyz?: boolean;
}

/** A registered health check as routers see it. */
export interface RegisteredHealthCheck {
  /** The name it was added under: its line in the `/livez` and `/readyz` reports. */
  readonly name: string;
  /** The function called on every probe that includes it. */
  readonly check: HealthCheck;
  /** Whether `/livez` (and `/healthz`) run it, as resolved from {@link HealthCheckOptions.livez}. */
  readonly livez: boolean;
  /** Whether `/readyz` (and `/healthz`) run it, as resolved from {@link HealthCheckOptions.readyz}. */
  readonly readyz: boolean;
}

/** The last progress of one activity, recorded with {@link IntrospectionState.recordProgress}. */
export interface ProgressRecord {
  /** The activity, for example `reconciliation`. */
  readonly activity: string;
  /** When it last progressed (wall clock). */
  readonly at: Timestamp;
  /** How long ago that was, in milliseconds, on a monotonic clock (immune to clock steps). */
  readonly ageMs: number;
  /** How many times it progressed since the store was created. */
  readonly count: number;
}

/**
 * A named readiness gate: while closed, `/readyz` and `/healthz` fail with its reason (and
 * `/readyz/<name>` answers for it alone); `/livez` never looks at gates.
 */
export interface ReadinessGate {
  /** The gate's name, as `?verbose` and `/readyz/<name>` show it. */
  readonly name: string;
  /** Whether the gate lets readiness pass. */
  readonly isOpen: boolean;
  /** Opens the gate. Idempotent. */
  open(): void;
  /** Closes it again, with the reason readiness reports. */
  close(reason?: string): void;
  /** Removes the gate: it no longer holds readiness. Idempotent. */
  remove(): void;
}

/** A readiness gate as routers and metrics see it. */
export interface ReadinessGateStatus {
  /** The gate's name. */
  readonly name: string;
  /** Whether it lets readiness pass. */
  readonly open: boolean;
  /** Why it is closed (the last reason given); empty when open. */
  readonly reason: string;
  /** When it last opened or closed. */
  readonly since: Timestamp;
}

/** Counters of the event stream, read by the metrics at scrape time. */
export interface EventStats {
  /** Events published since the store was created. */
  published: number;
  /** Listeners currently subscribed (internal components; not watchers over HTTP). */
  subscribers: number;
  /** Event watches currently open (`?watch=1` streams); a host's own state may leave it out (0). */
  watchers?: number;
}

/**
 * The result of reading a variable: the value, or why there is none.
 *
 * `unavailable` means the variable exists but has no value yet (HTTP 503), for example `config`
 * before the first `setConfig` ("config not loaded yet").
 */
export type VarReading =
  | {
      /** The variable has a value. */
      readonly ok: true;
      /** The value as served: with `redactKeys` set, matching keys are already redacted. */
      readonly value: unknown;
    }
  | {
      /** The variable has no value yet. */
      readonly ok: false;
      /** Why there is none: a field rather than implied by `ok`, so that a new reason is not a breaking change. */
      readonly reason: 'unavailable';
      /** What to tell the client, for example `config not loaded yet`. */
      readonly message: string;
    };

/** Options of {@link IntrospectionState.readVar}. */
export interface ReadVarOptions {
  /** For `events`: how many of the newest events to answer (defaults to 100, capped at capacity). */
  limit?: number;
  /** For `events`: which events (type, correlation id, after a seq). */
  events?: EventQuery;
}

/** Thrown by {@link IntrospectionState.readVar} for a name that is not a variable. */
export class UnknownVariableError extends Error {
  /** The variables that do exist, for the error message. */
  readonly known: readonly string[];
  /** `name` is the name asked for; `known` lists the variables that exist, in the order they are listed. */
  constructor(name: string, known: readonly string[]) {
    super(`unknown variable ${quoteText(name, 64)}; known variables: ${known.join(', ')}`);
    this.name = 'UnknownVariableError';
    this.known = known;
  }
}

/**
 * The read side of {@link IntrospectionState}: all that the routers and the metrics read. A host
 * with its own caches may implement just this (and `setShuttingDown` for the introspection
 * router's `close()`).
 */
export interface IntrospectionStateReader {
  /** Names of every variable, built-in first, then custom ones in publication order. */
  listVars(): string[];
  /**
   * Reads one variable. Throws {@link UnknownVariableError} for an unknown name; a custom provider's
   * error or rejection propagates. The value is the live object: callers must not mutate it.
   */
  readVar(name: string, options?: ReadVarOptions): Promise<VarReading>;
  /** The registered health checks, in registration order. */
  healthChecks(): readonly RegisteredHealthCheck[];
  /** `undefined` while serving normally; the reason while shutting down. */
  shutdownReason(): string | undefined;
  /** The readiness gates, built-in `config-loaded` first, then in the order they were added. */
  readinessGates(): readonly ReadinessGateStatus[];
  /** The last progress of every activity recorded so far. */
  progress(): readonly ProgressRecord[];
  /**
   * Current resource counts by type (the live object: do not mutate). A host's own implementation
   * answers an object of finite counts `>= 0`; anything else costs `<prefix>resource_count` its
   * place in that scrape, with an error naming this method and what it returned.
   */
  resourceCounts(): Readonly<Record<string, number>>;
  /**
   * Published-event and subscriber counts. A host's own implementation answers counts that are
   * finite numbers `>= 0`; anything else costs the families read from it their place in that
   * scrape, with an error naming this method and what it returned.
   */
  eventStats(): EventStats;
  /**
   * Reads events after a seq, filtered, for an event watch: the newest `limit` matches (or, with
   * `from: 'oldest'`, the oldest ones after `since`) and where the ring stands (a reader that finds
   * `oldestSeq > its cursor + 1` has missed events).
   */
  readEvents(query: EventQuery, limit: number, options?: EventReadOptions): EventPage;
  /**
   * Registers a watch: `wake` is called (at most once per event-loop turn, never inside
   * `publishEvent`) after events were published. Counted in `eventStats().watchers`. Returns the
   * function that ends the watch.
   */
  watchEvents(wake: () => void): () => void;
  /** When the store was created. */
  readonly startedAt: Date;
  /**
   * The reconciliation cycles in flight during [fromMicros, toMicros] of the monotonic clock
   * (`process.hrtime`, µs; V8's CPU profiles use it too), oldest first, from a bounded ring (the
   * last 4096), with their synchronous segments noted while {@link traceCycles} was on: what the
   * pprof router labels CPU samples with. Optional: a host's own reader without it serves
   * unlabelled profiles.
   */
  cycleTimeline?(fromMicros: number, toMicros: number): CycleTimelineReading;
  /**
   * Notes each cycle's synchronous segments (async_hooks `before`/`after` on the callbacks of a
   * cycle's AsyncLocalStorage context) until the answer is called: the pprof router turns it on
   * while a CPU profile records, so that samples of concurrent cycles are told apart. Optional.
   */
  traceCycles?(): () => void;
}

/**
 * Everything a controller host pushes in, and (through {@link IntrospectionStateReader}) everything
 * the routers read out.
 *
 * Setters store references and do no serialisation: the push side stays cheap on the host's hot
 * path. Derived values (sizes, counts, redacted views) are computed lazily on read, once per value.
 */
export interface IntrospectionState extends IntrospectionStateReader {
  /** Stores the current controller configuration and its version. */
  setConfig(config: ControllerConfig, version: string): void;
  /** Stores the most recently rendered load-balancer configuration text. */
  setRendered(text: string): void;
  /** Stores the auxiliary files of the last deployment. File contents are never served. */
  setAuxFiles(files: AuxFilesInput): void;
  /**
   * Replaces the resource counts by type, for example `{ ingresses: 3, 'lb-pods': 2 }`: finite
   * numbers `>= 0`, at most 10 000 types. The own entries are copied (later changes to the object
   * are not seen); a type may have any name, `__proto__` included.
   */
  setResourceCounts(counts: Readonly<Record<string, number>>): void;
  /**
   * Stores the credentials the controller uses. Only metadata ever comes out (which credentials
   * exist, which fields are set, when they were updated and their version), never a value.
   */
  setCredentials(credentials: Readonly<Record<string, unknown>>, version?: string): void;
  /**
   * Appends an event to the ring (O(1), no allocation beyond the ring's own slots) and notifies
   * subscribers. The timestamp is taken here; `summary` defaults to `type`.
   */
  publishEvent(type: string, summary?: string, options?: PublishEventOptions): void;
  /** Subscribes to the live event stream; the returned function unsubscribes (idempotent). */
  subscribe(listener: EventListener): () => void;
  /** Publishes a custom variable, like Go's `expvar.Publish`. Built-in names cannot be replaced. */
  publishVar(name: string, provider: VarProvider, options?: PublishVarOptions): void;
  /** Registers a named health check for `/healthz`, `/livez` and `/readyz`. Returns a remover. */
  addHealthCheck(name: string, check: HealthCheck, options?: HealthCheckOptions): () => void;
  /**
   * Marks the host as shutting down (or back up): `/readyz` and `/healthz` then fail with the
   * given reason while `/livez` stays healthy, so Kubernetes stops routing before the pod exits.
   */
  setShuttingDown(shuttingDown: boolean, reason?: string): void;
  /**
   * Records that `activity` (default `reconciliation`) made progress: the heartbeat a progress
   * watchdog (`watchProgress`) looks at. Cheap enough for every loop iteration: an idle controller
   * ticks it from its idle loop so that it is not taken for a stuck one. `createControllerMetrics`
   * with this state records `reconciliation` on every completed cycle.
   */
  recordProgress(activity?: string): void;
  /**
   * Adds a readiness gate, closed until the host opens it. `reason` is what readiness reports
   * meanwhile (default `waiting for <name>`). Names share one namespace with health checks.
   */
  addReadinessGate(name: string, reason?: string): ReadinessGate;
  /**
   * Opens a readiness gate by name (for example the built-in `config-loaded`, which the first
   * successful pipeline cycle opens too). Answers whether a gate of that name exists.
   */
  openReadinessGate(name: string): boolean;
  /**
   * Runs a reconciliation cycle (`createPipeline` calls it for every cycle) in its own
   * AsyncLocalStorage context, and notes when it ran with the pprof labels its CPU samples get:
   * O(1), a slot of a fixed ring of the last 4096 cycles, read by
   * {@link IntrospectionStateReader.cycleTimeline}. Answers what `cycle` answers.
   */
  runCycle<T>(labels: CycleLabels, cycle: () => Promise<T>): Promise<T>;
  /** See {@link IntrospectionStateReader.cycleTimeline}: the state's own always answers. */
  cycleTimeline(fromMicros: number, toMicros: number): CycleTimelineReading;
  /** See {@link IntrospectionStateReader.traceCycles}. */
  traceCycles(): () => void;
}
