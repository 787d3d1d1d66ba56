import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { requireFreshDist } from '../helpers/dist';

/**
 * The published artifact, tested as a user meets it: `npm pack` the repo, install the tarball
 * into a fresh app outside the repo, and use it there from CommonJS, ESM and TypeScript types.
 */
const run = promisify(execFile);
const REPO = path.resolve(__dirname, '..', '..');

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', args, {
    cwd,
    timeout: 240_000,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
  });
  return stdout;
}

/** Uses the installed package from CommonJS and ESM and prints what it saw; run inside the fresh app. */
const USE_IT = path.join(__dirname, 'fixtures', 'use-package.js');
/** Type-checked inside the fresh app against the published declarations. */
const TYPED = path.join(__dirname, 'fixtures', 'typed.ts');

describe('the npm package', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-pack-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  let tarball: string;

  beforeAll(async () => {
    // `npm test` has just built dist/. --ignore-scripts skips `prepack` (a rebuild), which would delete
    // dist/ under the other test files running in parallel.
    requireFreshDist();
    const packed = JSON.parse(await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', dir], REPO)) as Array<{
      filename: string;
      files: { path: string }[];
    }>;
    const files = packed[0]!.files.map((f) => f.path).sort();
    expect(files).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'CHANGELOG.md',
        'package.json',
        'dist/index.js',
        'dist/index.mjs',
        'dist/index.d.ts',
      ]),
    );
    expect(files.filter((f) => !/^(dist\/|LICENSE$|README\.md$|CHANGELOG\.md$|package\.json$)/.test(f))).toEqual([]);
    expect(files.some((f) => f.endsWith('.map') || f.includes('__tests__') || f.startsWith('lib/'))).toBe(false);
    tarball = path.join(dir, packed[0]!.filename);
  }, 120_000);

  it.each([
    ['4', 'express@4.21.2', '@types/express@4'],
    ['5', 'express@5', '@types/express@5'],
  ])(
    'works when installed into a fresh Express %s app',
    async (major, express, expressTypes) => {
      const app = path.join(dir, `app-express${major}`);
      fs.mkdirSync(app);
      fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', version: '1.0.0', private: true }));
      await npm(['install', '--no-save', tarball, express, 'prom-client@15', 'typescript@5.9.3', '@types/node@20', expressTypes], app);

      fs.copyFileSync(USE_IT, path.join(app, 'use.js'));
      const { stdout } = await run(process.execPath, ['use.js'], { cwd: app, timeout: 30_000 });
      const result = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, unknown>;
      expect(result).toEqual({
        express: major,
        version: '9',
        reconciliations: true,
        backend: expect.stringMatching(/^(v8-profiler-next|inspector)$/),
        reason: expect.any(String),
        sameModule: true,
        consoleServed: true,
      });
      console.log(`installed package profiler backend: ${String(result['backend'])} (${String(result['reason'])})`);

      fs.copyFileSync(TYPED, path.join(app, 'typed.ts'));
      await run(
        process.execPath,
        [
          path.join(app, 'node_modules/typescript/bin/tsc'),
          '--noEmit',
          '--strict',
          '--module',
          'nodenext',
          '--moduleResolution',
          'nodenext',
          '--skipLibCheck',
          'typed.ts',
        ],
        { cwd: app, timeout: 120_000 },
      );
      // npm install and tsc from the registry take most of a minute on a busy 2-core machine.
    },
    300_000,
  );
});
