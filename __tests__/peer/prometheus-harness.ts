/**
 * Drives the real Prometheus tools for the peer tests: finding the binaries, linting an exposition
 * with promtool, and running a throwaway Prometheus server on 127.0.0.1 that scrapes one target.
 * Two versions are peers: Prometheus 2.42 (Debian's package `prometheus`, on PATH) and Prometheus 3
 * (built from its Go module by `scripts/build-peers.sh prometheus`); {@link prometheusPeers} gives
 * both, each with what is missing of it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { peerBinary } from '../helpers/peer-binaries';
import { eventually } from '../helpers/eventually';
import { request } from '../helpers/http';
import { describeWithPeer, inCI } from '../helpers/peers';
import { freePort } from '../helpers/ports';

/** Absolute path of `name` on PATH, or `undefined`. */
export function findBinary(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** The Prometheus versions the peer tests run against. */
export type PrometheusLabel = 'Prometheus 2.42 (Debian)' | 'Prometheus 3.16 (module)';

/** One Prometheus version: its binaries when they are there, else why not. */
export interface PrometheusPeer {
  readonly label: PrometheusLabel;
  /** The major version, for what differs between them (configuration, ingestion). */
  readonly major: 2 | 3;
  /** Absolute path of `prometheus`, when present. */
  readonly prometheus?: string;
  /** Absolute path of `promtool`, when present. */
  readonly promtool?: string;
  /** What is missing and how to get it, or undefined when both binaries are there. */
  readonly missing?: string;
  /**
   * Why this CI line leaves the version's tests to others: the lines that leave the Kubernetes
   * tests elsewhere (`CI_CONTROL_PLANE=elsewhere`, see `.ci/run`) also leave those of Prometheus 3,
   * which `scripts/build-peers.sh` builds beside the control plane.
   */
  readonly elsewhere?: string;
}

/** Prometheus 2.42, Debian's package: `prometheus` and `promtool` on PATH. */
function debianPeer(): PrometheusPeer {
  const prometheus = findBinary('prometheus');
  const promtool = findBinary('promtool');
  const absent = [prometheus === undefined ? 'prometheus' : '', promtool === undefined ? 'promtool' : ''].filter(Boolean);
  return {
    label: 'Prometheus 2.42 (Debian)',
    major: 2,
    prometheus,
    promtool,
    missing:
      absent.length === 0
        ? undefined
        : `Prometheus 2.42: ${absent.join(' and ')} not on PATH (apt-get update && apt-get install -y --no-install-recommends prometheus)`,
  };
}

/** Prometheus 3, built from the module `scripts/peers/prometheus/go.mod` pins (v0.316.0 is 3.16). */
function modulePeer(): PrometheusPeer {
  const prometheus = peerBinary('prometheus');
  const promtool = peerBinary('promtool');
  const absent = [prometheus, promtool].filter((bin) => !existsSync(bin));
  return {
    label: 'Prometheus 3.16 (module)',
    major: 3,
    elsewhere:
      process.env.CI_CONTROL_PLANE === 'elsewhere'
        ? 'this CI line leaves the tests of the peers built from Go modules to the lines that build them (CI_CONTROL_PLANE=elsewhere)'
        : undefined,
    prometheus: existsSync(prometheus) ? prometheus : undefined,
    promtool: existsSync(promtool) ? promtool : undefined,
    missing:
      absent.length === 0
        ? undefined
        : `Prometheus 3.16: ${absent.join(' and ')} not built; build them with \`bash scripts/build-peers.sh prometheus\` (needs Go 1.26 and the Go module proxy; see CONTRIBUTING.md)`,
  };
}

let peers: readonly PrometheusPeer[] | undefined;

/**
 * Both Prometheus versions, 2.42 first, for tests that run against each:
 * `for (const peer of prometheusPeers()) describeWithPrometheus(peer)(`... (${peer.label})`, ...)`.
 */
export function prometheusPeers(): readonly PrometheusPeer[] {
  return (peers ??= [debianPeer(), modulePeer()]);
}

/** The peer of one major version. */
export function prometheusPeer(major: 2 | 3): PrometheusPeer {
  return prometheusPeers().find((peer) => peer.major === major)!;
}

/**
 * `describe` when the peer's binaries are there (and `alsoMissing`, what else the tests need, is
 * empty), else a skip that says what to install or build (in CI, where `CI` is set, a missing peer
 * fails instead). A peer this CI line leaves elsewhere is skipped with that said.
 */
export function describeWithPrometheus(peer: PrometheusPeer, ...alsoMissing: Array<string | undefined>): jest.Describe {
  if (peer.elsewhere !== undefined) {
    console.warn(`skipping ${peer.label}: ${peer.elsewhere}`);
    return describe.skip;
  }
  const missing = [peer.missing, ...alsoMissing].filter((reason) => reason !== undefined);
  return describeWithPeer(missing.length > 0 ? missing.join('; ') : undefined);
}

/** Whether the peer's tests run here: it is there, or in CI (where its absence fails them), unless this line leaves it elsewhere. */
export function prometheusRuns(peer: PrometheusPeer): boolean {
  return peer.elsewhere === undefined && (peer.missing === undefined || inCI);
}

/** What promtool said. */
export interface PromtoolResult {
  exitCode: number | null;
  /** Non-empty lines of stdout and stderr together (promtool writes lint problems to stderr). */
  lines: string[];
}

/** Pipes `exposition` into `promtool check metrics`. */
export function promtoolCheckMetrics(promtool: string, exposition: string): Promise<PromtoolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(promtool, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (exitCode) => {
      const lines = output
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line !== '');
      resolve({ exitCode, lines });
    });
    child.stdin.end(exposition);
  });
}

/** A running Prometheus server. */
export interface PrometheusServer {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly pid: number;
  /** The last part of its log, for failure messages. */
  log(): string;
  /** GETs a Prometheus HTTP API path and returns `data` of a `status: success` answer. */
  api<T>(pathAndQuery: string): Promise<T>;
  /** Stops it by PID (SIGTERM, SIGKILL after 10 s), waits for exit and removes its storage. Idempotent. */
  stop(): Promise<void>;
}

/** What else a test Prometheus loads besides its scrape targets. */
export interface PrometheusOptions {
  /** Rule files (recording and alerting rules), evaluated every second. */
  ruleFiles?: readonly string[];
  /** Feature flags to turn on (`--enable-feature=...`), for example `exemplar-storage`. */
  features?: readonly string[];
  /**
   * Jobs of the test's own, raw YAML appended under `scrape_configs:` as list items indented by
   * two spaces (`  - job_name: ...`). With an empty target list, they are the only jobs.
   */
  scrapeConfigs?: string;
  /**
   * Scrape native histograms. Prometheus 3 (3.8+): `scrape_native_histograms: true` in `global:`,
   * which also puts `PrometheusProto` first in every job's default `scrape_protocols`. Prometheus
   * 2.42: the feature flag `native-histograms`.
   */
  nativeHistograms?: boolean;
  /**
   * `scrape_protocols` of job `controller` (Prometheus 3 only; 2.42 has none and always asks
   * OpenMetrics first): `PrometheusText0.0.4`, `PrometheusText1.0.0`, `OpenMetricsText0.0.1`,
   * `OpenMetricsText1.0.0`, `PrometheusProto`, in the order of preference.
   */
  scrapeProtocols?: readonly string[];
  /**
   * `metric_name_escaping_scheme` of job `controller`, the `escaping=` Prometheus 3 asks for
   * (`allow-utf-8` by default). Prometheus 3 only.
   */
  nameEscapingScheme?: 'allow-utf-8' | 'underscores' | 'dots' | 'values';
  /** `metric_name_validation_scheme` of job `controller` (`utf8` by default). Prometheus 3 only. */
  nameValidationScheme?: 'utf8' | 'legacy';
}

/** The major version of a `prometheus` binary: 3 for the module build, else Debian's 2.42. */
function majorOf(prometheus: string | PrometheusPeer): 2 | 3 {
  if (typeof prometheus !== 'string') return prometheus.major;
  return prometheus === peerBinary('prometheus') ? 3 : 2;
}

/** The binary to run, whether given as a path or as a peer. */
function binaryOf(prometheus: string | PrometheusPeer): string {
  if (typeof prometheus === 'string') return prometheus;
  if (prometheus.prometheus === undefined) throw new Error(prometheus.missing ?? `${prometheus.label}: no prometheus binary`);
  return prometheus.prometheus;
}

/**
 * Starts Prometheus (a path, read as 2.42 unless it is the module build, or a peer of
 * {@link prometheusPeers}) on 127.0.0.1 with a temporary config and storage, scraping the
 * target(s) every second as job `controller` (all targets share the first one's scheme and path),
 * and waits until it is ready, plus the jobs of `options.scrapeConfigs`. `fallback_scrape_protocol`
 * is never set: Prometheus 3 then fails a scrape whose `Content-Type` is missing or unusable.
 * Nothing listens on or talks to anything but 127.0.0.1.
 */
export async function startPrometheus(
  prometheus: string | PrometheusPeer,
  target: URL | readonly URL[],
  options: PrometheusOptions = {},
): Promise<PrometheusServer> {
  const major = majorOf(prometheus);
  const binary = binaryOf(prometheus);
  if (major === 2) {
    const only3 = (['scrapeProtocols', 'nameEscapingScheme', 'nameValidationScheme'] as const).filter((key) => options[key] !== undefined);
    if (only3.length > 0) throw new Error(`Prometheus 2.42 has no ${only3.join(', ')} (Prometheus 3 options)`);
  }
  const targets = Array.isArray(target) ? target : [target as URL];
  const first: URL | undefined = targets[0];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ctl-prometheus-'));
  const port = await freePort();
  const ruleFiles = options.ruleFiles ?? [];
  const features = [...(options.features ?? []), ...(options.nativeHistograms === true && major === 2 ? ['native-histograms'] : [])];
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    '  evaluation_interval: 1s',
    ...(options.nativeHistograms === true && major === 3 ? ['  scrape_native_histograms: true'] : []),
    ...(ruleFiles.length > 0 ? ['rule_files:', ...ruleFiles.map((file) => `  - ${JSON.stringify(file)}`)] : []),
    'scrape_configs:',
    ...(first === undefined
      ? []
      : [
          '  - job_name: controller',
          `    scheme: ${first.protocol.replace(':', '')}`,
          `    metrics_path: ${JSON.stringify(first.pathname)}`,
          ...(options.scrapeProtocols === undefined ? [] : [`    scrape_protocols: [${options.scrapeProtocols.join(', ')}]`]),
          ...(options.nameEscapingScheme === undefined ? [] : [`    metric_name_escaping_scheme: ${options.nameEscapingScheme}`]),
          ...(options.nameValidationScheme === undefined ? [] : [`    metric_name_validation_scheme: ${options.nameValidationScheme}`]),
          '    static_configs:',
          `      - targets: [${targets.map((t) => JSON.stringify(t.host)).join(', ')}]`,
        ]),
    ...(options.scrapeConfigs === undefined ? [] : [options.scrapeConfigs.replace(/\n$/, '')]),
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'prometheus.yml'), config);
  const child = spawn(
    binary,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      ...features.map((feature) => `--enable-feature=${feature}`),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  const keep = (chunk: string) => {
    log = (log + chunk).slice(-20_000);
  };
  child.stdout!.setEncoding('utf8').on('data', keep);
  child.stderr!.setEncoding('utf8').on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const spawnFailure = new Promise<never>((_resolve, reject) => child.once('error', reject));
  const origin = `http://127.0.0.1:${port}`;

  let stopped: Promise<void> | undefined;
  const server: PrometheusServer = {
    origin,
    pid: child.pid ?? -1,
    log: () => log,
    async api<T>(pathAndQuery: string): Promise<T> {
      const res = await request(`${origin}${pathAndQuery}`);
      const body = res.json<{ status: string; data: T; error?: string }>();
      if (body.status !== 'success') throw new Error(`${pathAndQuery}: ${body.error ?? res.status}`);
      return body.data;
    },
    stop: () => (stopped ??= stopChild(child, exited).finally(() => rmSync(dir, { recursive: true, force: true }))),
  };

  try {
    await Promise.race([
      spawnFailure,
      exited.then(() => {
        throw new Error('prometheus exited during startup');
      }),
      eventually(
        async () => {
          const { status } = await request(`${origin}/-/ready`);
          return status >= 200 && status < 300;
        },
        { timeoutMs: 30_000, intervalMs: 200, what: 'prometheus /-/ready' },
      ),
    ]);
  } catch (err) {
    await server.stop();
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`${reason}\n--- prometheus log ---\n${log}`);
  }
  return server;
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const pid = child.pid;
  process.kill(pid, 'SIGTERM');
  const killer = setTimeout(() => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, 10_000);
  try {
    await exited;
  } finally {
    clearTimeout(killer);
  }
}
