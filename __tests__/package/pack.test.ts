import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { npm, packTarball, run } from '../helpers/pack';

/**
 * The published artifact, tested as a user meets it: `npm pack` the repo, install the tarball
 * into a fresh app outside the repo, and use it there from CommonJS, ESM and TypeScript types.
 */
/** Uses the installed package from CommonJS and ESM and prints what it saw; run inside the fresh app. */
const USE_IT = path.join(__dirname, 'fixtures', 'use-package.js');
/** Type-checked inside the fresh app against the published declarations, from CommonJS and ESM. */
const TYPED = ['typed.ts', 'typed.mts'];

describe('the npm package', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-pack-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  let tarball: string;

  beforeAll(async () => {
    const packed = await packTarball(dir);
    const files = packed.files;
    expect(files).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'CHANGELOG.md',
        'package.json',
        'dist/index.js',
        'dist/index.mjs',
        'dist/index.d.ts',
        'dist/index.d.mts',
        // The alert rules docs/metrics.md tells users to copy from node_modules.
        'examples/monitoring/rules.yml',
      ]),
    );
    expect(
      files.filter((f) => !/^(dist\/|examples\/monitoring\/rules\.yml$|LICENSE$|README\.md$|CHANGELOG\.md$|package\.json$)/.test(f)),
    ).toEqual([]);
    expect(files.some((f) => f.endsWith('.map') || f.includes('__tests__') || f.startsWith('lib/'))).toBe(false);
    tarball = packed.tarball;
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

      for (const fixture of TYPED) fs.copyFileSync(path.join(__dirname, 'fixtures', fixture), path.join(app, fixture));
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
          ...TYPED,
        ],
        { cwd: app, timeout: 120_000 },
      );
      // npm install and tsc from the registry take most of a minute on a busy 2-core machine.
    },
    300_000,
  );

  it('serves the introspection router in a fresh app without prom-client, and the metrics exports say what to install', async () => {
    const app = path.join(dir, 'app-no-prom-client');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', version: '1.0.0', private: true }));
    await npm(['install', '--no-save', '--omit=optional', tarball, 'express@5'], app);
    fs.copyFileSync(path.join(__dirname, 'fixtures', 'introspection-only.js'), path.join(app, 'use.js'));
    const { stdout } = await run(process.execPath, ['use.js'], { cwd: app, timeout: 30_000 });
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as {
      promClientFound: boolean;
      statuses: Record<string, number>;
      metricsError: string;
    };
    expect(result.promClientFound).toBe(false);
    expect(Object.values(result.statuses)).toEqual(Object.values(result.statuses).map(() => 200));
    expect(Object.keys(result.statuses)).toHaveLength(8);
    expect(result.metricsError).toBe(
      'createControllerMetrics needs a metrics client, a peer dependency of controller-introspection: npm install prom-client (or @prometheus-io/client on Node 22+)',
    );
  }, 300_000);

  it('makes its metrics with @prometheus-io/client in a fresh app that has only that client, and serves them as text and protobuf', async () => {
    const app = path.join(dir, 'app-official-client');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', version: '1.0.0', private: true }));
    // The client declares Node 22+; npm installs it on 20 with a warning, and it runs there.
    await npm(['install', '--no-save', '--omit=optional', tarball, 'express@5', '@prometheus-io/client@0.16'], app);
    fs.copyFileSync(path.join(__dirname, 'fixtures', 'official-client.js'), path.join(app, 'use.js'));
    const { stdout } = await run(process.execPath, ['use.js'], { cwd: app, timeout: 30_000 });
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({
      promClientFound: false,
      notOfTheClient: [],
      text: { status: 200, type: 'text/plain; version=0.0.4; charset=utf-8; escaping=underscores', hasReconciliations: true },
      protobuf: {
        status: 200,
        type: 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited; escaping=underscores',
        bytes: expect.any(Number),
        names: true,
      },
    });
  }, 300_000);
});
