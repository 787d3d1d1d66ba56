/**
 * docs/kubernetes.md shows no code of its own: every block is a region of a file the build
 * compiles (examples/kubernetes/wiring.ts, named in a `<!-- code: file#region -->` line above the
 * block), and must be identical to it, so the guide cannot drift from code that compiles and runs.
 */
import fs from 'node:fs';
import path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
const GUIDE = 'docs/kubernetes.md';

/** The `// #region name` … `// #endregion` blocks of a source file, by name. */
function regionsOf(file: string): Map<string, string> {
  const regions = new Map<string, string>();
  const pattern = /^\/\/ #region (\S+)\n([\s\S]*?)^\/\/ #endregion$/gm;
  for (const match of fs.readFileSync(path.join(REPO, file), 'utf8').matchAll(pattern)) {
    if (regions.has(match[1]!)) throw new Error(`${file}: region ${match[1]} appears twice`);
    regions.set(match[1]!, match[2]!);
  }
  return regions;
}

/** Every fenced block of the guide, with the `code:` reference written above it (if any). */
function blocksOf(markdown: string): { source: string | undefined; code: string; line: number }[] {
  const blocks: { source: string | undefined; code: string; line: number }[] = [];
  const pattern = /(?:<!-- code: (\S+) -->\n\n)?^```[a-z]*\n([\s\S]*?)^```$/gm;
  for (const match of markdown.matchAll(pattern)) {
    blocks.push({ source: match[1], code: match[2]!, line: markdown.slice(0, match.index).split('\n').length });
  }
  return blocks;
}

describe(GUIDE, () => {
  const markdown = fs.readFileSync(path.join(REPO, GUIDE), 'utf8');
  const blocks = blocksOf(markdown);

  it('has code blocks, each naming the region it shows', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    expect(blocks.filter((b) => b.source === undefined).map((b) => `${GUIDE}:${b.line}`)).toEqual([]);
  });

  it('shows each region exactly as the compiled file has it', () => {
    for (const block of blocks) {
      const [file, region] = block.source!.split('#') as [string, string];
      const code = regionsOf(file).get(region);
      if (code === undefined) throw new Error(`${GUIDE}:${block.line}: ${file} has no region "${region}"`);
      expect({ where: `${GUIDE}:${block.line}`, code: block.code }).toEqual({ where: `${GUIDE}:${block.line}`, code });
    }
  });

  it('shows every region of the example once', () => {
    const shown = blocks.map((b) => b.source);
    const regions = [...regionsOf('examples/kubernetes/wiring.ts').keys()].map((r) => `examples/kubernetes/wiring.ts#${r}`);
    expect([...shown].sort()).toEqual([...regions].sort());
  });
});
