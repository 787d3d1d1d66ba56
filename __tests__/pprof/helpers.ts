import express from 'express';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import ts from 'typescript';
import { Profile } from 'pprof-format';
import { createPprofRouter, type PprofOptions, type PprofRouter } from '../../lib/pprof';
import { listen } from '../helpers/http';
import { loadAddon } from '../../lib/pprof/cpu/addon';

/** A real listening server with the pprof router mounted at /debug/pprof. */
export interface PprofServer {
  router: PprofRouter;
  server: http.Server;
  base: string;
  close(): Promise<void>;
}

export async function startPprofServer(options?: PprofOptions): Promise<PprofServer> {
  const router = createPprofRouter(undefined, options);
  const app = express();
  app.use('/debug/pprof', router);
  const served = await listen(app);
  return {
    router,
    server: served.server,
    base: `${served.origin}/debug/pprof`,
    async close(): Promise<void> {
      await router.close();
      await served.close();
    },
  };
}

/** Decodes a served pprof body the way `go tool pprof` does: gunzip, then protobuf. */
export function decodePprof(body: Buffer): Profile {
  return Profile.decode(gunzipSync(body));
}

export function stringAt(profile: Profile, index: number | bigint): string {
  return profile.stringTable.strings[Number(index)];
}

export function sampleTypes(profile: Profile): string[] {
  return profile.sampleType.map((t) => `${stringAt(profile, t.type)}/${stringAt(profile, t.unit)}`);
}

export function functionNames(profile: Profile): string[] {
  return profile.function.map((f) => stringAt(profile, f.name));
}

/** Sum of value `index` over samples whose stack contains a function named `name`. */
export function totalFor(profile: Profile, name: string, index: number): number {
  const functionIds = new Set(profile.function.filter((f) => stringAt(profile, f.name) === name).map((f) => Number(f.id)));
  const locationIds = new Set(
    profile.location.filter((l) => l.line.some((line) => functionIds.has(Number(line.functionId)))).map((l) => Number(l.id)),
  );
  let total = 0;
  for (const sample of profile.sample) {
    // pprof values are int64; pprof-format decodes varints unsigned, so a delta's negative values
    // arrive as 2^64 - x.
    if (sample.locationId.some((id) => locationIds.has(Number(id)))) total += Number(BigInt.asIntN(64, BigInt(sample.value[index]!)));
  }
  return total;
}

/** The repository root. */
export const ROOT = join(__dirname, '..', '..');

/**
 * Transpiles the modules the pprof router needs (no type check: tsc covers that) into
 * `outDir/lib`, for child processes that must load it without ts-jest.
 */
export function transpileLib(outDir: string): void {
  // All of lib but the console page (browser code): whatever the pprof router imports, now or later.
  const folders = [''];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    const source = join(ROOT, 'lib', folder);
    for (const entry of readdirSync(source, { withFileTypes: true })) {
      const target = join(outDir, 'lib', folder, entry.name.replace(/\.ts$/, '.js'));
      mkdirSync(dirname(target), { recursive: true });
      if (entry.isDirectory()) {
        if (entry.name !== 'page') folders.push(join(folder, entry.name));
      }
      // Plain JavaScript in lib (the source-map worker) is shipped as it is.
      else if (entry.name.endsWith('.js')) writeFileSync(target, readFileSync(join(source, entry.name)));
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        const { outputText } = ts.transpileModule(readFileSync(join(source, entry.name), 'utf8'), {
          compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
          fileName: entry.name,
        });
        writeFileSync(target, outputText);
      }
    }
  }
}

/**
 * Whether the native addon loads under the Node running the tests. Where it does not (Node 26,
 * where v8-profiler-next does not compile, or an install without build tools), the addon's tests
 * are skipped, visibly, and every other pprof test runs on the inspector; `__tests__/runtime/`
 * fails a CI line that does not get the backend it was meant to.
 */
export const ADDON_LOADS = loadAddon().ok;

/** `describe` for tests of the native addon backend. */
export const describeWithAddon = ADDON_LOADS ? describe : describe.skip;

/** The CPU profiler backends this Node can run. */
export const PROFILER_BACKENDS: ReadonlyArray<'v8-profiler-next' | 'inspector'> = ADDON_LOADS
  ? ['v8-profiler-next', 'inspector']
  : ['inspector'];

/** A pprof router in a child process of its own (see {@link startPprofHost}). */
export interface PprofHost {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>/debug/pprof`. */
  base: string;
  /** SIGTERM, then waits for the exit; returns the exit code, or the signal's name. */
  stop(): Promise<number | string | null>;
}

/**
 * Runs `node ...execArgv script ...args` with the lib transpiled into `work` (see
 * {@link transpileLib}) named by `PPROF_INDEX`, and waits until the script prints `PORT <n>`: the
 * fixtures' protocol for a router that serves until SIGTERM.
 */
export async function startPprofHost(
  work: string,
  script: string,
  args: readonly string[] = [],
  execArgv: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<PprofHost> {
  const child = spawn(process.execPath, [...execArgv, script, ...args], {
    env: { ...process.env, ...env, NODE_PATH: join(ROOT, 'node_modules'), PPROF_INDEX: join(work, 'lib', 'pprof', 'index.js') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      const match = /PORT (\d+)\n/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code, signal) => reject(new Error(`the host exited (${signal ?? code}) before listening: ${out}`)));
  });
  return {
    child,
    base: `http://127.0.0.1:${port}/debug/pprof`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      return child.exitCode ?? child.signalCode;
    },
  };
}
