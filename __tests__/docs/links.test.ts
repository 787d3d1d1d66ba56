/**
 * Links of the README, CONTRIBUTING.md and the guides. The registry's page shows the README without
 * the repository's files, so the README links every repository file absolutely, on the repository
 * package.json names; every such link, in any of these files, must point at a file of this tree
 * that git does not ignore (and at a heading of it, for a `#fragment` into markdown). The guides
 * are read on the repository, where a relative link works: those must resolve too.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { codeBlocks, documentationFiles, readRepoFile, REPO } from '../helpers/markdown';

const repository = (JSON.parse(readRepoFile('package.json')) as { repository: { url: string } }).repository.url;
/** `https://github.com/<owner>/<name>`, from package.json's `repository`. */
const REPOSITORY = repository.replace(/^git\+/, '').replace(/\.git$/, '');
/** Where the README's links point: files on the default branch. */
const FILE_BASE = `${REPOSITORY}/blob/main/`;
const TREE_BASE = `${REPOSITORY}/tree/main/`;

interface Link {
  readonly file: string;
  readonly line: number;
  readonly target: string;
}

/** The markdown text without its fenced blocks (line numbers kept), and without inline code spans unless asked. */
function prose(file: string, inlineCode: 'drop' | 'keep' = 'drop'): string {
  const lines = readRepoFile(file).split('\n');
  for (const block of codeBlocks(file)) {
    const count = block.code.split('\n').length + 1;
    for (let i = block.line - 1; i < block.line - 1 + count; i++) lines[i] = '';
  }
  return inlineCode === 'keep' ? lines.join('\n') : lines.map((line) => line.replace(/(`+)[^`]*?\1/g, '')).join('\n');
}

/** Inline links and images `[text](target)`, autolinks `<https://…>` and reference definitions `[x]: target`. */
function linksOf(file: string): Link[] {
  const links: Link[] = [];
  prose(file)
    .split('\n')
    .forEach((text, i) => {
      for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ file, line: i + 1, target: m[1]! });
      for (const m of text.matchAll(/<(https?:\/\/[^>\s]+)>/g)) links.push({ file, line: i + 1, target: m[1]! });
      const definition = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(text);
      if (definition) links.push({ file, line: i + 1, target: definition[1]! });
    });
  return links;
}

/** GitHub's anchors for a markdown file's headings. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of prose(file, 'keep').matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = m[1]!.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

/** Whether an entry of the root .gitignore (`dir/`, `*.ext` or a name) covers `file`. */
function ignoredByRootGitignore(file: string): boolean {
  return readRepoFile('.gitignore')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .some((entry) =>
      entry.endsWith('/')
        ? file.startsWith(entry) || file.includes(`/${entry}`)
        : entry.startsWith('*.')
          ? file.endsWith(entry.slice(1))
          : file === entry,
    );
}

const ignored = new Map<string, boolean>();
/** Whether git ignores a path (built output, the API reference): such a file is not on the repository. */
function ignoredByGit(file: string): boolean {
  let answer = ignored.get(file);
  if (answer === undefined) {
    try {
      execFileSync('git', ['check-ignore', '-q', file], { cwd: REPO, stdio: 'ignore' });
      answer = true;
    } catch (err) {
      // Status 1: not ignored. Anything else (128: CI's per-Node copies of the tree have no .git):
      // the .gitignore entries at the root, which are all this repository has, decide.
      answer = (err as { status?: number }).status === 1 ? false : ignoredByRootGitignore(file);
    }
    ignored.set(file, answer);
  }
  return answer;
}

/** What is wrong with a link to `file` (relative to the repository root) and its fragment, or undefined. */
function checkTarget(file: string, fragment: string | undefined): string | undefined {
  const full = path.join(REPO, file);
  if (!full.startsWith(REPO) || !fs.existsSync(full)) return `no such file in this tree: ${file}`;
  if (ignoredByGit(file)) return `${file} is ignored by git: it is not on the repository`;
  if (fragment === undefined || fragment === '' || !file.endsWith('.md')) return undefined;
  return anchorsOf(file).has(fragment) ? undefined : `${file} has no heading #${fragment}`;
}

/** What is wrong with one link, or undefined. */
function problemOf(link: Link): string | undefined {
  const [address, fragment] = link.target.split('#') as [string, string | undefined];
  if (address === '') return checkTarget(link.file, fragment);
  if (/^(mailto:|https?:\/\/(?!github\.com\/controller-introspection\/))/i.test(address)) return undefined;
  if (/^https?:/i.test(address)) {
    if (
      address === REPOSITORY ||
      (address.startsWith(`${REPOSITORY}/`) && /^\/(issues|pulls|releases)\b/.test(address.slice(REPOSITORY.length)))
    )
      return undefined;
    const base = [FILE_BASE, TREE_BASE].find((b) => address.startsWith(b));
    if (base === undefined) return `a link into the repository must start with ${FILE_BASE} (or ${TREE_BASE})`;
    return checkTarget(decodeURIComponent(address.slice(base.length).replace(/\?raw=true$/, '')), fragment);
  }
  if (link.file === 'README.md') return `relative link: the registry's page cannot follow it; use ${FILE_BASE}<path>`;
  return checkTarget(path.posix.normalize(path.posix.join(path.posix.dirname(link.file), address)), fragment);
}

describe('links of the documentation', () => {
  const links = documentationFiles().flatMap(linksOf);

  it('are found', () => {
    expect(links.filter((l) => l.file === 'README.md').length).toBeGreaterThanOrEqual(10);
  });

  it('point at files and headings that exist, absolutely from the README', () => {
    const problems = links.flatMap((link) => {
      const problem = problemOf(link);
      return problem === undefined ? [] : [`${link.file}:${link.line}: ${link.target}: ${problem}`];
    });
    expect(problems).toEqual([]);
  });

  it('fail a relative README link, a missing file and a missing heading', () => {
    expect(problemOf({ file: 'README.md', line: 1, target: 'docs/security.md' })).toMatch(/relative link/);
    expect(problemOf({ file: 'README.md', line: 1, target: `${FILE_BASE}docs/nothing-such.md` })).toMatch(/no such file/);
    expect(problemOf({ file: 'README.md', line: 1, target: `${FILE_BASE}README.md#nothing-such` })).toMatch(/no heading/);
    expect(problemOf({ file: 'README.md', line: 1, target: `${REPOSITORY}/blob/master/README.md` })).toMatch(/must start with/);
    expect(problemOf({ file: 'docs/x.md', line: 1, target: '../dist/index.js' })).toMatch(/ignored by git|no such file/);
  });
});
