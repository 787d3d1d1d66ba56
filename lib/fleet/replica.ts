// Reading one replica's introspection endpoints over node:http(s), everything it answers
// untrusted: bounded in bytes and time, parsed defensively, its text cut and stripped of controls.

import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { describeValue, signalOption } from '../options';
import * as option from '../options/spec';
import { optionSpec, type SameOptions } from '../options/spec';
import { nextTurn } from '../util/cooperative';
import { cutText } from '../util/cut-text';
import { errorMessage } from '../util/error-message';
import type { FailingCheck, ReplicaCycle, ReplicaReport } from './report';

/** Options of {@link readReplica}; omitted ones take {@link READ_REPLICA_DEFAULTS}. */
export interface ReadReplicaOptions {
  /** The name the report gives the replica. Default: the URL's `host:port`. */
  pod?: string;
  /** The pod's phase as the API server reports it, copied into the report. Default null. */
  phase?: string | null;
  /**
   * The bearer token sent on every request (the reader's own ServiceAccount token, never a
   * caller's). Default none.
   */
  token?: string | null;
  /** The CA certificates (PEM) an `https` replica's certificate must chain to. Default: Node's. */
  ca?: string | Buffer;
  /** The name an `https` replica's certificate must hold (and SNI sends). Default: the URL's host. */
  serverName?: string;
  /** Whether an `https` replica's certificate is verified. Default true. */
  rejectUnauthorized?: boolean;
  /** How long reading the whole replica may take. Milliseconds; default 3000. */
  timeoutMs?: number;
  /** The most bytes of every answer of the replica together; beyond, the reading stops. Default 1 MiB. */
  maxReplicaBytes?: number;
  /** Stops the reading (its sockets destroyed); the report then says so. */
  signal?: AbortSignal;
}

const WHERE = 'readReplica';
/** The most characters of any text a peer answered that a report holds. */
export const MAX_PEER_TEXT = 200;
/** The most checks of one replica a report lists. */
const MAX_CHECKS = 32;
/** The most lines of a `/readyz?verbose` answer looked at. */
const MAX_LINES = 256;
/** The most sockets one replica is read over at once. */
const SOCKETS_PER_REPLICA = 2;

const FORBIDDEN = "forbidden: the fleet view's token was refused (see examples/kubernetes/fleet-rbac.yaml)";

/** Whether `value` is a bearer token that fits in a header. */
function isToken(value: unknown): value is string {
  return typeof value === 'string' && /^[\x21-\x7e]{1,16384}$/.test(value);
}

/** The options of {@link readReplica}, declared once: kinds, ranges and defaults. */
const READ_REPLICA_SPEC = optionSpec(WHERE, {
  /** The URL's host. */
  pod: option.custom(undefined, (i): string | undefined => {
    if (i.value === undefined || (typeof i.value === 'string' && i.value !== '' && i.value.length <= 253)) return i.value;
    throw new TypeError(`${i.where}: ${i.path} must be a pod's name (1 to 253 characters), got ${describeValue(i.value)}`);
  }),
  /** No phase. */
  phase: option.custom(undefined, (i): string | null => {
    if (i.value === undefined || i.value === null) return null;
    if (typeof i.value === 'string' && i.value.length <= 32) return i.value;
    throw new TypeError(`${i.where}: ${i.path} must be a pod phase (Running, Pending, …) or null, got ${describeValue(i.value)}`);
  }),
  /** No token. */
  token: option.custom(undefined, (i): string | null => {
    if (i.value === undefined || i.value === null) return null;
    if (isToken(i.value)) return i.value;
    // A token is never echoed: the message may reach a log.
    const got = typeof i.value === 'string' ? `a string of ${i.value.length} characters` : describeValue(i.value);
    throw new TypeError(`${i.where}: ${i.path} must be a bearer token (visible ASCII, no spaces) or null, got ${got}`);
  }),
  /** Node's CAs. */
  ca: option.custom(undefined, (i): string | Buffer | undefined => {
    if (i.value === undefined || typeof i.value === 'string' || Buffer.isBuffer(i.value)) return i.value;
    throw new TypeError(`${i.where}: ${i.path} must be PEM certificates (a string or a Buffer), got ${describeValue(i.value)}`);
  }),
  /** The URL's host. */
  serverName: option.custom(undefined, (i): string | undefined => {
    if (i.value === undefined || (typeof i.value === 'string' && /^[A-Za-z0-9.-]{1,253}$/.test(i.value))) return i.value;
    throw new TypeError(`${i.where}: ${i.path} must be a DNS name, got ${describeValue(i.value)}`);
  }),
  /** Certificates are verified. */
  rejectUnauthorized: option.boolean(true),
  /** 3 s for the whole replica. */
  timeoutMs: option.integer(3000, { min: 1, max: 600_000 }),
  /** 1 MiB for every answer together. */
  maxReplicaBytes: option.integer(1_048_576, { min: 1024, max: 268_435_456, hint: 'bytes' }),
  /** No signal. */
  signal: option.custom(undefined, (i) => signalOption(i.where, i.path, i.value)),
});

/** What the options of {@link readReplica} resolve to when omitted. Frozen. */
export const READ_REPLICA_DEFAULTS = READ_REPLICA_SPEC.defaults;

const optionsMatch: SameOptions<ReadReplicaOptions, ReturnType<typeof READ_REPLICA_SPEC.resolve>> = true;
void optionsMatch;

/** Where one replica is read. */
export interface ReplicaTarget {
  /** The name its report gives it. */
  readonly pod: string;
  /** Its pod's phase, or null. */
  readonly phase: string | null;
  /** `http:` or `https:`. */
  readonly protocol: 'http:' | 'https:';
  /** Its address, without brackets for IPv6. */
  readonly host: string;
  /** Its port. */
  readonly port: number;
  /** Where its introspection router is mounted: `''` or `/path` without a trailing slash. */
  readonly basePath: string;
}

/** How every replica of a gather is read. */
export interface ReplicaSettings {
  /** The bearer token, or null for none. */
  readonly token: string | null;
  /** CA certificates for `https`. */
  readonly ca?: string | Buffer;
  /** The name an `https` replica's certificate must hold. */
  readonly serverName?: string;
  /** Whether `https` certificates are verified. */
  readonly rejectUnauthorized: boolean;
  /** The bound of the whole replica, in milliseconds. */
  readonly timeoutMs: number;
  /** The bound of every answer together, in bytes. */
  readonly maxReplicaBytes: number;
  /** Stops the reading. */
  readonly signal?: AbortSignal;
}

/** The origin a report shows: `http(s)://host:port`, IPv6 in brackets. */
export function originOf(target: ReplicaTarget): string {
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return `${target.protocol}//${host}:${target.port}`;
}

// C0 and C1 controls, and the marks that reorder text on a terminal or a page.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A peer's text as a report may hold it: at most `max` characters (cut with `…`), its control and
 * direction characters replaced with U+FFFD so that it can neither forge a line in a terminal nor
 * reorder what surrounds it. Never markup: the serializer and the console treat it as data.
 */
export function peerText(value: string, max = MAX_PEER_TEXT): string {
  return cutText(cutText(value, max * 2).replace(CONTROLS, '\uFFFD'), max);
}

/** A text field of a peer's answer, or null when it is no string (or an empty one). */
function textOrNull(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? peerText(value) : null;
}

/** A finite number `>= 0`, or null. */
function countOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/** A non-negative safe integer, or null. */
function integerOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** A time a peer answered, as ISO 8601, or null when it is no time. */
function timeOrNull(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 64) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : null;
}

/** A field of a parsed answer (an own property only: a peer's `__proto__` is data, nothing more). */
function member(value: unknown, key: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.prototype.hasOwnProperty.call(value, key) ? (value as Record<string, unknown>)[key] : undefined;
}

/** One answer: its status and its body as text. */
interface Answer {
  readonly status: number;
  readonly body: string;
}

/** A replica's connection errors, as a report says them. */
function transportReason(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'no route to the replica';
    case 'ETIMEDOUT':
      return 'connection timed out';
    default:
      break;
  }
  const message = peerText(errorMessage(err));
  if (typeof code === 'string' && code.startsWith('HPE_')) return `the answer is not HTTP (${message})`;
  if (typeof code === 'string' && /CERT|TLS|SSL|SELF_SIGNED|ALTNAME/.test(code)) return `TLS: ${message}`;
  return typeof code === 'string' ? `${peerText(code, 40)}: ${message}` : message;
}

/**
 * The requests to one replica: one agent (at most two sockets, kept alive across the requests, so
 * one TLS handshake serves them all), one byte count, one deadline. The first failure stops them
 * all: every socket destroyed.
 */
class ReplicaSession {
  private bytes = 0;
  /** Why the replica could not be read, once it could not. */
  failure: string | undefined;
  /** The serving certificate's expiry, once a TLS answer came. */
  certificate: string | null = null;
  private readonly controller = new AbortController();
  private readonly agent: http.Agent;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = (): void => this.fail('abandoned: the gather was stopped');

  constructor(
    private readonly target: ReplicaTarget,
    private readonly settings: ReplicaSettings,
  ) {
    this.agent =
      target.protocol === 'https:'
        ? new https.Agent({
            keepAlive: true,
            maxSockets: SOCKETS_PER_REPLICA,
            rejectUnauthorized: settings.rejectUnauthorized,
            ...(settings.ca === undefined ? {} : { ca: settings.ca }),
            ...(settings.serverName === undefined ? {} : { servername: settings.serverName }),
          })
        : new http.Agent({ keepAlive: true, maxSockets: SOCKETS_PER_REPLICA });
    this.timer = setTimeout(() => this.fail(`no complete answer within ${settings.timeoutMs} ms`), settings.timeoutMs);
    this.timer.unref();
    if (settings.signal?.aborted) this.onAbort();
    else settings.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Marks the replica unreadable (the first reason stays) and destroys every socket. */
  fail(reason: string): void {
    if (this.failure !== undefined) return;
    this.failure = reason;
    this.controller.abort();
    this.agent.destroy();
  }

  /** Stops the timer and the listener, and closes the kept-alive sockets. */
  dispose(): void {
    clearTimeout(this.timer);
    this.settings.signal?.removeEventListener('abort', this.onAbort);
    this.agent.destroy();
  }

  /** The serving certificate's expiry, read from the socket of the first TLS answer. */
  private noteCertificate(socket: Socket | null): void {
    if (this.certificate !== null || socket === null || typeof (socket as Partial<TLSSocket>).getPeerCertificate !== 'function') return;
    try {
      const validTo = (socket as TLSSocket).getPeerCertificate().valid_to;
      const ms = typeof validTo === 'string' ? Date.parse(validTo) : NaN;
      if (Number.isFinite(ms)) this.certificate = new Date(ms).toISOString();
    } catch {
      // No certificate to read: the report says null.
    }
  }

  /** GETs `path` (under the base path); undefined once the replica failed (its `failure` says why). */
  get(path: string): Promise<Answer | undefined> {
    const { target, settings } = this;
    const max = settings.maxReplicaBytes;
    const tooLarge = (): string => `answered more than maxReplicaBytes (${max} bytes); the reading was cut off`;
    return new Promise((resolve) => {
      if (this.failure !== undefined) {
        resolve(undefined);
        return;
      }
      const headers: http.OutgoingHttpHeaders = { accept: 'application/json, text/plain', 'user-agent': 'controller-introspection-fleet' };
      if (settings.token !== null) headers['authorization'] = `Bearer ${settings.token}`;
      const client = target.protocol === 'https:' ? https : http;
      const req = client.request({
        host: target.host,
        port: target.port,
        path: `${target.basePath}${path}`,
        method: 'GET',
        headers,
        agent: this.agent,
        signal: this.controller.signal,
      });
      const failWith = (reason: string): void => {
        this.fail(reason);
        resolve(undefined);
      };
      req.on('error', (err) => failWith(transportReason(err)));
      req.on('response', (res) => {
        this.noteCertificate(res.socket);
        const status = res.statusCode ?? 0;
        if (status === 401 || status === 403) {
          failWith(FORBIDDEN);
          return;
        }
        const length = Number(res.headers['content-length']);
        if (Number.isFinite(length) && this.bytes + length > max) {
          failWith(tooLarge());
          return;
        }
        const chunks: Buffer[] = [];
        let complete = false;
        res.on('data', (chunk: Buffer) => {
          this.bytes += chunk.length;
          if (this.bytes > max) failWith(tooLarge());
          else chunks.push(chunk);
        });
        res.on('end', () => {
          complete = true;
          if (this.failure === undefined) resolve({ status, body: Buffer.concat(chunks).toString('utf8') });
          else resolve(undefined);
        });
        res.on('error', (err) => failWith(transportReason(err)));
        res.on('close', () => {
          if (!complete) failWith('the connection was cut mid-answer');
        });
      });
      req.end();
    });
  }
}

/**
 * Bodies longer than this are parsed on a turn of their own ({@link nextTurn}): a megabyte of JSON
 * takes milliseconds, and eight of them ending in one poll of the event loop would add up.
 */
const LARGE_BODY = 65_536;

/** A body that should be JSON, parsed (a large one on a fresh turn); a failure of the replica when it is not. */
async function parsed(session: ReplicaSession, path: string, answer: Answer, signal: AbortSignal | undefined): Promise<unknown> {
  if (answer.body.length > LARGE_BODY) {
    try {
      await nextTurn(signal === undefined ? {} : { signal });
    } catch {
      session.fail('abandoned: the gather was stopped');
      return undefined;
    }
  }
  try {
    return JSON.parse(answer.body) as unknown;
  } catch {
    session.fail(`GET ${path} answered HTTP ${answer.status} with a body that is not JSON`);
    return undefined;
  }
}

/** The failing checks and the caches' freshness of a `/readyz?verbose` answer. */
function readinessOf(body: string): { failing: FailingCheck[]; cachesFresh: boolean | null } {
  const failing: FailingCheck[] = [];
  let cachesFresh: boolean | null = null;
  const lines = body.split('\n', MAX_LINES);
  for (const line of lines) {
    const match = /^\[([+-])\](.{1,512}?) (?:ok(?: \(.*\))?|failed(?:: (.*))?)$/.exec(line.slice(0, 4096));
    if (match === null) continue;
    const [, sign, name, reason] = match as unknown as [string, string, string, string | undefined];
    if (sign === '-') {
      if (failing.length < MAX_CHECKS)
        failing.push({ name: peerText(name), reason: reason === undefined || reason === '' ? null : peerText(reason) });
      if (name === 'caches-synced') cachesFresh = reason !== undefined && /stale|silent/i.test(reason) ? false : null;
    } else if (name === 'caches-synced') cachesFresh = true;
  }
  return { failing, cachesFresh };
}

/** The failing checks of a `/healthz?verbose` answer. */
function healthOf(body: unknown): FailingCheck[] {
  const checks = member(body, 'checks');
  if (typeof checks !== 'object' || checks === null || Array.isArray(checks)) return [];
  const failing: FailingCheck[] = [];
  for (const name of Object.keys(checks).slice(0, MAX_CHECKS * 4)) {
    const check = member(checks, name);
    if (member(check, 'status') !== 'failed' || failing.length >= MAX_CHECKS) continue;
    failing.push({ name: peerText(name), reason: textOrNull(member(check, 'error')) ?? textOrNull(member(check, 'detail')) });
  }
  return failing;
}

/** The last cycle of a `pipeline` variable, or null when it ran none. */
function cycleOf(pipeline: unknown): ReplicaCycle | null {
  const status = member(pipeline, 'status');
  if (typeof status !== 'string' || status === 'none' || status === '') return null;
  const failedPhase = member(pipeline, 'failed_phase');
  return {
    outcome: peerText(status, 32),
    started: timeOrNull(member(pipeline, 'started')),
    ended: timeOrNull(member(pipeline, 'ended')),
    took_ms: countOrNull(member(pipeline, 'duration_ms')),
    correlation_id: textOrNull(member(pipeline, 'correlation_id')),
    failed_phase: textOrNull(failedPhase),
  };
}

/** The cycle counts of a `pipeline` variable, or null. */
function cyclesOf(pipeline: unknown): ReplicaReport['cycles'] {
  const cycles = member(pipeline, 'cycles');
  const total = integerOrNull(member(cycles, 'total'));
  const succeeded = integerOrNull(member(cycles, 'succeeded'));
  const failed = integerOrNull(member(cycles, 'failed'));
  return total === null || succeeded === null || failed === null ? null : { total, succeeded, failed };
}

/** Whether a `leader_election` variable says this replica leads (`is_leader`, or the elector's `leading`). */
function leadingOf(election: unknown): boolean | null {
  const isLeader = member(election, 'is_leader');
  if (typeof isLeader === 'boolean') return isLeader;
  const leading = member(election, 'leading');
  return typeof leading === 'boolean' ? leading : null;
}

/** A report of a replica that could not be read. */
export function unreadableReplica(pod: string, address: string | null, phase: string | null, error: string, readMs: number): ReplicaReport {
  return {
    pod,
    address,
    phase,
    reachable: false,
    error: peerText(error, 400),
    ready: null,
    failing_checks: [],
    leading: null,
    holder: null,
    config_version: null,
    last_cycle: null,
    cycles: null,
    uptime_seconds: null,
    event_subscribers: null,
    caches_fresh: null,
    certificate_not_after: null,
    read_ms: Math.max(0, Math.round(readMs)),
  };
}

const PATHS = {
  readyz: '/readyz?verbose',
  healthz: '/healthz?verbose',
  leader: '/debug/vars/leader_election',
  config: `/debug/vars/config?field=${encodeURIComponent('{.version}')}`,
  pipeline: '/debug/vars/pipeline',
  uptime: '/debug/vars/uptime',
  events: '/debug/vars/event_counts',
} as const;

/** A variable's value: parsed on a 200, null when it is not published (404) or has no value (503, …). */
async function variable(
  session: ReplicaSession,
  path: string,
  answer: Answer | undefined,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  if (answer === undefined || answer.status !== 200) return null;
  return parsed(session, path, answer, signal);
}

/**
 * Reads `target` with `settings` (checked by the caller): what {@link readReplica} and the fleet
 * view run. Never rejects: whatever goes wrong is the report's `error`.
 */
export async function readReplicaTarget(target: ReplicaTarget, settings: ReplicaSettings): Promise<ReplicaReport> {
  const started = performance.now();
  const address = originOf(target);
  const session = new ReplicaSession(target, settings);
  try {
    const [readyz, healthz, leader, config, pipeline, uptime, events] = await Promise.all([
      session.get(PATHS.readyz),
      session.get(PATHS.healthz),
      session.get(PATHS.leader),
      session.get(PATHS.config),
      session.get(PATHS.pipeline),
      session.get(PATHS.uptime),
      session.get(PATHS.events),
    ]);
    const fail = (): ReplicaReport =>
      unreadableReplica(target.pod, address, target.phase, session.failure ?? 'unknown failure', performance.now() - started);
    if (session.failure !== undefined || readyz === undefined || healthz === undefined) return fail();
    if (readyz.status === 404 && healthz.status === 404) {
      session.fail(`no introspection server here: /readyz and /healthz answer 404 (check the port and basePath)`);
      return fail();
    }
    const readiness = readyz.status === 200 || readyz.status === 503 ? readinessOf(readyz.body) : { failing: [], cachesFresh: null };
    const { signal } = settings;
    const health = healthz.status === 200 || healthz.status === 503 ? healthOf(await parsed(session, PATHS.healthz, healthz, signal)) : [];
    const election = await variable(session, PATHS.leader, leader, signal);
    const version = await variable(session, PATHS.config, config, signal);
    const cycle = await variable(session, PATHS.pipeline, pipeline, signal);
    const up = await variable(session, PATHS.uptime, uptime, signal);
    const counts = await variable(session, PATHS.events, events, signal);
    if (session.failure !== undefined) return fail();
    const names = new Set(readiness.failing.map((c) => c.name));
    const failing = [...readiness.failing, ...health.filter((c) => !names.has(c.name))].slice(0, MAX_CHECKS);
    return {
      pod: target.pod,
      address,
      phase: target.phase,
      reachable: true,
      error: null,
      ready: readyz.status === 200 ? true : readyz.status === 503 ? false : null,
      failing_checks: failing,
      leading: leadingOf(election),
      holder: textOrNull(member(election, 'holder')),
      config_version: textOrNull(version),
      last_cycle: cycleOf(cycle),
      cycles: cyclesOf(cycle),
      uptime_seconds: countOrNull(member(up, 'uptime_seconds')),
      event_subscribers: integerOrNull(member(counts, 'subscribers')),
      caches_fresh: readiness.cachesFresh,
      certificate_not_after: session.certificate,
      read_ms: Math.max(0, Math.round(performance.now() - started)),
    };
  } finally {
    session.dispose();
  }
}

/** `baseUrl` as a target, or a TypeError naming what is wrong with it. */
function targetOf(baseUrl: unknown, pod: string | undefined, phase: string | null): ReplicaTarget {
  let url: URL | undefined;
  try {
    url = typeof baseUrl === 'string' ? new URL(baseUrl) : undefined;
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new TypeError(`${WHERE}: baseUrl must be an http:// or https:// URL (http://10.0.0.7:8080), got ${describeValue(baseUrl)}`);
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    throw new TypeError(`${WHERE}: baseUrl must have no credentials, query or fragment (give token for the credentials)`);
  }
  return {
    pod: pod ?? url.host,
    phase,
    protocol: url.protocol,
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
    basePath: url.pathname.replace(/\/+$/, ''),
  };
}

/**
 * Reads one replica's introspection endpoints and reports on it: `GET /readyz?verbose` (ready, the
 * failing checks, the caches' freshness from `caches-synced`), `/healthz?verbose` (failing health
 * checks), and the variables `leader_election` (`is_leader` or `leading`, `holder`), `config`
 * (`?field={.version}`), `pipeline` (the last cycle and the counts), `uptime` and `event_counts`
 * (the subscribers). A variable answered 404 is not published: its fields are null, not an error;
 * one without a value (503) is null too.
 *
 * The replica is untrusted: every answer together is bounded by `maxReplicaBytes` (a larger one is
 * cut off where it crosses the bound, nothing more buffered, and the replica reported as such), the
 * whole reading by `timeoutMs` (its sockets destroyed then, or when `signal` aborts), text cut to
 * 200 characters (`MAX_PEER_TEXT`) and stripped of control characters, numbers checked finite,
 * fields of another type read as null. It is unreachable (with the reason) when refused, timed out,
 * cut off, over the bound, answering 401 or 403 (`forbidden: the fleet view's token was refused`),
 * answering a JSON endpoint with something else, or serving neither `/readyz` nor `/healthz`.
 * Over `https`, `certificate_not_after` is the expiry of the certificate the replica served.
 *
 * @param baseUrl - Where the replica's introspection router is mounted: `http://10.0.0.7:8080` or
 *   `https://10.0.0.7:8443/ctl`.
 * @returns The report; never rejects.
 * @throws TypeError at the call on a wrong `baseUrl` or wrong options (with a "did you mean" for a
 *   misspelled one).
 */
export function readReplica(baseUrl: string, options?: ReadReplicaOptions): Promise<ReplicaReport> {
  const o = READ_REPLICA_SPEC.resolve(options);
  const target = targetOf(baseUrl, o.pod, o.phase);
  return readReplicaTarget(target, {
    token: o.token,
    ...(o.ca === undefined ? {} : { ca: o.ca }),
    ...(o.serverName === undefined ? {} : { serverName: o.serverName }),
    rejectUnauthorized: o.rejectUnauthorized,
    timeoutMs: o.timeoutMs,
    maxReplicaBytes: o.maxReplicaBytes,
    ...(o.signal === undefined ? {} : { signal: o.signal }),
  });
}
