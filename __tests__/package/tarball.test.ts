import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packTarball, REPO, run } from '../helpers/pack';

/*
 * The packed tarball, checked without the registry: the package linters a user may run on it
 * (publint, are-the-types-wrong) find nothing, and its declarations compile for the strictest
 * consumer, from CommonJS and from ESM. pack.test.ts installs it from a registry-built app instead.
 */

const BIN = path.join(REPO, 'node_modules', '.bin');
const TSC = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
const FIXTURES = path.join(__dirname, 'fixtures');

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
