/**
 * The layers of lib/ (scripts/eslint-layers.mjs), kept by `npm run lint`: the rule refuses an
 * import from a lower layer up, and the tree has none.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const ESLINT = path.join(ROOT, 'node_modules', 'eslint', 'bin', 'eslint.js');

interface LintResult {
  readonly filePath: string;
  readonly messages: ReadonlyArray<{ readonly ruleId: string | null; readonly message: string }>;
}

/** ESLint as `npm run lint` runs it (its own process: the configuration is an ES module), as JSON. */
function eslint(args: readonly string[], input?: string): LintResult[] {
  const run = spawnSync(process.execPath, [ESLINT, '--format', 'json', ...args], {
    cwd: ROOT,
    input,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (run.stdout === '') throw new Error(`eslint: ${run.stderr}`);
  return JSON.parse(run.stdout) as LintResult[];
}

/** The layer rule's messages for `text` as if it were the file `file`. */
function lint(file: string, text: string): string[] {
  return eslint(['--stdin', '--stdin-filename', file], text).flatMap((r) =>
    r.messages.filter((m) => m.ruleId === 'layers/imports').map((m) => m.message),
  );
}

describe('the layers of lib/', () => {
  it.each([
    ['lib/http/x.ts', "import { createMetricsRouter } from '../metrics';", /lib\/http\/ may not import lib\/metrics\//],
    ['lib/http/x.ts', "export { createIntrospectionState } from '../state/store';", /lib\/http\/ may not import lib\/state\//],
    ['lib/util/x.ts', "import type { Option } from '../options/spec';", /lib\/util\/ may not import lib\/options\/ .*may import nothing/],
    [
      'lib/metrics/exposition/x.ts',
      "import { createKubeAuth } from '../../kubernetes/kube-auth';",
      /lib\/metrics\/ may not import lib\/kubernetes\//,
    ],
    ['lib/state/x.ts', "const m = import('../introspection/router');", /lib\/state\/ may not import lib\/introspection\//],
    ['lib/pprof/x.ts', "type R = import('../metrics').MetricsRouterOptions;", /lib\/pprof\/ may not import lib\/metrics\//],
    ['lib/tls/x.ts', "import { x } from '../index';", /lib\/tls\/ may not import lib\/index\//],
    // Components report through interfaces they declare: none imports the metrics.
    ['lib/kubernetes/x.ts', "import type { ControllerMetrics } from '../metrics';", /lib\/kubernetes\/ may not import lib\/metrics\//],
    ['lib/pipeline/x.ts', "import { driverOf } from '../metrics/controller-metrics';", /lib\/pipeline\/ may not import lib\/metrics\//],
    ['lib/tls/x.ts', "import type { IntrospectionState } from '../state/types';", /lib\/tls\/ may not import lib\/state\//],
    ['lib/newfolder/x.ts', "import { x } from '../util/cut-text';", /lib\/newfolder\/ is not a layer/],
  ])('refuses in %s: %s', (file, text, message) => {
    const messages = lint(file, text);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(message);
  });

  it.each([
    ['lib/metrics/x.ts', "import { sendError } from '../http/errors';\nimport { cutText } from '../util/cut-text';"],
    ['lib/kubernetes/x.ts', "import { sendError } from '../http/errors';\nimport type { IntrospectionState } from '../state/types';"],
    ['lib/index.ts', "export { createKubeAuth } from './kubernetes';"],
    ['lib/http/x.ts', "import { sendError } from './errors';\nimport express from 'express';"],
  ])('allows in %s: %s', (file, text) => {
    expect(lint(file, text)).toEqual([]);
  });

  it('holds in the tree', () => {
    const found = eslint(['--rule', 'max-lines-per-function: off', 'lib']).flatMap((r) =>
      r.messages.filter((m) => m.ruleId === 'layers/imports').map((m) => `${r.filePath}: ${m.message}`),
    );
    expect(found).toEqual([]);
  }, 120_000);
});
