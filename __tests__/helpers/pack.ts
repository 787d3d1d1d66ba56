import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { requireFreshDist } from './dist';

/** The repository root: what `npm pack` packs. */
export const REPO = path.resolve(__dirname, '..', '..');
/** `execFile` as a promise; rejects with the child's output on a non-zero exit. */
export const run = promisify(execFile);

/** Runs npm in `cwd` without audit or funding notices and returns its standard output. */
export async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', args, {
    cwd,
    timeout: 240_000,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
  });
  return stdout;
}

/** The tarball `npm pack` wrote, and the paths of the files in it, sorted. */
export interface PackedTarball {
  readonly tarball: string;
  readonly files: string[];
}

/**
 * Packs the repository into `dir` as `npm publish` would, from the dist/ that `npm test` has just
 * built (failing clearly when it is stale). --ignore-scripts skips `prepack` (a rebuild), which would
 * delete dist/ under the other test files running in parallel.
 */
export async function packTarball(dir: string): Promise<PackedTarball> {
  requireFreshDist();
  const packed = JSON.parse(await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], REPO)) as Array<{
    filename: string;
    files: { path: string }[];
  }>;
  return { tarball: path.join(dir, packed[0]!.filename), files: packed[0]!.files.map((f) => f.path).sort() };
}

/**
 * A fresh app `name` in `dir` (its own package.json, outside the repository) with `packages`
 * installed from the registry, optional dependencies left out (the profiler addon builds for a
 * minute); returns its folder.
 */
export async function freshApp(dir: string, name: string, packages: string[]): Promise<string> {
  const app = path.join(dir, name);
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', version: '1.0.0', private: true }));
  await npm(['install', '--no-save', '--omit=optional', ...packages], app);
  return app;
}
