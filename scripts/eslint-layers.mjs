// The layers of lib/, kept by a lint rule that `npm run lint` (and so `npm test`) runs: each folder
// may import only the folders listed for it, all of them below it, so no import runs from a lower
// layer up. Circles inside a folder are __tests__/package/import-cycles.test.ts's to find.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const LIB = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lib');

/**
 * What each folder of lib/ may import, bottom layer first. `index` is lib/index.ts, the package's
 * entry, which wires everything.
 */
export const LAYERS = Object.freeze({
  // Pure helpers, and options declared once per factory.
  util: [],
  options: ['util'],
  // The engines: they know nothing of HTTP.
  'json-stream': ['options', 'util'],
  jsonpath: ['json-stream', 'options', 'util'],
  // The state a host pushes in.
  state: ['jsonpath', 'json-stream', 'options', 'util'],
  // HTTP's core: errors, queries, bodies, guards. Knows no state and no metrics.
  http: ['json-stream', 'options', 'util'],
  // What serves or reports on top of the core.
  console: ['http', 'util'],
  pprof: ['http', 'state', 'json-stream', 'options', 'util'],
  tls: ['options', 'util'],
  metrics: ['http', 'state', 'json-stream', 'options', 'util'],
  // Components a controller runs, reporting into the state and through interfaces they declare
  // themselves (the metrics' handles fit them): none imports the metrics.
  health: ['state', 'options', 'util'],
  pipeline: ['state', 'options', 'util'],
  kubernetes: ['http', 'state', 'options', 'util'],
  // The fleet view: the replicas listed through the Kubernetes API, each read over HTTP.
  fleet: ['kubernetes', 'http', 'state', 'json-stream', 'options', 'util'],
  // The router that composes the debug surface.
  introspection: ['console', 'pprof', 'http', 'state', 'jsonpath', 'json-stream', 'options', 'util'],
  // The command line (`controller-introspection doctor`): a client of the fleet view, outside index.
  cli: ['fleet', 'http', 'options', 'util'],
  index: [
    'introspection',
    'fleet',
    'kubernetes',
    'pipeline',
    'health',
    'metrics',
    'tls',
    'pprof',
    'console',
    'http',
    'state',
    'jsonpath',
    'json-stream',
    'options',
    'util',
  ],
});

/** The folder of lib/ a file is in (`index` for a file directly in lib/), or undefined outside lib/. */
function folderOf(file) {
  const relative = path.relative(LIB, file);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  const [first, ...rest] = relative.split(path.sep);
  // A file directly in lib/ (the entry); a folder named alone is its own index.
  return rest.length === 0 && /^index(\.[cm]?ts)?$|\.[cm]?ts$/.test(first) ? 'index' : first;
}

/** The rule `layers/imports`: an import of lib/ may only reach a folder its own folder may import. */
const importsRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Keeps the layers of lib/: each folder imports only the folders below it (scripts/eslint-layers.mjs)' },
    schema: [],
    messages: {
      upward: 'lib/{{from}}/ may not import lib/{{to}}/ ({{source}}): lib/{{from}}/ may import {{allowed}} (scripts/eslint-layers.mjs)',
      unknown: 'lib/{{from}}/ is not a layer of scripts/eslint-layers.mjs: give it its place there',
    },
  },
  create(context) {
    const file = context.filename;
    const from = folderOf(file);
    if (from === undefined) return {};
    const allowed = LAYERS[from];
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      if (allowed === undefined) {
        context.report({ node, messageId: 'unknown', data: { from } });
        return;
      }
      const to = folderOf(path.resolve(path.dirname(file), source));
      if (to === undefined || to === from || allowed.includes(to)) return;
      context.report({
        node,
        messageId: 'upward',
        data: { from, to, source, allowed: allowed.length === 0 ? 'nothing' : allowed.map((f) => `lib/${f}/`).join(', ') },
      });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
      TSImportType: (node) => check(node, node.argument?.literal?.value ?? node.argument?.value),
    };
  },
};

/** The plugin: `layers/imports`. */
export default { meta: { name: 'layers' }, rules: { imports: importsRule } };
