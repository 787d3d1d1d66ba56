/**
 * Reads the documentation the way its tests check it: the README, CONTRIBUTING.md and the guides in
 * docs/, their fenced code blocks, and the comment written above each block that says how the block
 * is verified:
 *
 * - `<!-- code: examples/file.mjs#region -->` (or a whole file without `#region`): the block is that
 *   region of a file the build or the type-check compiles, byte for byte;
 * - `<!-- run: <runner> -->`: a test runs every command of the block against a live server;
 * - `<!-- check: commands -->`: every command names npm scripts, packages and files that exist.
 *
 * A block with none of these must be tagged `text` (illustrative output, not checked).
 */
import fs from 'node:fs';
import path from 'node:path';

/** The repository root. */
export const REPO = path.resolve(__dirname, '..', '..');

/** How a block says it is verified: the comment above it. */
export interface BlockMarker {
  readonly kind: 'code' | 'run' | 'check';
  readonly value: string;
}

/** One fenced code block of a markdown file. */
export interface CodeBlock {
  /** The markdown file, relative to the repository root. */
  readonly file: string;
  /** The line of the opening fence, from 1. */
  readonly line: number;
  /** The fence's language tag (`ts`, `sh`, `text`…), empty when there is none. */
  readonly lang: string;
  /** The indentation of the fence: a block inside a list item is indented. */
  readonly indent: string;
  /** The block's text, every line ending with a newline. */
  readonly code: string;
  readonly marker: BlockMarker | undefined;
}

/** The markdown files the documentation tests read: README.md, CONTRIBUTING.md and docs/*.md. */
export function documentationFiles(): string[] {
  const guides = fs
    .readdirSync(path.join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', 'CONTRIBUTING.md', ...guides].filter((file) => fs.existsSync(path.join(REPO, file)));
}

/** A file of the repository as text. */
export function readRepoFile(file: string): string {
  return fs.readFileSync(path.join(REPO, file), 'utf8');
}

const FENCE = /^(\s*)```(\S*)\s*$/;
const MARKER = /^<!-- (code|run|check): (\S+) -->$/;

/** Every fenced block of a markdown file, with the marker comment above it (blank lines between allowed). */
export function codeBlocks(file: string): CodeBlock[] {
  const lines = readRepoFile(file).split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, lang] = open as unknown as [string, string, string];
    let end = i + 1;
    while (end < lines.length && !new RegExp(`^${indent}\`\`\`\\s*$`).test(lines[end]!)) end++;
    if (end === lines.length) throw new Error(`${file}:${i + 1}: code block never closed`);
    const code = lines
      .slice(i + 1, end)
      .map((l) => `${l.startsWith(indent) ? l.slice(indent.length) : l}\n`)
      .join('');
    blocks.push({ file, line: i + 1, lang, indent, code, marker: markerAbove(lines, i) });
    i = end;
  }
  return blocks;
}

function markerAbove(lines: readonly string[], fence: number): BlockMarker | undefined {
  let above = fence - 1;
  while (above >= 0 && lines[above]!.trim() === '') above--;
  const match = above >= 0 ? MARKER.exec(lines[above]!.trim()) : null;
  return match ? { kind: match[1] as BlockMarker['kind'], value: match[2]! } : undefined;
}

/**
 * The `#region name` … `#endregion` blocks of a source file, by name: `// #region` in TypeScript
 * and JavaScript, `# #region` in YAML. The marker lines themselves are not part of the region.
 */
export function regionsOf(file: string): Map<string, string> {
  const regions = new Map<string, string>();
  const pattern = /^(?:\/\/|#) #region (\S+)\n([\s\S]*?)^(?:\/\/|#) #endregion$/gm;
  for (const match of readRepoFile(file).matchAll(pattern)) {
    if (regions.has(match[1]!)) throw new Error(`${file}: region ${match[1]} appears twice`);
    regions.set(match[1]!, match[2]!);
  }
  return regions;
}

/** What a `code:` marker (`file#region`, or a whole `file`) refers to, or `undefined` when it does not exist. */
export function sourceOf(reference: string): string | undefined {
  const [file, region] = reference.split('#') as [string, string | undefined];
  if (!fs.existsSync(path.join(REPO, file))) return undefined;
  return region === undefined ? readRepoFile(file) : regionsOf(file).get(region);
}

/** The commands of a shell block: its non-empty lines that are not comments. */
export function shellCommands(block: CodeBlock): string[] {
  return block.code.split('\n').filter((line) => line.trim() !== '' && !line.trim().startsWith('#'));
}

/** Every block of the documentation marked `<!-- run: <runner> -->`. */
export function blocksRunBy(runner: string): CodeBlock[] {
  return documentationFiles().flatMap((file) => codeBlocks(file).filter((b) => b.marker?.kind === 'run' && b.marker.value === runner));
}

/**
 * The body rows of the table that follows a comment line of a markdown file (such as
 * `<!-- metric-families: default -->`), each as its trimmed cells; blank lines may come between.
 */
export function tableAfter(file: string, comment: string): string[][] {
  const lines = readRepoFile(file).split('\n');
  let at = lines.findIndex((line) => line.trim() === comment);
  if (at < 0) throw new Error(`${file} has no line ${comment}`);
  at++;
  while (at < lines.length && lines[at]!.trim() === '') at++;
  const rows: string[][] = [];
  for (; at < lines.length && lines[at]!.startsWith('|'); at++)
    rows.push(
      lines[at]!.split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  if (rows.length < 3) throw new Error(`${file}: no table after ${comment}`);
  return rows.slice(2);
}
