// The fleet view: the controller's replicas listed through the Kubernetes API, each read over
// HTTP with bounded concurrency, judged into findings, and answered at GET /debug/fleet.

import { hostname } from 'node:os';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { answerErrors, handle, HttpError } from '../http/errors';
import { readOnly } from '../http/methods';
import { EXACT_ROUTING } from '../http/request-path';
import { sendJson } from '../http/send-json';
import { watchClientGone } from '../http/client-gone';
import { labelSelectorProblem, listReplicas, namespaceProblem, type PodsApi, type ReplicaPod } from '../kubernetes/replicas';
import { describeValue, signalOption } from '../options';
import * as option from '../options/spec';
import { optionSpec, type SameOptions } from '../options/spec';
import { identityOrNone, readBoundedFile, readBoundedFileSync, type FileRead } from '../util/bounded-file';
import { closeOnce } from '../util/close-once';
import { cutText, quoteText } from '../util/cut-text';
import { errorMessage } from '../util/error-message';
import { FINDING_BOUNDS, findingsOf, statusOf } from './findings';
import { readReplicaTarget, unreadableReplica, type ReplicaSettings } from './replica';
import type { FleetReport, ReplicaReport } from './report';

/** Options of {@link createFleetView}; omitted ones take {@link FLEET_VIEW_DEFAULTS}. */
export interface FleetViewOptions {
  /**
   * The namespace of the controller's pods. Default: the pod's own, read at creation from
   * `/var/run/secrets/kubernetes.io/serviceaccount/namespace` (creation throws when it is absent
   * and this is not given).
   */
  namespace?: string;
  /** The label selector of the controller's Deployment (`app=ctl`, as its `spec.selector`). Required. */
  selector: string;
  /** The port every replica's introspection router listens on. Default 8080. */
  port?: number;
  /** `http` or `https`, as the replicas serve it. Default `http`. */
  scheme?: 'http' | 'https';
  /** Where the replicas mount their introspection router (`/ctl`); default `''` (the root). */
  basePath?: string;
  /**
   * The file of the bearer token the replicas are read with: this pod's own ServiceAccount token,
   * never a caller's. Read at creation and again whenever it changes (the kubelet rotates it), at
   * most 64 KiB, never blocking. `null` reads the replicas without a token. Default
   * `/var/run/secrets/kubernetes.io/serviceaccount/token`.
   */
  tokenFile?: string | null;
  /**
   * The ServiceAccount a pod must run as (its `spec.serviceAccountName`) to be sent the token: a
   * pod that matches the selector but runs as another ServiceAccount does not hold this token, and
   * is reported unreachable, unread. Default: the ServiceAccount the token names
   * (`system:serviceaccount:<namespace>:<name>`, its `sub`), read again with each token; creation
   * throws when the token names none and this is not given. `null` sends the token to every pod
   * the selector matches.
   */
  serviceAccountName?: string | null;
  /** A PEM file of the CAs `https` replicas' certificates chain to; reread when it changes. Default: Node's CAs. */
  caFile?: string;
  /** The name `https` replicas' certificates must hold (their Service's DNS name). Default: the pod's IP. */
  serverName?: string;
  /** Replicas read at once. Default 8. */
  concurrency?: number;
  /** The bound of reading one replica, and of listing the pods. Milliseconds; default 3000. */
  timeoutMs?: number;
  /** The most bytes one replica's answers may hold together. Default 1 MiB. */
  maxReplicaBytes?: number;
  /** The most pods read; more is the finding `truncated`. Default 100. */
  maxReplicas?: number;
  /** How long the leader may go without finishing a cycle before `no_recent_cycle`. Milliseconds; default 10 minutes. */
  staleCycleMs?: number;
  /** How long before a replica's serving certificate expires it is a finding. Milliseconds; default 7 days. */
  certificateWarningMs?: number;
  /** This pod's name, reported as `observer`. Default `process.env.POD_NAME`, else the host name. */
  self?: string;
  /**
   * How long a gathered report answers later requests. Milliseconds; default 1000. Concurrent
   * requests always share the gather in flight.
   */
  minIntervalMs?: number;
}

/** The fleet view: mount it (it answers `GET /debug/fleet`), or gather in code. */
export interface FleetView extends RequestHandler {
  /**
   * The fleet's report: the one gathered less than `minIntervalMs` ago, the one being gathered, or
   * a new one. Rejects when the pods cannot be listed (or the token file cannot be read), when
   * `signal` aborts, and once the view is closed.
   */
  gather(signal?: AbortSignal): Promise<FleetReport>;
  /**
   * Stops the gather in flight (its sockets destroyed) and answers 503 from then on. The promise
   * settles within a second and never rejects. Idempotent: every call answers the same promise.
   * Fits `drain({ close: [fleet] })`.
   */
  close(): Promise<void>;
}

const WHERE = 'createFleetView';
const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
const NAMESPACE_FILE = `${SERVICE_ACCOUNT}/namespace`;
const DEFAULT_TOKEN_FILE = `${SERVICE_ACCOUNT}/token`;
const MAX_TOKEN_BYTES = 65_536;
const MAX_CA_BYTES = 1_048_576;
const DAY_MS = 86_400_000;
const CLOSE_BOUND_MS = 1000;
const FLEET_PATH = '/debug/fleet';

function isPath(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && value.length <= 4096 && !value.includes('\0');
}

/** The options of {@link createFleetView}, declared once: kinds, ranges and defaults. */
const FLEET_VIEW_SPEC = optionSpec(WHERE, {
  /** The pod's own, from the ServiceAccount's namespace file. */
  namespace: option.custom(undefined, (i): string | undefined => {
    if (i.value === undefined) return undefined;
    if (typeof i.value !== 'string') throw new TypeError(`${i.where}: ${i.path} must be a namespace's name, got ${describeValue(i.value)}`);
    const problem = namespaceProblem(i.value);
    if (problem !== undefined) throw new TypeError(`${i.where}: ${i.path} must be a namespace's name: ${problem}`);
    return i.value;
  }),
  /** Required. */
  selector: option.custom(undefined, (i): string => {
    if (i.value === undefined) {
      throw new TypeError(
        `${i.where}: ${i.path} is required: the label selector of the controller's Deployment (its spec.selector, as "app=ctl")`,
      );
    }
    if (typeof i.value !== 'string')
      throw new TypeError(`${i.where}: ${i.path} must be a label selector string ("app=ctl"), got ${describeValue(i.value)}`);
    const problem = labelSelectorProblem(i.value);
    if (problem !== undefined)
      throw new TypeError(`${i.where}: ${i.path} must be ${problem.startsWith('a ') ? problem : `a valid label selector: ${problem}`}`);
    return i.value;
  }),
  /** 8080. */
  port: option.integer(8080, { min: 1, max: 65_535 }),
  /** Plain HTTP. */
  scheme: option.choice('http', ['http', 'https'] as const),
  /** The root. */
  basePath: option.custom('', (i): string => {
    if (i.value === undefined) return i.fallback;
    if (typeof i.value === 'string' && (i.value === '' || /^(\/[A-Za-z0-9\-._~]+)+$/.test(i.value))) return i.value;
    throw new TypeError(`${i.where}: ${i.path} must be '' or a path like "/ctl" (no trailing slash), got ${describeValue(i.value)}`);
  }),
  /** The ServiceAccount's token. */
  tokenFile: option.custom(DEFAULT_TOKEN_FILE as string | null, (i): string | null => {
    if (i.value === undefined) return i.fallback;
    if (i.value === null || isPath(i.value)) return i.value;
    throw new TypeError(
      `${i.where}: ${i.path} must be a file path, or null to read the replicas without a token, got ${describeValue(i.value)}`,
    );
  }),
  /** The ServiceAccount the token names. */
  serviceAccountName: option.custom(undefined, (i): string | null | undefined => {
    if (i.value === undefined || i.value === null) return i.value;
    if (typeof i.value === 'string' && i.value.length <= 253 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(i.value)) return i.value;
    throw new TypeError(`${i.where}: ${i.path} must be a ServiceAccount's name, or null, got ${describeValue(i.value)}`);
  }),
  /** Node's CAs. */
  caFile: option.custom(undefined, (i): string | undefined => {
    if (i.value === undefined || isPath(i.value)) return i.value;
    throw new TypeError(`${i.where}: ${i.path} must be a file path, got ${describeValue(i.value)}`);
  }),
  /** The pod's IP. */
  serverName: option.custom(undefined, (i): string | undefined => {
    if (i.value === undefined || (typeof i.value === 'string' && /^[A-Za-z0-9.-]{1,253}$/.test(i.value))) return i.value;
    throw new TypeError(
      `${i.where}: ${i.path} must be a DNS name (the replicas' Service, as their certificates name it), got ${describeValue(i.value)}`,
    );
  }),
  /** 8 replicas at once. */
  concurrency: option.integer(8, { min: 1, max: 256 }),
  /** 3 s per replica, and for the list. */
  timeoutMs: option.integer(3000, { min: 10, max: 60_000 }),
  /** 1 MiB per replica. */
  maxReplicaBytes: option.integer(1_048_576, { min: 4096, max: 67_108_864, hint: 'bytes' }),
  /** 100 pods. */
  maxReplicas: option.integer(100, { min: 1, max: 10_000 }),
  /** 10 minutes. */
  staleCycleMs: option.integer(FINDING_BOUNDS.staleCycleMs, { min: 1000, max: 30 * DAY_MS }),
  /** 7 days. */
  certificateWarningMs: option.integer(FINDING_BOUNDS.certificateWarningMs, { min: 0, max: 366 * DAY_MS }),
  /** `POD_NAME`, else the host name. */
  self: option.custom(undefined, (i): string | undefined => {
    if (i.value === undefined || (typeof i.value === 'string' && i.value !== '' && i.value.length <= 253)) return i.value;
    throw new TypeError(`${i.where}: ${i.path} must be this pod's name (1 to 253 characters), got ${describeValue(i.value)}`);
  }),
  /** 1 s. */
  minIntervalMs: option.integer(1000, { min: 0, max: 600_000 }),
});

/** What the options of {@link createFleetView} resolve to when omitted (`namespace` and `self` are found at creation). Frozen. */
export const FLEET_VIEW_DEFAULTS = FLEET_VIEW_SPEC.defaults;

const optionsMatch: SameOptions<FleetViewOptions, ReturnType<typeof FLEET_VIEW_SPEC.resolve>> = true;
void optionsMatch;

type Resolved = ReturnType<typeof FLEET_VIEW_SPEC.resolve> & { readonly namespace: string; readonly self: string };

/** The pod's own namespace, from its ServiceAccount's file. */
function ownNamespace(): string {
  let read: FileRead;
  try {
    read = readBoundedFileSync(NAMESPACE_FILE, 256, 'the namespace file', 'its bound');
  } catch (err) {
    throw new TypeError(
      `${WHERE}: namespace was not given and ${NAMESPACE_FILE} cannot be read (${cutText(errorMessage(err), 200)}): give namespace, the controller's own namespace`,
    );
  }
  const namespace = read.bytes.toString('utf8').trim();
  const problem = namespaceProblem(namespace);
  if (problem !== undefined) throw new TypeError(`${WHERE}: ${NAMESPACE_FILE} does not hold a namespace: ${problem}`);
  return namespace;
}

/** The options checked, defaults applied, `namespace` and `self` found. */
function resolveFleetView(api: unknown, options: unknown): Resolved {
  if (typeof (api as { listNamespacedPod?: unknown } | null)?.listNamespacedPod !== 'function') {
    throw new TypeError(`${WHERE}: api must be client-node's CoreV1Api (an object with listNamespacedPod), got ${describeValue(api)}`);
  }
  if (options === undefined) throw new TypeError(`${WHERE}: options are required: at least { selector: "app=<your controller>" }`);
  const resolved = FLEET_VIEW_SPEC.resolve(options);
  const envName = process.env['POD_NAME'];
  return {
    ...resolved,
    namespace: resolved.namespace ?? ownNamespace(),
    self: resolved.self ?? (envName !== undefined && envName !== '' ? envName : hostname()),
  };
}

/**
 * A small file someone else rotates (the ServiceAccount token, the CA bundle): read at creation,
 * read again when its identity changes (or while it may still be settling), bounded and without
 * blocking. A reread that fails keeps the last good content.
 */
class WatchedFile {
  private identity: string;
  private settled: boolean;
  private bytes: Buffer;

  constructor(
    private readonly path: string,
    private readonly what: string,
    private readonly maxBytes: number,
    first: FileRead,
  ) {
    this.identity = first.identity;
    this.settled = first.settled;
    this.bytes = first.bytes;
  }

  /** Reads `path` at creation, or throws naming `option`. */
  static open(path: string, what: string, maxBytes: number, option: string): WatchedFile {
    try {
      return new WatchedFile(path, what, maxBytes, readBoundedFileSync(path, maxBytes, what, `${cutText(String(maxBytes), 20)} bytes`));
    } catch (err) {
      throw new TypeError(`${WHERE}: ${option} ${path} cannot be read: ${cutText(errorMessage(err), 200)}`);
    }
  }

  /** The content last read. */
  get current(): Buffer {
    return this.bytes;
  }

  /** The content now: read again when the file changed (or may still be changing), else the last read. */
  async read(): Promise<Buffer> {
    if (this.settled && (await identityOrNone(this.path)) === this.identity) return this.bytes;
    try {
      const read = await readBoundedFile(this.path, this.maxBytes, this.what, `${this.maxBytes} bytes`);
      this.identity = read.identity;
      this.settled = read.settled;
      this.bytes = read.bytes;
    } catch {
      // Rotation in progress, or a file gone: the last good content is still the best there is.
    }
    return this.bytes;
  }
}

/** The token a token file holds, or a message saying why it holds none. */
function tokenOf(bytes: Buffer, path: string): string {
  const token = bytes.toString('utf8').trim();
  if (!/^[\x21-\x7e]{1,16384}$/.test(token)) throw new Error(`the token file ${path} does not hold a bearer token`);
  return token;
}

/**
 * The ServiceAccount a ServiceAccount token names (its JWT's `sub`,
 * `system:serviceaccount:<namespace>:<name>`), or undefined when it names none. The token is not
 * verified: it is this pod's own, read from its own file, and only its name is wanted.
 */
function serviceAccountOf(token: string): string | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined || payload.length > 16_384) return undefined;
  try {
    const sub: unknown = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown }).sub;
    const match = typeof sub === 'string' ? /^system:serviceaccount:[a-z0-9-]{1,63}:([a-z0-9.-]{1,253})$/.exec(sub) : null;
    return match?.[1];
  } catch {
    return undefined;
  }
}

/** The ServiceAccount pods must run as to be sent `token`: the option, else the token's own; null for any pod. */
function recipientsOf(o: Resolved, token: string | null): string | null {
  if (token === null || o.serviceAccountName === null) return null;
  if (o.serviceAccountName !== undefined) return o.serviceAccountName;
  const named = serviceAccountOf(token);
  if (named === undefined)
    throw new Error(
      `the token in ${o.tokenFile} names no ServiceAccount (system:serviceaccount:<namespace>:<name>): give serviceAccountName, the one the replicas run as`,
    );
  return named;
}

/** Runs `work` on every item, `limit` at a time, in order of the items; stops starting work once `signal` aborts. */
async function mapPool<T, R>(items: readonly T[], limit: number, signal: AbortSignal, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && !signal.aborted) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** The key the subscriber memory keeps a pod under: its uid, or its name when it has none. */
function memoryKey(pod: ReplicaPod): string {
  return pod.uid === null ? `name:${pod.name}` : `uid:${pod.uid}`;
}

/** One gather in flight and the requests waiting for it. */
interface Run {
  readonly promise: Promise<FleetReport>;
  readonly controller: AbortController;
  waiters: number;
}

/** A gather that failed, shared like a report for `minIntervalMs`. */
class GatherFailed extends Error {}

/**
 * The gathers: at most one in flight, shared by every request that comes while it runs and reused
 * for `minIntervalMs` after it ends; stopped when the last request waiting for it leaves.
 */
class Gatherer {
  closed = false;
  /** Settles when the last run has settled: a new run starts only then. */
  ending: Promise<void> = Promise.resolve();
  private run: Run | undefined;
  private recent: { readonly at: number; readonly report?: FleetReport; readonly error?: GatherFailed } | undefined;
  /** The highest event subscriber count per pod (by uid) seen in earlier gathers; pods gone are pruned. */
  private highest = new Map<string, number>();
  private readonly token: WatchedFile | undefined;
  private readonly ca: WatchedFile | undefined;

  constructor(
    private readonly api: PodsApi,
    private readonly o: Resolved,
  ) {
    this.token = o.tokenFile === null ? undefined : WatchedFile.open(o.tokenFile, 'the token file', MAX_TOKEN_BYTES, 'tokenFile');
    if (this.token !== undefined) {
      // Checked at creation too: a file that holds no token is a mistake to name now.
      try {
        recipientsOf(o, tokenOf(this.token.current, o.tokenFile!));
      } catch (err) {
        throw new TypeError(`${WHERE}: tokenFile: ${errorMessage(err)}`);
      }
    }
    this.ca = o.caFile === undefined ? undefined : WatchedFile.open(o.caFile, 'the CA file', MAX_CA_BYTES, 'caFile');
  }

  /** The report to answer now: the recent one, the one in flight, or a new one. */
  get(signal?: AbortSignal): Promise<FleetReport> {
    if (this.closed) return Promise.reject(new HttpError(503, 'the fleet view is closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    const recent = this.recent;
    if (recent !== undefined && performance.now() - recent.at < this.o.minIntervalMs) {
      return recent.report === undefined ? Promise.reject(recent.error) : Promise.resolve(recent.report);
    }
    this.run ??= this.start();
    return this.join(this.run, signal);
  }

  /** Stops the run in flight; the view answers 503 from now on. */
  stop(): Promise<void> {
    this.closed = true;
    if (this.run !== undefined) this.abandon(this.run);
    this.recent = undefined;
    return this.ending;
  }

  private start(): Run {
    const controller = new AbortController();
    const promise = this.ending.then(() => {
      controller.signal.throwIfAborted();
      return this.gatherOnce(controller.signal);
    });
    const run: Run = { promise, controller, waiters: 0 };
    this.ending = promise.then(
      () => undefined,
      () => undefined,
    );
    promise.then(
      (report) => this.settled(run, { at: performance.now(), report }),
      (err: unknown) => {
        if (!controller.signal.aborted) {
          this.settled(run, { at: performance.now(), error: err instanceof GatherFailed ? err : new GatherFailed(errorMessage(err)) });
        } else if (this.run === run) this.run = undefined;
      },
    );
    return run;
  }

  private settled(run: Run, outcome: { readonly at: number; readonly report?: FleetReport; readonly error?: GatherFailed }): void {
    if (this.run !== run) return;
    this.run = undefined;
    if (!this.closed) this.recent = outcome;
  }

  /** Waits for `run` until `signal` aborts; the last waiter to leave stops it. */
  private join(run: Run, signal: AbortSignal | undefined): Promise<FleetReport> {
    run.waiters++;
    return new Promise<FleetReport>((resolve, reject) => {
      let done = false;
      const finish = (): boolean => {
        if (done) return false;
        done = true;
        run.waiters--;
        signal?.removeEventListener('abort', leave);
        return true;
      };
      const leave = (): void => {
        if (!finish()) return;
        if (run.waiters === 0) this.abandon(run);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', leave, { once: true });
      run.promise.then(
        (report) => finish() && resolve(report),
        (err: unknown) => {
          if (!finish()) return;
          reject(this.closed ? new HttpError(503, 'the fleet view is closed') : err);
        },
      );
    });
  }

  private abandon(run: Run): void {
    if (this.run === run) this.run = undefined;
    run.controller.abort(new Error('the fleet gather was abandoned'));
  }

  /** One pod of the list, read (or why not): with the token only when it runs as `recipients`. */
  private readPod(pod: ReplicaPod, settings: ReplicaSettings, recipients: string | null): Promise<ReplicaReport> {
    if (pod.error !== null) return Promise.resolve(unreadableReplica(pod.name, null, pod.phase, pod.error, 0));
    if (pod.address === null) return Promise.resolve(unreadableReplica(pod.name, null, pod.phase, 'the pod has no address yet', 0));
    // The token goes only to pods that already hold it: those that run as its ServiceAccount.
    if (recipients !== null && pod.serviceAccount !== recipients) {
      const runsAs = pod.serviceAccount === null ? 'an unknown ServiceAccount' : `ServiceAccount ${quoteText(pod.serviceAccount, 80)}`;
      const error = `not read: the pod runs as ${runsAs}, not ${quoteText(recipients, 80)}, and is not sent this pod's token`;
      return Promise.resolve(unreadableReplica(pod.name, null, pod.phase, error, 0));
    }
    const o = this.o;
    const protocol = o.scheme === 'https' ? 'https:' : 'http:';
    return readReplicaTarget(
      { pod: pod.name, phase: pod.phase, protocol, host: pod.address, port: o.port, basePath: o.basePath },
      settings,
    );
  }

  /** One gather: the token and CA as they are now, the pods, every replica read, the findings. */
  private async gatherOnce(signal: AbortSignal): Promise<FleetReport> {
    const o = this.o;
    const started = performance.now();
    let token: string | null = null;
    let recipients: string | null = null;
    let ca: Buffer | undefined;
    try {
      token = this.token === undefined ? null : tokenOf(await this.token.read(), o.tokenFile!);
      recipients = recipientsOf(o, token);
      ca = await this.ca?.read();
    } catch (err) {
      throw new GatherFailed(`${WHERE}: ${errorMessage(err)}`);
    }
    signal.throwIfAborted();
    let list;
    try {
      list = await listReplicas(this.api, {
        namespace: o.namespace,
        selector: o.selector,
        maxReplicas: o.maxReplicas,
        timeoutMs: o.timeoutMs,
        signal,
      });
    } catch (err) {
      signal.throwIfAborted();
      throw new GatherFailed(errorMessage(err));
    }
    const settings: ReplicaSettings = {
      token,
      ...(ca === undefined ? {} : { ca }),
      ...(o.serverName === undefined ? {} : { serverName: o.serverName }),
      rejectUnauthorized: true,
      timeoutMs: o.timeoutMs,
      maxReplicaBytes: o.maxReplicaBytes,
      signal,
    };
    const replicas = await mapPool(list.pods, o.concurrency, signal, (pod) => this.readPod(pod, settings, recipients));
    signal.throwIfAborted();
    const nowMs = Date.now();
    const highestByPod = new Map<string, number>();
    for (const pod of list.pods) {
      const highest = this.highest.get(memoryKey(pod));
      if (highest !== undefined) highestByPod.set(pod.name, highest);
    }
    const findings = findingsOf(replicas, {
      nowMs,
      staleCycleMs: o.staleCycleMs,
      certificateWarningMs: o.certificateWarningMs,
      truncated: list.truncated,
      maxReplicas: o.maxReplicas,
      highestSubscribers: highestByPod,
    });
    // The memory keeps the pods of this list only (at most maxReplicas): a pod gone is forgotten.
    const highest = new Map<string, number>();
    list.pods.forEach((pod, index) => {
      const key = memoryKey(pod);
      const seen = Math.max(this.highest.get(key) ?? -1, replicas[index]?.event_subscribers ?? -1);
      if (seen >= 0) highest.set(key, seen);
    });
    this.highest = highest;
    return {
      kind: 'FleetReport',
      version: 1,
      gathered: new Date(nowMs).toISOString(),
      took_ms: Math.round(performance.now() - started),
      observer: o.self,
      source: { namespace: o.namespace, selector: o.selector },
      status: statusOf(findings),
      findings,
      replicas,
    };
  }
}

/**
 * The fleet view: a router a host mounts beside its introspection router (behind the same guard)
 * that answers `GET /debug/fleet` (and HEAD) with a {@link FleetReport}: every replica of the
 * controller side by side (ready and its failing checks, leading, the holder it sees, configuration
 * version, last cycle, uptime, event subscribers, cache freshness, serving certificate expiry, or
 * why it could not be read) and the findings, most severe first.
 *
 * The replicas are the pods of the controller's Deployment, listed by `selector` in `namespace`
 * through `api` (client-node's `CoreV1Api`; the Role needed is `list` on `pods` in the namespace):
 * every Deployment has a selector, a pod tells its phase, readiness and start even while it is not
 * ready, and no headless Service or `discovery.k8s.io` access is needed (see `listReplicas`). Each
 * is read at `scheme://podIP:port/basePath` with {@link readReplica}'s bounds, with this pod's own
 * ServiceAccount token (`tokenFile`, reread when the kubelet rotates it), never the caller's;
 * replicas guarded by `createKubeAuth` let it in through a ClusterRole with
 * `nonResourceURLs: ['/debug/vars', '/debug/vars/*']` bound to this ServiceAccount (the probes pass
 * every guard): examples/kubernetes/fleet-rbac.yaml. The token is sent only to pods that run as
 * the ServiceAccount it names (`serviceAccountName`).
 *
 * Bounds. A gather takes at most `ceil(replicas / concurrency) × timeoutMs` for the replicas plus
 * `timeoutMs` for the list (with the defaults, 100 replicas: 13 × 3 s + 3 s = 42 s; a usual fleet of
 * 3: 6 s); a hung replica costs its `timeoutMs` and no more (its sockets are destroyed). Memory:
 * at most `concurrency × maxReplicaBytes` of answers at once (8 MiB by default), whatever the peers
 * send. Concurrent requests share one gather; requests within `minIntervalMs` of the last one get
 * its report; a gather nobody waits for any more (every client left) is stopped; at most one runs.
 * Each answer is parsed whole (1 MiB of JSON is a few milliseconds), so the host's event loop is
 * never held for long.
 *
 * A listing that fails answers 503 with the API server's reason; a closed view answers 503.
 *
 * @param api - The pods API: `kc.makeApiClient(k8s.CoreV1Api)`.
 * @throws TypeError on a wrong `api` or options (with a "did you mean" for a misspelled one), a
 *   `namespace` neither given nor found, or a `tokenFile` or `caFile` that cannot be read.
 */
export function createFleetView(api: PodsApi, options: FleetViewOptions): FleetView {
  const resolved = resolveFleetView(api, options);
  const gatherer = new Gatherer(api, resolved);

  const serveFleet = handle(async function serveFleet(req: Request, res: Response): Promise<void> {
    const gone = watchClientGone(res);
    let report: FleetReport;
    try {
      report = await gatherer.get(gone.controller.signal);
    } catch (err) {
      // A client that left is owed nothing.
      if (gone.controller.signal.aborted) return;
      if (err instanceof HttpError) throw err;
      throw new HttpError(503, cutText(errorMessage(err), 1024), { 'Retry-After': '1' });
    } finally {
      gone.release();
    }
    await sendJson(req, res, report, { atOnceBudgetMs: 10 });
  });

  const router = Router(EXACT_ROUTING);
  router.route(FLEET_PATH).all(readOnly()).get(serveFleet);
  router.use(answerErrors());

  const close = closeOnce(CLOSE_BOUND_MS, () => gatherer.stop());
  return Object.assign(router as RequestHandler, {
    gather: (signal?: AbortSignal): Promise<FleetReport> => {
      signalOption('FleetView.gather', 'signal', signal);
      return gatherer.get(signal);
    },
    close,
  });
}
