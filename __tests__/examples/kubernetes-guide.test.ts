/**
 * docs/kubernetes.md shows no code of its own: every block is a region of a file the build
 * compiles (examples/kubernetes/wiring.ts, named in a `<!-- code: file#region -->` line above the
 * block), and must be identical to it, so the guide cannot drift from code that compiles and runs.
 * (__tests__/docs/code-blocks.test.ts checks every guide's blocks the same way; this test also
 * requires that the guide shows every region of the example.)
 */
import { codeBlocks, regionsOf, sourceOf } from '../helpers/markdown';

const GUIDE = 'docs/kubernetes.md';
const EXAMPLE = 'examples/kubernetes/wiring.ts';

describe(GUIDE, () => {
  const blocks = codeBlocks(GUIDE);

  it('has code blocks, each naming the region it shows', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    expect(blocks.filter((b) => b.marker?.kind !== 'code').map((b) => `${GUIDE}:${b.line}`)).toEqual([]);
  });

  it('shows each region exactly as the compiled file has it', () => {
    for (const block of blocks) {
      const code = sourceOf(block.marker!.value);
      if (code === undefined) throw new Error(`${GUIDE}:${block.line}: no such region: ${block.marker!.value}`);
      expect({ where: `${GUIDE}:${block.line}`, code: block.code }).toEqual({ where: `${GUIDE}:${block.line}`, code });
    }
  });

  it('shows every region of the example once', () => {
    // The RBAC manifest is shown too, a region of examples/kubernetes/rbac.yaml (applied by __tests__/docs/manifests.test.ts).
    const shown = blocks.map((b) => b.marker!.value).filter((region) => region.startsWith(`${EXAMPLE}#`));
    const regions = [...regionsOf(EXAMPLE).keys()].map((r) => `${EXAMPLE}#${r}`);
    expect([...shown].sort()).toEqual([...regions].sort());
  });
});
