/**
 * The console page's bundle, built by the real build script into a temporary folder: it must be
 * browser code only. The page shares lib/pprof's converters with the server, and those once
 * needed stand-ins for five Node built-ins (zlib, url, util, perf_hooks, setImmediate); now the
 * shared code is platform-neutral and nothing of Node may reach the bundle.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** The parts of esbuild's metafile this test reads. */
interface Metafile {
  inputs: Record<string, { imports: Array<{ path: string; external?: boolean }> }>;
  outputs: Record<string, { imports: Array<{ path: string; kind: string; external?: boolean }> }>;
}

describe('the console page bundle', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-bundle-'));
  const outDir = path.join(dir, 'out');
  let meta: Metafile;
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  beforeAll(() => {
    const metafile = path.join(dir, 'meta.json');
    execFileSync(process.execPath, ['scripts/build-console.js', '--outdir', outDir, '--metafile', metafile], {
      cwd: ROOT,
      stdio: 'pipe',
      timeout: 60_000,
    });
    meta = JSON.parse(fs.readFileSync(metafile, 'utf8')) as Metafile;
  });

  it('is built from the page, the platform-neutral lib modules it shares and npm packages only', () => {
    const inputs = Object.keys(meta.inputs);
    expect(inputs).toContain('console-page/main.ts');
    // Every view of the page's navigation is in it, the fleet page included.
    for (const view of ['overview', 'vars', 'events', 'profiles', 'fleet']) expect(inputs).toContain(`console-page/views/${view}.ts`);
    expect(inputs).toContain('lib/pprof/pprof-builder.ts');
    expect(inputs.filter((input) => !/^(console-page|lib|node_modules)\//.test(input))).toEqual([]);
    expect(inputs.filter((input) => /shim/i.test(input))).toEqual([]);
    // The Node-only side of pprof (gzip) and anything importing Node stay on the server.
    expect(inputs).not.toContain('lib/pprof/pprof-encoder.ts');
  });

  it('imports no Node built-in, nor anything else from outside the bundle', () => {
    const imported = Object.values(meta.inputs).flatMap((input) => input.imports.map((i) => i.path));
    expect(imported.filter((specifier) => specifier.startsWith('node:'))).toEqual([]);
    const external = Object.values(meta.outputs).flatMap((output) => output.imports.filter((i) => i.external).map((i) => i.path));
    expect(external).toEqual([]);
    for (const name of fs.readdirSync(outDir).filter((f) => f.endsWith('.js'))) {
      expect(fs.readFileSync(path.join(outDir, name), 'utf8')).not.toMatch(
        /(?:from|import)\s*\(?\s*["'](?:node:|zlib|url|util|perf_hooks)["':]/,
      );
    }
  });
});
