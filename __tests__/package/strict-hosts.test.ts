import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshApp, packTarball, run } from '../helpers/pack';

/*
 * The published declarations in the strictest TypeScript hosts (strict, library checking on: what
 * `skipLibCheck` hides shows here), each a fresh app outside the repository installed from the
 * registry: one with `@prometheus-io/client` only, one with prom-client 15 only, one with neither
 * (introspection only). The declarations name no metrics client (lib/metrics/shapes.ts describes
 * what the package reads on one), so each compiles without an error; the hosts without prom-client
 * used to get "Cannot find module 'prom-client'" from seven declaration files (issue 40). Every file
 * a host's program reads must lie inside its app: a `node_modules` above it would lend the host a
 * client it does not have.
 */

/** The host's tsconfig: strict, library checking on, Node's module system. */
const COMPILER_OPTIONS = {
  strict: true,
  skipLibCheck: false,
  noEmit: true,
  target: 'es2022',
  lib: ['es2022'],
  module: 'nodenext',
  moduleResolution: 'nodenext',
  types: ['node'],
};
/** What every host installs beside the tarball: Express 5 with its types, TypeScript, Node's types. */
const BASE = ['express@5', '@types/express@5', 'typescript@5.9.3', '@types/node@20'];
const CLIENTS = ['prom-client', '@prometheus-io/client'];

/** A host of `client` that hands the client's registries to every factory that takes one. */
function metricsHost(client: string): string {
  return `import express = require('express');
import { Counter, Registry } from '${client}';
import {
  collectProcessMetrics,
  createControllerMetrics,
  createIntrospectionRouter,
  createIntrospectionState,
  createKubeAuth,
  createKubeAuthMetrics,
  createMetricsRouter,
  type ControllerMetrics,
  type KubeAuthApi,
  type MetricsRegistry,
} from 'controller-introspection';

const registry = new Registry();
const openMetrics: MetricsRegistry = new Registry<'application/openmetrics-text; version=1.0.0; charset=utf-8'>();
const state = createIntrospectionState();
const metrics: ControllerMetrics = createControllerMetrics(registry, state, { processMetrics: true });
metrics.recordReconciliation(0.25, true, 'cycle-1');
collectProcessMetrics(openMetrics, { prefix: 'host_' });
new Counter({ name: 'host_requests_total', help: 'Requests', registers: [registry] }).inc();
declare const api: KubeAuthApi;
const app = express();
app.use(createIntrospectionRouter(state));
app.use(createKubeAuth(api, createKubeAuthMetrics(registry)), createMetricsRouter(registry, { path: '/metrics' }));
app.use('/om', createMetricsRouter(openMetrics));
// @ts-expect-error a registry has members: were the declarations' registry type unresolved (any), this would compile
createMetricsRouter({});
`;
}

/** A host that mounts only the introspection router. */
const INTROSPECTION_HOST = `import express = require('express');
import { createIntrospectionRouter, createIntrospectionState, type IntrospectionState } from 'controller-introspection';

const state: IntrospectionState = createIntrospectionState();
state.setConfig({ templates: {}, watched_resources: [] }, '1');
express().use(createIntrospectionRouter(state, { debug: false }));
// @ts-expect-error the state is required
createIntrospectionRouter();
`;

/** Type-checks `source` as the app's host.ts: the errors, and the files read from outside the app. */
async function typeCheck(app: string, source: string): Promise<{ checked: boolean; errors: string[]; outside: string[] }> {
  fs.writeFileSync(path.join(app, 'host.ts'), source);
  fs.writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: COMPILER_OPTIONS, files: ['host.ts'] }));
  const tsc = path.join(app, 'node_modules', 'typescript', 'bin', 'tsc');
  let stdout: string;
  try {
    ({ stdout } = await run(process.execPath, [tsc, '-p', '.', '--listFiles', '--pretty', 'false'], { cwd: app, timeout: 120_000 }));
  } catch (err) {
    // tsc exits 2 on errors, which it prints with the files on standard output.
    stdout = (err as { stdout?: string }).stdout ?? String(err);
  }
  const lines = stdout.split('\n').filter((line) => line !== '');
  const root = fs.realpathSync(app) + path.sep;
  return {
    checked: lines.includes(`${root}host.ts`),
    errors: lines.filter((line) => /error TS\d+/.test(line)),
    outside: lines.filter((line) => path.isAbsolute(line) && !line.startsWith(root)),
  };
}

describe('the declarations in strict TypeScript hosts (skipLibCheck off)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-hosts-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  let tarball: string;

  beforeAll(async () => {
    ({ tarball } = await packTarball(dir));
  }, 60_000);

  it.each([
    [
      '@prometheus-io/client only',
      'official',
      ['@prometheus-io/client@0.16'],
      metricsHost('@prometheus-io/client'),
      ['@prometheus-io/client'],
    ],
    ['prom-client 15 only', 'prom-client', ['prom-client@15'], metricsHost('prom-client'), ['prom-client']],
    ['no metrics client (introspection only)', 'none', [], INTROSPECTION_HOST, []],
  ])(
    'compile without an error in a fresh app with %s',
    async (_what, name, client, source, clients) => {
      // The client declares Node 22+; npm installs it on 20 with a warning, and its types serve.
      const app = await freshApp(dir, `app-${name}`, [tarball, ...BASE, ...client]);
      expect(CLIENTS.filter((installed) => fs.existsSync(path.join(app, 'node_modules', installed)))).toEqual(clients);
      expect(await typeCheck(app, source)).toEqual({ checked: true, errors: [], outside: [] });
      // npm install from the registry and a full tsc take most of a minute on a busy 2-core machine.
    },
    300_000,
  );
});
