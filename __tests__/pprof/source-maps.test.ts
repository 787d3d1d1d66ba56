/**
 * Profiles of a TypeScript host name its `.ts` functions, files and lines: the fixture host
 * (`__tests__/fixtures/ts-host/host.ts`) is compiled by tsc with separate and inline source maps and
 * bundled and minified by esbuild, run as its own process, profiled over HTTP, and read by
 * `go tool pprof`.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { SourceMapper } from '../../lib/pprof/source-maps/mapper';
import { requireFreshDist } from '../helpers/dist';
import { request } from '../helpers/http';
import { describeWithPeer } from '../helpers/peers';

const run = promisify(execFile);
const REPO = path.resolve(__dirname, '..', '..');
const FIXTURE = path.join(REPO, '__tests__', 'fixtures', 'ts-host', 'host.ts');
// Inside the package, so that the host's require('controller-introspection') finds dist/ by name.
const OUT = path.join(REPO, 'test-artifacts', `ts-host-${process.pid}`);
const GO = process.env.GO_BIN ?? 'go';
let haveGo = true;
try {
  execFileSync(GO, ['version'], { stdio: 'ignore' });
} catch {
  haveGo = false;
}
const describeGo = describeWithPeer(haveGo ? undefined : `${GO} not found (apt-get install -y golang-go)`);

jest.setTimeout(120_000);

function tsc(outDir: string, ...flags: string[]): string {
  execFileSync(process.execPath, [
    path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'),
    '--target',
    'ES2022',
    '--module',
    'commonjs',
    '--types',
    'node',
    '--skipLibCheck',
    '--outDir',
    outDir,
    ...flags,
    FIXTURE,
  ]);
  return path.join(outDir, 'host.js');
}

interface Host {
  url: string;
  child: ChildProcess;
}

async function startHost(script: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<Host> {
  const child = spawn(process.execPath, [...nodeFlags, script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (c: Buffer) => resolve((JSON.parse(c.toString().split('\n')[0]!) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`host exited with ${code}: ${stderr}`)));
  });
  return { url: `http://127.0.0.1:${port}/debug/pprof`, child };
}

async function stopHost(host: Host): Promise<void> {
  if (host.child.exitCode !== null) return;
  const exited = new Promise((resolve) => host.child.once('exit', resolve));
  host.child.kill('SIGTERM');
  await exited;
}

async function save(url: string, file: string): Promise<string> {
  // A profile takes its seconds, then mapping: more than a plain request's bound.
  const res = await request(url, { timeoutMs: 30_000 });
  expect(res.status).toBe(200);
  fs.writeFileSync(file, res.body);
  return file;
}

async function pprof(...args: string[]): Promise<string> {
  return (await run(GO, ['tool', 'pprof', ...args], { env: { ...process.env, HOME: process.env.HOME ?? '/tmp' } })).stdout;
}

const variants: Record<string, string> = {};

beforeAll(async () => {
  fs.mkdirSync(OUT, { recursive: true });
  variants.separate = tsc(path.join(OUT, 'separate'), '--sourceMap');
  variants.inline = tsc(path.join(OUT, 'inline'), '--inlineSourceMap');
  variants.plain = tsc(path.join(OUT, 'plain'));
  const bundle = path.join(OUT, 'bundle', 'host.js');
  await build({
    entryPoints: [FIXTURE],
    bundle: true,
    minify: true,
    sourcemap: true,
    platform: 'node',
    external: ['express', 'controller-introspection'],
    outfile: bundle,
    logLevel: 'silent',
  });
  variants.bundle = bundle;
  const broken = path.join(OUT, 'broken');
  fs.mkdirSync(broken, { recursive: true });
  fs.copyFileSync(variants.separate, path.join(broken, 'host.js'));
  fs.writeFileSync(path.join(broken, 'host.js.map'), '{"version":3,"sources":["host.ts"],"mappings":');
  variants.broken = path.join(broken, 'host.js');
});

afterAll(() => fs.rmSync(OUT, { recursive: true, force: true }));

describe('SourceMapper', () => {
  it('maps a compiled position to the TypeScript source, off the main thread, and leaves others alone', async () => {
    const mapper = new SourceMapper();
    try {
      const js = fs.readFileSync(variants.separate!, 'utf8').split('\n');
      const line = js.findIndex((l) => l.includes('function renderLoadBalancerConfig('));
      const frame = {
        functionName: 'renderLoadBalancerConfig',
        scriptId: '9',
        url: `file://${variants.separate}`,
        lineNumber: line,
        columnNumber: js[line]!.indexOf('renderLoadBalancerConfig'),
      };
      const internal = { functionName: 'listOnTimeout', scriptId: '1', url: 'node:internal/timers', lineNumber: 3, columnNumber: 4 };
      const map = await mapper.mapFrames([frame, internal]);
      expect(map(frame)).toMatchObject({ functionName: 'renderLoadBalancerConfig', url: `file://${FIXTURE}`, lineNumber: 29 });
      expect(map(internal)).toBe(internal);
      expect(mapper.status()).toEqual({ mappedScripts: 1, failures: [] });
    } finally {
      await mapper.close();
    }
  });

  it('maps the same function of two builds (a .map file, an inline map) to one frame, so pprof merges them', async () => {
    const mapper = new SourceMapper();
    try {
      const frameIn = (
        script: string,
      ): { functionName: string; scriptId: string; url: string; lineNumber: number; columnNumber: number } => {
        const js = fs.readFileSync(script, 'utf8').split('\n');
        const line = js.findIndex((l) => l.includes('renderServerLine(backend) {'));
        return {
          functionName: 'renderServerLine',
          scriptId: script === variants.separate ? '11' : '12',
          url: `file://${script}`,
          lineNumber: line,
          columnNumber: js[line]!.indexOf('renderServerLine'),
        };
      };
      const a = frameIn(variants.separate!);
      const b = frameIn(variants.inline!);
      const map = await mapper.mapFrames([a, b]);
      expect(map(a)).toEqual(map(b));
      expect(map(a)).toMatchObject({ url: `file://${FIXTURE}`, lineNumber: 22 });
    } finally {
      await mapper.close();
    }
  });

  it('reports a broken map once and leaves that script unmapped', async () => {
    const mapper = new SourceMapper();
    try {
      const frame = { functionName: 'x', scriptId: '9', url: `file://${variants.broken}`, lineNumber: 3, columnNumber: 0 };
      for (let i = 0; i < 3; i++) expect((await mapper.mapFrames([frame]))(frame)).toBe(frame);
      const { failures } = mapper.status();
      expect(failures).toHaveLength(1);
      expect(failures[0]!.script).toBe(`file://${variants.broken}`);
      expect(failures[0]!.reason.length).toBeGreaterThan(0);
    } finally {
      await mapper.close();
    }
  });
});

describeGo('profiles of a TypeScript host, read by go tool pprof', () => {
  // The hosts load the package by name: dist/.
  beforeAll(requireFreshDist);

  it.each([
    ['tsc, separate .map files', 'separate', { SOURCE_MAPS: 'on' }, []],
    ['tsc, inline map', 'inline', { SOURCE_MAPS: 'on' }, []],
    ['esbuild bundle, minified; on by default under --enable-source-maps', 'bundle', { SOURCE_MAPS: 'default' }, ['--enable-source-maps']],
  ])('%s: CPU and heap name the .ts functions, files and lines', async (_title, variant, env, flags) => {
    const host = await startHost(variants[variant as string]!, env as Record<string, string>, flags as string[]);
    try {
      const cpu = await save(`${host.url}/profile?seconds=2`, path.join(OUT, `${variant}-cpu.pb.gz`));
      const top = await pprof('-top', '-lines', cpu);
      expect(top).toMatch(/renderServerLine \S*__tests__\/fixtures\/ts-host\/host\.ts:23\b/);
      // Minified to one letter in the bundle; the map's names give it back.
      expect(await pprof('-top', '-lines', '-cum', cpu)).toMatch(/renderLoadBalancerConfig \S*host\.ts:30\b/);
      expect(top).not.toMatch(/host\.js/);
      const list = await pprof('-list', 'renderServerLine', cpu);
      expect(list).toContain('private renderServerLine(backend: Backend): string {');
      // The profiler's own start-up (V8 charges it to a misnamed native frame) is not the host's.
      expect(await pprof('-traces', cpu)).not.toMatch(/setProfilesCleanupLimit|startProfiling/);

      const heap = await save(`${host.url}/heap`, path.join(OUT, `${variant}-heap.pb.gz`));
      const heapTop = await pprof('-top', '-lines', '-sample_index=inuse_space', heap);
      expect(heapTop).toMatch(/cacheRenderedTemplates \S*host\.ts:37\b/);
      expect(heapTop).not.toMatch(/v8-profiler-next|addon-warm/);

      const devtools = (await request(`${host.url}/profile?seconds=1&format=cpuprofile`, { timeoutMs: 30_000 })).json<{
        nodes: Array<{ callFrame: { functionName: string; url: string } }>;
      }>();
      const hostFrames = devtools.nodes.filter((n) => /ts-host|host\.js/.test(n.callFrame.url)).map((n) => n.callFrame);
      expect(hostFrames.length).toBeGreaterThan(0);
      expect(hostFrames.every((f) => f.url.endsWith('/host.ts'))).toBe(true);
      expect(hostFrames.some((f) => f.functionName === 'renderServerLine')).toBe(true);

      const index = (await request(`${host.url}/?format=json`)).json<{
        sourceMaps: { enabled: boolean; mappedScripts: number; failures: unknown[] };
      }>();
      // The host, and any dependency that ships maps (pprof-format does).
      expect(index.sourceMaps).toEqual({ enabled: true, mappedScripts: expect.any(Number), failures: [] });
      expect(index.sourceMaps.mappedScripts).toBeGreaterThanOrEqual(1);
    } finally {
      await stopHost(host);
    }
  });

  it('leaves frames as they run without source maps, and says so in the index', async () => {
    const host = await startHost(variants.plain!, { SOURCE_MAPS: 'default' });
    try {
      const cpu = await save(`${host.url}/profile?seconds=1`, path.join(OUT, 'plain-cpu.pb.gz'));
      expect(await pprof('-top', '-lines', cpu)).toMatch(/renderServerLine \S*plain\/host\.js:\d+/);
      const index = (await request(`${host.url}/?format=json`)).json<{ sourceMaps: unknown }>();
      expect(index.sourceMaps).toEqual({ enabled: false });
    } finally {
      await stopHost(host);
    }
  });

  it('serves the profile unmapped when a map is broken, and names the script once in the index', async () => {
    const host = await startHost(variants.broken!, { SOURCE_MAPS: 'on' });
    try {
      for (let i = 0; i < 2; i++) {
        const cpu = await save(`${host.url}/profile?seconds=1`, path.join(OUT, `broken-cpu-${i}.pb.gz`));
        expect(await pprof('-top', '-lines', cpu)).toMatch(/renderServerLine \S*broken\/host\.js:\d+/);
      }
      const index = (await request(`${host.url}/?format=json`)).json<{
        sourceMaps: { enabled: boolean; failures: Array<{ script: string; reason: string }> };
      }>();
      expect(index.sourceMaps.enabled).toBe(true);
      expect(index.sourceMaps.failures).toHaveLength(1);
      expect(index.sourceMaps.failures[0]!.script).toMatch(/broken\/host\.js$/);
    } finally {
      await stopHost(host);
    }
  });
});
