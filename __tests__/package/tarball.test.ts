import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { packTarball, REPO, run } from '../helpers/pack';

/*
 * The packed tarball, checked without the registry: the package linters a user may run on it
 * (publint, are-the-types-wrong) find nothing, and its declarations compile for the strictest
 * consumer, from CommonJS and from ESM, naming no optional peer but Express. pack.test.ts and
 * strict-hosts.test.ts install it into registry-built apps instead.
 */

const BIN = path.join(REPO, 'node_modules', '.bin');
const TSC = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
const FIXTURES = path.join(__dirname, 'fixtures');

/** The declaration files under `dir`. */
function declarationFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.d\.[cm]?ts$/.test(file))
    .map((file) => path.join(dir, file));
}

/** The package a bare module specifier names (`@scope/name/sub` is `@scope/name`), or undefined for a relative one or Node's own. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Runs a program to its end and returns its exit code and output, whatever the code. */
async function outcome(file: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    // Colour off: CI=true turns it on in these tools (picocolors), which would wrap the verdicts in escapes.
    const env = { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' };
    const { stdout, stderr } = await run(file, args, { cwd, env, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(err) };
  }
}

describe('the packed tarball', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-tarball-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  let tarball: string;

  beforeAll(async () => {
    ({ tarball } = await packTarball(dir));
  }, 60_000);

  it('passes publint --strict with no error, warning or suggestion', async () => {
    const { code, stdout, stderr } = await outcome(path.join(BIN, 'publint'), ['run', '--strict', tarball], dir);
    // What follows its progress lines ("Running…", "Unpacking tarball...", "Linting...") is the verdict.
    const verdict = stdout.slice(stdout.indexOf('Linting...') + 'Linting...'.length).trim();
    expect({ code, verdict, stderr }).toEqual({ code: 0, verdict: 'All good!', stderr: '' });
  });

  it('has right types in every resolution mode (are-the-types-wrong, offline)', async () => {
    const { stdout, stderr } = await outcome(path.join(BIN, 'attw'), ['--format', 'json', tarball], dir);
    const report = JSON.parse(stdout || stderr) as { analysis: { types: unknown; problems: unknown[] } };
    expect(report.analysis.types).toEqual(expect.objectContaining({ kind: 'included' }));
    expect(report.analysis.problems).toEqual([]);
  });

  it('declares nothing from a package it does not depend on but Express: no metrics client, no client-node', async () => {
    // What a declaration imports (`import`, `export … from`, `import()` types, `/// <reference types>`)
    // a host must have installed to type-check it with skipLibCheck off. The optional peers are
    // described by shape (lib/metrics/shapes.ts, KubeAuthApi, LeaseApi); Express is the routers' type.
    const unpacked = path.join(dir, 'unpacked');
    fs.mkdirSync(unpacked);
    await run('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1']);
    const manifest = JSON.parse(fs.readFileSync(path.join(unpacked, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    const allowed = new Set(['express', ...Object.keys(manifest.dependencies ?? {})]);
    const files = declarationFiles(path.join(unpacked, 'dist'));
    const named = files.flatMap((file) => {
      const { importedFiles, typeReferenceDirectives } = ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true);
      return [...importedFiles, ...typeReferenceDirectives]
        .map((reference) => packageOf(reference.fileName))
        .filter((name) => name !== undefined && !allowed.has(name))
        .map((name) => `${path.relative(unpacked, file)}: ${name}`);
    });
    expect(files.length).toBeGreaterThan(50);
    expect(named).toEqual([]);
  });

  it('compiles for a strict consumer without esModuleInterop or skipLibCheck, from CommonJS and ESM', async () => {
    // An app as npm lays it out: the tarball unpacked in node_modules, beside the repository's own
    // dependencies (express, @types/express 5, @types/node 20, prom-client), linked, not installed.
    const app = path.join(dir, 'app');
    const modules = path.join(app, 'node_modules');
    fs.mkdirSync(path.join(modules, 'controller-introspection'), { recursive: true });
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'strict-app', version: '1.0.0', private: true }));
    for (const name of fs.readdirSync(path.join(REPO, 'node_modules'))) {
      if (!name.startsWith('.')) fs.symlinkSync(path.join(REPO, 'node_modules', name), path.join(modules, name));
    }
    await run('tar', ['-xzf', tarball, '-C', path.join(modules, 'controller-introspection'), '--strip-components=1']);
    for (const fixture of ['typed.ts', 'typed.mts']) fs.copyFileSync(path.join(FIXTURES, fixture), path.join(app, fixture));
    // nodenext reads typed.ts as CommonJS (the `require` types) and typed.mts as ESM (the `import`
    // types). Library checking stays on: an error inside our declarations (such as TS1259, a
    // default import of express) shows only to a host that checks its libraries.
    const flags = ['--strict', '--target', 'es2022', '--lib', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext'];
    const result = await outcome(
      process.execPath,
      [TSC, '--noEmit', ...flags, '--esModuleInterop', 'false', '--types', 'node', 'typed.ts', 'typed.mts'],
      app,
    );
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
  }, 120_000);
});
