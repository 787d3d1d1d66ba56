/**
 * `controller-introspection doctor <url>`: reads a replica's `/debug/fleet` (or, when it mounts no
 * fleet view, the replica itself) and prints the report for a person, or as JSON for a tool. Exit
 * status 0 when healthy, 1 with findings, 2 when nothing could be read. Everything here takes its
 * input and output as arguments ({@link CliIo}), so that tests run it in-process; `main.ts` is the
 * process around it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FINDING_BOUNDS, findingsOf, statusOf } from '../fleet/findings';
import type { FleetReport, ReplicaReport } from '../fleet/report';
import { readReplica } from '../fleet/replica';
import { MAX_TOKEN_LENGTH, TOKEN_CHARACTERS } from '../http/bearer';
import { didYouMean } from '../options';
import { errorMessage } from '../util/error-message';
import { DOCTOR_USAGE, parseDoctorArguments, type DoctorArguments } from './arguments';
import { httpGet, ReadFailure, type Connection, type HttpAnswer } from './http-get';
import { isUnhealthy, readFleetReport, type ReadReport } from './read-report';
import { renderReport } from './render';
import { terminalJson, terminalText } from './terminal-text';

/** Where the command line writes: `process.stdout` and `process.stderr`, or a test's collectors. */
export interface TextOutput {
  /** Writes text. */
  write(text: string): unknown;
  /** Whether it is a terminal (colour is used only then). */
  readonly isTTY?: boolean;
}

/** The command line's world: its environment and its outputs. */
export interface CliIo {
  /** The environment (`NO_COLOR`, `TERM`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where the report goes. */
  readonly stdout: TextOutput;
  /** Where problems go. */
  readonly stderr: TextOutput;
  /** Now, in milliseconds since the epoch (default `Date.now`). */
  readonly now?: () => number;
}

/** Exit status: healthy. */
export const EXIT_HEALTHY = 0;
/** Exit status: the report has findings above `info`. */
export const EXIT_FINDINGS = 1;
/** Exit status: nothing could be read (or the command line is wrong). */
export const EXIT_UNREAD = 2;

/** The largest fleet report read: 8 MiB. */
export const MAX_REPORT_BYTES = 8 << 20;
/** The largest answer of one replica's endpoint read when there is no fleet view. */
const MAX_REPLICA_BYTES = 1 << 20;
/** The largest CA file read. */
const MAX_CA_BYTES = 1 << 20;
/** A token shorter than this is not searched for in the output (it would match ordinary words). */
const MIN_REDACTED_TOKEN = 8;

const USAGE = `Usage: controller-introspection <command> [flags]

Commands:
  doctor <url>   report on a controller's fleet (see controller-introspection doctor --help)

Flags:
  -h, --help     print this help
      --version  print the version
`;

/** This package's version, from its package.json (beside lib/ and dist/ alike). */
function packageVersion(): string {
  try {
    const manifest: unknown = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8'));
    const version = (manifest as { version?: unknown } | null)?.version;
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * The introspection server's base URL: `localhost:8080` is `http://localhost:8080`, a base path is
 * kept, and a URL already ending in `/debug/fleet` is taken as its server's. A string says why it
 * cannot be used.
 */
export function baseUrlOf(text: string): URL | string {
  const given = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return `not a URL: ${JSON.stringify(text.slice(0, 200))}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `the URL must be http:// or https://, got ${url.protocol}//`;
  if (url.username !== '' || url.password !== '') return 'the URL must not carry credentials: pass --token or --token-file';
  if (url.search !== '' || url.hash !== '') return "the URL must not carry a query or a fragment: give the introspection server's address";
  url.pathname = url.pathname.replace(/\/+$/, '').replace(/\/debug\/fleet$/, '');
  return url;
}

/** `base` with `endpoint` (`debug/fleet`) under its path. */
function under(base: URL, endpoint: string): URL {
  return new URL(`${base.pathname.replace(/\/?$/, '/')}${endpoint}`, base);
}

/**
 * The content of a small file the user names, at most `maxBytes`: a regular file, or a pipe such as
 * `--token-file <(kubectl create token …)`, read until its end or one byte past the bound.
 */
function readSmallFile(file: string, maxBytes: number, what: string): Buffer {
  const fd = fs.openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (let n = -1; n !== 0 && length < buffer.length; length += n) n = fs.readSync(fd, buffer, length, buffer.length - length, null);
    if (length > maxBytes) throw new Error(`${what} ${file} is over ${maxBytes} bytes`);
    return buffer.subarray(0, length);
  } finally {
    fs.closeSync(fd);
  }
}

/** The connection the arguments describe, its files read; a string says what is wrong. */
function connectionOf(args: DoctorArguments): Connection | string {
  let token = args.token;
  let ca: Buffer | undefined;
  try {
    if (args.tokenFile !== undefined)
      token = readSmallFile(args.tokenFile, MAX_TOKEN_LENGTH + 2, 'the token file')
        .toString('utf8')
        .trim();
    if (args.certificateAuthority !== undefined)
      ca = readSmallFile(args.certificateAuthority, MAX_CA_BYTES, 'the certificate authority file');
  } catch (err) {
    return errorMessage(err);
  }
  const from = args.tokenFile === undefined ? '--token' : `the token file ${args.tokenFile}`;
  if (token !== undefined && (token.length > MAX_TOKEN_LENGTH || !TOKEN_CHARACTERS.test(token))) {
    return `${from} is not a bearer token: visible ASCII only, no spaces, at most ${MAX_TOKEN_LENGTH} characters`;
  }
  return { token, ca, servername: args.tlsServerName, rejectUnauthorized: !args.insecureSkipTlsVerify, timeoutMs: args.timeoutMs };
}

/** Output that never shows the token: a peer may echo it back (in an error, a name). */
function redacting(output: TextOutput, token: string | undefined): TextOutput {
  if (token === undefined || token.length < MIN_REDACTED_TOKEN) return output;
  return { isTTY: output.isTTY, write: (text) => output.write(text.replaceAll(token, '[token]')) };
}

/** What a refused or failed answer means, with what to do. */
function statusProblem(answer: HttpAnswer, connection: Connection): string {
  if (answer.status === 401) {
    return connection.token === undefined
      ? '401 Unauthorized: the server wants a bearer token: pass --token-file <file> (or --token)'
      : '401 Unauthorized: the token was refused (expired, or of another cluster?)';
  }
  if (answer.status === 403) {
    return "403 Forbidden: the token's identity may not read it: grant get on nonResourceURLs ['/debug/*'] (see docs/kubernetes.md)";
  }
  const detail = /json/i.test(answer.contentType) ? errorField(answer.body) : undefined;
  return `answered ${answer.status}${detail === undefined ? '' : `: ${detail}`}`;
}

/** The `error` of a JSON error body, or undefined. */
function errorField(body: Buffer): string | undefined {
  try {
    const error = (JSON.parse(body.toString('utf8')) as { error?: unknown } | null)?.error;
    return typeof error === 'string' ? error : undefined;
  } catch {
    return undefined;
  }
}

/** A fleet report from a 200 answer, or why it is not one. */
function reportOf(answer: HttpAnswer): ReadReport | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body.toString('utf8'));
  } catch {
    return `the answer is not JSON (Content-Type: ${answer.contentType || 'none'}): is this a replica's introspection server?`;
  }
  return readFleetReport(parsed);
}

/** The longest a replica's reading may take (readReplica's bound): what `--request-timeout=0` waits. */
const MAX_REPLICA_TIMEOUT_MS = 600_000;

/** The report of a replica that mounts no fleet view: the replica alone, and its findings. */
async function singleReplicaReport(base: URL, connection: Connection, now: () => number): Promise<ReadReport | string> {
  const started = now();
  let replica: ReplicaReport;
  try {
    replica = await readReplica(base.href.replace(/\/$/, ''), {
      token: connection.token ?? null,
      ...(connection.ca !== undefined && { ca: connection.ca }),
      ...(connection.servername !== undefined && { serverName: connection.servername }),
      rejectUnauthorized: connection.rejectUnauthorized,
      timeoutMs: connection.timeoutMs === 0 ? MAX_REPLICA_TIMEOUT_MS : Math.min(connection.timeoutMs, MAX_REPLICA_TIMEOUT_MS),
      maxReplicaBytes: MAX_REPLICA_BYTES,
    });
  } catch (err) {
    // A wrong option (a --tls-server-name that is no DNS name): said at the call, never with the token.
    return errorMessage(err);
  }
  if (!replica.reachable) return replica.error ?? 'the replica could not be read';
  const findings = findingsOf([replica], { nowMs: now(), ...FINDING_BOUNDS });
  const report: FleetReport = {
    kind: 'FleetReport',
    version: 1,
    gathered: new Date(started).toISOString(),
    took_ms: now() - started,
    observer: replica.pod,
    source: null,
    status: statusOf(findings),
    findings,
    replicas: [replica],
  };
  return report;
}

/** Reads the report `base` serves (its fleet view, or itself); a string says why nothing could be read. */
async function gather(base: URL, connection: Connection, now: () => number): Promise<ReadReport | string> {
  const fleetUrl = under(base, 'debug/fleet');
  const shown = terminalText(fleetUrl.href, 400);
  try {
    const answer = await httpGet(fleetUrl, connection, MAX_REPORT_BYTES);
    if (answer.status === 404) {
      const single = await singleReplicaReport(base, connection, now);
      return typeof single === 'string'
        ? `no fleet view at ${shown}, and the replica could not be read: ${terminalText(single, 1024)}`
        : single;
    }
    const problem = answer.status === 200 ? reportOf(answer) : statusProblem(answer, connection);
    return typeof problem === 'string' ? `cannot read ${shown}: ${terminalText(problem, 1024)}` : problem;
  } catch (err) {
    if (!(err instanceof ReadFailure)) throw err;
    return `cannot read ${shown}: ${terminalText(err.message, 1024)}`;
  }
}

/** Whether to colour: a terminal, `NO_COLOR` unset or empty (no-color.org), and not `TERM=dumb`. */
function wantsColour(io: CliIo): boolean {
  return io.stdout.isTTY === true && (io.env['NO_COLOR'] ?? '') === '' && io.env['TERM'] !== 'dumb';
}

/** Runs `controller-introspection doctor` with `args` (what follows `doctor`); resolves to the exit status. */
export async function runDoctor(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseDoctorArguments(args);
  if ('help' in parsed || 'version' in parsed) {
    io.stdout.write('help' in parsed ? DOCTOR_USAGE : `${packageVersion()}\n`);
    return EXIT_HEALTHY;
  }
  const fail = (problem: string, stderr: TextOutput = io.stderr): number => {
    stderr.write(`doctor: ${problem}\n`);
    return EXIT_UNREAD;
  };
  if ('problem' in parsed) return fail(terminalText(parsed.problem, 1024));
  const base = baseUrlOf(parsed.run.url);
  if (typeof base === 'string') return fail(terminalText(base, 1024));
  const connection = connectionOf(parsed.run);
  if (typeof connection === 'string') return fail(terminalText(connection, 1024));
  const stdout = redacting(io.stdout, connection.token);
  const stderr = redacting(io.stderr, connection.token);
  if (connection.token !== undefined && base.protocol === 'http:' && !isLoopback(base.hostname)) {
    stderr.write(`doctor: warning: the bearer token goes to ${terminalText(base.host, 300)} over plain HTTP\n`);
  }
  const now = io.now ?? Date.now;
  const report = await gather(base, connection, now);
  if (typeof report === 'string') return fail(report, stderr);
  stdout.write(
    parsed.run.json
      ? `${terminalJson(report)}\n`
      : renderReport(report, { colour: wantsColour(io), now: now(), from: terminalText(base.href, 400) }),
  );
  return isUnhealthy(report) ? EXIT_FINDINGS : EXIT_HEALTHY;
}

/** Whether a URL's host is this machine (where `kubectl port-forward` listens). */
function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * The command line: `controller-introspection doctor <url> [flags]`, `--help`, `--version`.
 * Resolves to the exit status; never rejects (an unexpected error is reported, status 2).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    if (command === 'doctor') return await runDoctor(rest, io);
    if (command === '--help' || command === '-h' || command === 'help' || command === '--version') {
      io.stdout.write(command === '--version' ? `${packageVersion()}\n` : USAGE);
      return EXIT_HEALTHY;
    }
    const problem =
      command === undefined
        ? 'a command is missing'
        : `unknown command ${JSON.stringify(command.slice(0, 80))}${didYouMean(command, ['doctor'])}`;
    io.stderr.write(`controller-introspection: ${terminalText(problem, 200)}\n\n${USAGE}`);
    return EXIT_UNREAD;
  } catch (err) {
    io.stderr.write(`controller-introspection: unexpected error: ${terminalText(errorMessage(err), 1024)}\n`);
    return EXIT_UNREAD;
  }
}
