/**
 * Every code block of the README, CONTRIBUTING.md and the guides in docs/ is verified, or says it
 * is illustrative (```text). A block is verified when the comment above it says how:
 *
 * - `<!-- code: file#region -->`: the block is that region (or that whole file) byte for byte, and
 *   the file is compiled by a `tsc -p` of `npm run build` or `npm run typecheck`, or checked by a
 *   test named in {@link CHECKED_ELSEWHERE};
 * - `<!-- run: runner -->`: the runner's test ({@link RUNNERS}) runs every command of the block;
 * - `<!-- check: commands -->`: checked here: every npm script, package and file a command names
 *   exists, so the commands run as written on a fresh clone.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { codeBlocks, documentationFiles, readRepoFile, REPO, shellCommands, sourceOf, type CodeBlock } from '../helpers/markdown';

/** Each runner, and the test that runs its blocks (it must read them with `blocksRunBy('<runner>')`). */
const RUNNERS: Readonly<Record<string, string>> = {
  'example-app': '__tests__/examples/debugging.test.ts',
  'quick-start': '__tests__/examples/quick-start.test.ts',
  'prometheus-exemplars': '__tests__/peer/exemplars.test.ts',
  doctor: '__tests__/cli/doctor.test.ts',
};

/** Sources no tsc compiles, and the test that checks each. */
const CHECKED_ELSEWHERE: Readonly<Record<string, string>> = {
  'examples/kubernetes/rbac.yaml': '__tests__/docs/manifests.test.ts',
  'examples/kubernetes/network-policy.yaml': '__tests__/docs/manifests.test.ts',
  'examples/kubernetes/deployment.yaml': '__tests__/docs/manifests.test.ts',
  'examples/kubernetes/metrics-rbac.yaml': '__tests__/kubernetes/kube-auth.test.ts',
  'examples/kubernetes/fleet-rbac.yaml': '__tests__/fleet/real-fleet.test.ts',
  'examples/monitoring/scrape-native-histograms.yml': '__tests__/peer/prometheus.test.ts',
};

interface PackageJson {
  name: string;
  scripts: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies: Record<string, string>;
}
const pkg = JSON.parse(readRepoFile('package.json')) as PackageJson;

/** Every file a `tsc -p <config>` of the build or the type-check compiles, relative to the repository root. */
function compiledFiles(): Set<string> {
  const files = new Set<string>();
  for (const script of [pkg.scripts['build']!, pkg.scripts['typecheck']!]) {
    for (const match of script.matchAll(/\btsc -p (\S+)/g)) {
      const configFile = path.join(REPO, match[1]!);
      const read = ts.readConfigFile(configFile, (f) => ts.sys.readFile(f));
      if (read.error) throw new Error(`${match[1]}: ${ts.flattenDiagnosticMessageText(read.error.messageText, '\n')}`);
      const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, path.dirname(configFile));
      for (const file of parsed.fileNames) files.add(path.relative(REPO, file));
    }
  }
  return files;
}

/** What is wrong with a `code:` block, or undefined when it is verified. */
function checkSource(block: CodeBlock, compiled: Set<string>): string | undefined {
  const reference = block.marker!.value;
  const file = reference.split('#')[0]!;
  const source = sourceOf(reference);
  if (source === undefined) return `no such file or region: ${reference}`;
  if (source !== block.code) return `differs from ${reference} (copy the region into the block, byte for byte)`;
  if (compiled.has(file)) return undefined;
  const test = CHECKED_ELSEWHERE[file];
  if (test === undefined) return `${file} is compiled by no tsc -p of npm run build or typecheck, and checked by no test`;
  if (!readRepoFile(test).includes(file)) return `${test} does not read ${file}`;
  return undefined;
}

/** What is wrong with one command of a `check: commands` block, or undefined. */
function checkCommand(command: string): string | undefined {
  const words = command
    .replace(/^(?:[A-Z_]+=\S+\s+)+/, '')
    .split(/\s+/)
    .filter((w) => w !== '');
  const [tool, verb, ...rest] = words;
  const repoPaths = (args: readonly string[]): string[] =>
    args.filter((a) => !a.startsWith('-') && !a.startsWith('/') && a.includes('/') && !fs.existsSync(path.join(REPO, a)));
  if (tool === 'npm' && (verb === 'ci' || (verb === 'install' && rest.length === 0))) return undefined;
  if (tool === 'npm' && verb === 'test') return pkg.scripts['test'] ? undefined : 'package.json has no test script';
  if (tool === 'npm' && verb === 'run') return pkg.scripts[rest[0]!] ? undefined : `package.json has no script "${rest[0]}"`;
  if (tool === 'npm' && verb === 'install') return checkInstall(rest.filter((a) => !a.startsWith('-')));
  if (tool === 'npx') {
    if (!fs.existsSync(path.join(REPO, 'node_modules', '.bin', verb!))) return `npx ${verb}: no such binary in node_modules/.bin`;
    const missing = repoPaths(rest);
    return missing.length === 0 ? undefined : `no such path: ${missing.join(', ')}`;
  }
  if (tool === 'node' || tool === 'bash') {
    const missing = repoPaths([verb!, ...rest]).filter((p) => !builtFrom(p));
    return missing.length === 0 ? undefined : `no such path: ${missing.join(', ')}`;
  }
  return `not a command this check knows (npm, npx, node, bash): run it in a test, or show it as text`;
}

/** Whether `file` is the build's output of a source that exists (examples/dist/x/y.js ← examples/x/y.ts). */
function builtFrom(file: string): boolean {
  const match = /^examples\/dist\/(.+)\.js$/.exec(file);
  return match !== null && fs.existsSync(path.join(REPO, 'examples', `${match[1]}.ts`));
}

/** `npm install <packages>`: this package with its required peers, or packages the repository itself uses. */
function checkInstall(packages: readonly string[]): string | undefined {
  const known = new Set([pkg.name, ...Object.keys(pkg.peerDependencies), ...Object.keys(pkg.devDependencies)]);
  const unknown = packages.map((p) => p.replace(/(.)@.*$/, '$1')).filter((p) => !known.has(p));
  if (unknown.length > 0) return `not this package, a peer or a dependency of the repository: ${unknown.join(', ')}`;
  if (!packages.includes(pkg.name)) return undefined;
  const required = Object.keys(pkg.peerDependencies).filter((p) => !pkg.peerDependenciesMeta?.[p]?.optional);
  const missing = required.filter((p) => !packages.includes(p));
  return missing.length === 0 ? undefined : `installs ${pkg.name} without its peer dependencies ${missing.join(', ')}`;
}

/** What is wrong with a block, or undefined when it is verified or explicitly illustrative. */
function problemOf(block: CodeBlock, compiled: Set<string>): string | undefined {
  if (block.indent !== '') return 'indented (inside a list?): move it out so that it can be checked';
  const marker = block.marker;
  if (marker === undefined) return block.lang === 'text' ? undefined : 'neither verified (code:, run:, check:) nor tagged text';
  if (block.lang === 'text') return 'tagged text but marked as verified: drop one';
  if (marker.kind === 'code') return checkSource(block, compiled);
  if (marker.kind === 'run') {
    const test = RUNNERS[marker.value];
    if (test === undefined) return `unknown runner "${marker.value}" (known: ${Object.keys(RUNNERS).join(', ')})`;
    if (block.lang !== 'sh') return 'a run: block must be tagged sh';
    return readRepoFile(test).includes(`blocksRunBy('${marker.value}')`)
      ? undefined
      : `${test} does not run blocksRunBy('${marker.value}')`;
  }
  if (marker.value !== 'commands') return `unknown check "${marker.value}" (known: commands)`;
  const problems = shellCommands(block)
    .flatMap((line) => line.replace(/\s+#.*$/, '').split('&&'))
    .map((command) => [command.trim(), checkCommand(command.trim())] as const)
    .filter(([, problem]) => problem !== undefined);
  return problems.length === 0 ? undefined : problems.map(([command, problem]) => `${command}: ${problem}`).join('; ');
}

describe('code blocks of the documentation', () => {
  const files = documentationFiles();
  const blocks = files.flatMap((file) => codeBlocks(file));
  let compiled: Set<string>;
  beforeAll(() => {
    compiled = compiledFiles();
  });

  it('reads the README, CONTRIBUTING.md and every guide', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/getting-started.md', 'docs/kubernetes.md']));
    expect(blocks.length).toBeGreaterThanOrEqual(30);
  });

  it('are each verified, or tagged text', () => {
    const problems = blocks.flatMap((block) => {
      const problem = problemOf(block, compiled);
      return problem === undefined ? [] : [`${block.file}:${block.line}: ${problem}`];
    });
    expect(problems).toEqual([]);
  });

  it('show the Quick start in the README as the file the quick-start test runs: its regions, in order, make the whole file', () => {
    const file = 'examples/quick-start/server.mjs';
    const shown = codeBlocks('README.md').filter((b) => b.marker?.value.split('#')[0] === file);
    expect(shown.length).toBeGreaterThan(0);
    const withoutMarkers = readRepoFile(file)
      .split('\n')
      .filter((line) => !/^\/\/ #(?:end)?region\b/.test(line))
      .join('\n');
    const normalise = (text: string): string => text.replace(/\n{2,}/g, '\n').trim();
    expect(normalise(shown.map((b) => b.code).join('\n'))).toBe(normalise(withoutMarkers));
    // The first screen mounts both routers.
    const readme = readRepoFile('README.md').split('\n');
    const mounted = (call: string): number => readme.findIndex((line) => line.includes(call));
    expect(mounted('debugApp.use(introspection)')).toBeGreaterThan(0);
    expect(mounted('debugApp.use(introspection)')).toBeLessThan(60);
    expect(mounted('metricsApp.use(createMetricsRouter(registry))')).toBeLessThan(60);
    expect(readRepoFile('__tests__/examples/quick-start.test.ts')).toContain(file);
  });

  it('fail a block that is not verified', () => {
    const unverified: CodeBlock = { file: 'x.md', line: 1, lang: 'sh', indent: '', code: 'curl localhost\n', marker: undefined };
    const edited: CodeBlock = {
      ...unverified,
      lang: 'js',
      code: 'changed\n',
      marker: { kind: 'code', value: 'examples/quick-start/server.mjs' },
    };
    const unknownScript: CodeBlock = { ...unverified, code: 'npm run nothing-such\n', marker: { kind: 'check', value: 'commands' } };
    const noPeers: CodeBlock = { ...unknownScript, code: `npm install ${pkg.name}\n` };
    expect(problemOf(unverified, compiled)).toMatch(/neither verified/);
    expect(problemOf(edited, compiled)).toMatch(/differs from/);
    expect(problemOf(unknownScript, compiled)).toMatch(/no script "nothing-such"/);
    expect(problemOf(noPeers, compiled)).toMatch(/without its peer dependencies express$/);
  });
});
