/**
 * Drives the real Prometheus tools (Debian packages `prometheus`, which ships `prometheus` and
 * `promtool`) for the peer tests: finding the binaries, linting an exposition with promtool, and
 * running a throwaway Prometheus server on 127.0.0.1 that scrapes one target.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '../helpers/eventually';
import { request } from '../helpers/http';
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
}

/**
 * Starts Prometheus on 127.0.0.1 with a temporary config and storage, scraping the target(s) every
 * second as job `controller` (all targets share the first one's scheme and path), and waits until
 * it is ready, plus the jobs of `options.scrapeConfigs`. Nothing listens on or talks to anything
 * but 127.0.0.1.
 */
export async function startPrometheus(
  prometheus: string,
  target: URL | readonly URL[],
  options: PrometheusOptions = {},
): Promise<PrometheusServer> {
  const targets = Array.isArray(target) ? target : [target as URL];
  const first: URL | undefined = targets[0];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ctl-prometheus-'));
  const port = await freePort();
  const ruleFiles = options.ruleFiles ?? [];
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  scrape_timeout: 1s',
    '  evaluation_interval: 1s',
    ...(ruleFiles.length > 0 ? ['rule_files:', ...ruleFiles.map((file) => `  - ${JSON.stringify(file)}`)] : []),
    'scrape_configs:',
    ...(first === undefined
      ? []
      : [
          '  - job_name: controller',
          `    scheme: ${first.protocol.replace(':', '')}`,
          `    metrics_path: ${JSON.stringify(first.pathname)}`,
          '    static_configs:',
          `      - targets: [${targets.map((t) => JSON.stringify(t.host)).join(', ')}]`,
        ]),
    ...(options.scrapeConfigs === undefined ? [] : [options.scrapeConfigs.replace(/\n$/, '')]),
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'prometheus.yml'), config);
  const child = spawn(
    prometheus,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      ...(options.features ?? []).map((feature) => `--enable-feature=${feature}`),
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
