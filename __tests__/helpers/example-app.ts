import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireFreshDist } from './dist';
import { freePorts } from './ports';

const REPO = path.resolve(__dirname, '..', '..');
/** The example controller as `npm run build` compiles it (from examples/controller/main.ts). */
export const EXAMPLE_MAIN = path.join(REPO, 'examples', 'dist', 'controller', 'main.js');

/** Settings a test may change in the example app's config file. */
export interface ExampleOptions {
  debugPort?: number | 'free';
  metricsPort?: number | 'free';
  healthPort?: number | 'free';
  leaseFile?: string;
  /** `controller.debugPathPrefix`: mount the introspection router under this path. */
  debugPathPrefix?: string;
  leaderElection?: boolean;
  replicaId?: string;
  simulation?: Record<string, number | boolean>;
  probes?: Record<string, number>;
  profiling?: Record<string, number>;
  env?: Record<string, string>;
  nodeBinary?: string;
}

/** A running example controller, started as its own process, as users run it. */
export interface ExampleApp {
  child: ChildProcess;
  debugUrl?: string;
  healthUrl?: string;
  metricsUrl?: string;
  logs: Record<string, unknown>[];
  /** Waits until a log line matches. */
  waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** SIGTERM, then waits for the process to exit on its own; returns its exit code (SIGKILL after a timeout). */
  stop(timeoutMs?: number): Promise<number | null>;
}

/** The ports asked for, with every `'free'` one (the default) a distinct free port. */
async function resolvePorts(wanted: readonly (number | 'free' | undefined)[]): Promise<number[]> {
  const free = await freePorts(wanted.filter((v) => v === undefined || v === 'free').length);
  return wanted.map((v) => (v === undefined || v === 'free' ? free.shift()! : v));
}

/** Starts the compiled example controller (`examples/dist/controller/main.js`) bound to 127.0.0.1 on free ports and waits until it listens. */
export async function startExample(options: ExampleOptions = {}): Promise<ExampleApp> {
  if (!fs.existsSync(EXAMPLE_MAIN)) throw new Error(`${EXAMPLE_MAIN} is missing: run \`npm run build\` first (\`npm test\` does)`);
  // The example loads the package by name, that is dist/: never run it against stale code.
  requireFreshDist();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-example-'));
  const [debugPort, metricsPort, healthPort] = (await resolvePorts([options.debugPort, options.metricsPort, options.healthPort])) as [
    number,
    number,
    number,
  ];
  const config = {
    controller: {
      debugPort,
      healthPort,
      ...(options.debugPathPrefix ? { debugPathPrefix: options.debugPathPrefix } : {}),
      config: { controller: { metrics_port: metricsPort } },
      leaderElection: {
        enabled: options.leaderElection ?? true,
        leaseFile: options.leaseFile ?? path.join(dir, 'lease.json'),
        leaseDurationMs: 1500,
        renewIntervalMs: 250,
      },
      profiling: options.profiling ?? {},
      // Tests get caches that sync at once and a short drain, unless they ask otherwise.
      probes: { drainDelayMs: 100, ...options.probes },
      simulation: { reconcileIntervalMs: 100, lbPods: 2, cpuBurnMs: 0, cacheSyncMs: 0, ...options.simulation },
    },
  };
  const configFile = path.join(dir, 'config.json');
  fs.writeFileSync(configFile, JSON.stringify(config));
  const child = spawn(options.nodeBinary ?? process.execPath, [EXAMPLE_MAIN, '--config', configFile], {
    cwd: REPO,
    env: {
      ...process.env,
      BIND_ADDRESS: '127.0.0.1',
      REPLICA_ID: options.replicaId ?? `replica-${process.pid}-${debugPort}`,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let stderr = '';
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ raw: line });
      }
      for (const w of waiters) w();
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  function waitForLog(match: (line: Record<string, unknown>) => boolean, timeoutMs = 15000): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = logs.find(match);
        if (found) {
          waiters.delete(onLine);
          clearTimeout(timer);
          resolve(found);
          return true;
        }
        return false;
      };
      const onLine = (): void => void check();
      const timer = setTimeout(() => {
        waiters.delete(onLine);
        reject(
          new Error(
            `example app: no matching log line within ${timeoutMs} ms; logs: ${JSON.stringify(logs.slice(-10))} stderr: ${stderr.slice(-2000)}`,
          ),
        );
      }, timeoutMs);
      if (!check()) waiters.add(onLine);
      void exited.then(() => {
        if (waiters.has(onLine)) {
          waiters.delete(onLine);
          clearTimeout(timer);
          reject(new Error(`example app exited early; stderr: ${stderr.slice(-2000)} logs: ${JSON.stringify(logs.slice(-10))}`));
        }
      });
    });
  }

  const app: ExampleApp = {
    child,
    logs,
    waitForLog,
    async stop(timeoutMs = 10000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      fs.rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
  const listening = (surface: string) => (l: Record<string, unknown>) => l['msg'] === 'listening' && l['surface'] === surface;
  try {
    if (debugPort !== 0) {
      await waitForLog(listening('debug'));
      app.debugUrl = `http://127.0.0.1:${debugPort}`;
    } else {
      await waitForLog(listening('health'));
      app.healthUrl = `http://127.0.0.1:${healthPort}`;
    }
    if (metricsPort !== 0) {
      await waitForLog(listening('metrics'));
      app.metricsUrl = `http://127.0.0.1:${metricsPort}`;
    }
  } catch (err) {
    await app.stop();
    throw err;
  }
  return app;
}
