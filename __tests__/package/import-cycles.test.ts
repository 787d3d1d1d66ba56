/**
 * No circles of imports in lib/ (type-only imports included): each module can be read, loaded and
 * tested after the ones it uses, and none needs another that needs it back.
 */
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Every module of lib/ with the lib/ modules it imports or re-exports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const folders = [join(ROOT, 'lib')];
  while (folders.length > 0) {
    const folder = folders.pop()!;
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const file = join(folder, entry.name);
      if (entry.isDirectory()) folders.push(file);
      else if (entry.name.endsWith('.ts')) {
        const targets: string[] = [];
        for (const match of readFileSync(file, 'utf8').matchAll(/(?:import|export)\s[^'";]*?from\s+'(\.[^']+)'/g)) {
          const base = resolve(dirname(file), match[1]!);
          const target = [`${base}.ts`, join(base, 'index.ts')].find((candidate) => existsSync(candidate));
          if (target !== undefined) targets.push(relative(ROOT, target));
        }
        graph.set(relative(ROOT, file), targets);
      }
    }
  }
  return graph;
}

/** The strongly connected components with more than one module (Tarjan), or a module importing itself. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('lib/ imports', () => {
  it('form no circle', () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(50);
    expect(circles(graph)).toEqual([]);
  });

  it('the check finds a circle when there is one', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(circles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });
});
