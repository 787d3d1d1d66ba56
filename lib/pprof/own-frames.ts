import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { V8CallFrame, V8CpuProfile, V8SamplingHeapNode, V8SamplingHeapProfile } from './v8-shapes';

// This folder, as scripts name it: `dist/pprof/` installed, `lib/pprof/` under the tests.
const OWN_DIR_URL = pathToFileURL(__dirname + path.sep).href;

/**
 * A frame of the profiler itself: starting V8's profiler (charged to a native frame V8 misnames
 * `setProfilesCleanupLimit`), keeping its code log warm, converting and encoding profiles. An idle
 * host's profile must show the host, not the tool looking at it.
 */
function isOwn(frame: V8CallFrame): boolean {
  return frame.url.startsWith(OWN_DIR_URL) || frame.url.startsWith(`${__dirname}${path.sep}`);
}

/** The CPU profile without the profiler's own samples: they become the root's (no function). */
export function withoutOwnCpuWork(profile: V8CpuProfile): V8CpuProfile {
  const root = profile.nodes.find((n) => n.callFrame.functionName === '(root)');
  if (!root) return profile;
  const own = new Set<number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const pending = profile.nodes.filter((n) => isOwn(n.callFrame)).map((n) => n.id);
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (own.has(id)) continue;
    own.add(id);
    for (const child of byId.get(id)?.children ?? []) pending.push(child);
  }
  if (own.size === 0) return profile;
  let moved = 0;
  const samples = profile.samples.map((id) => {
    if (!own.has(id)) return id;
    moved += 1;
    return root.id;
  });
  if (moved === 0) return profile;
  const nodes = profile.nodes.map((n) =>
    own.has(n.id) ? { ...n, hitCount: 0 } : n.id === root.id ? { ...n, hitCount: n.hitCount + moved } : n,
  );
  return { ...profile, nodes, samples };
}

/** The heap profile without what the profiler itself holds (its warm-up allocations, buffers). */
export function withoutOwnHeap(profile: V8SamplingHeapProfile): V8SamplingHeapProfile {
  const strip = (node: V8SamplingHeapNode): V8SamplingHeapNode => ({ ...node, children: [] });
  const head = strip(profile.head);
  const work: Array<[V8SamplingHeapNode, V8SamplingHeapNode]> = [[profile.head, head]];
  let dropped = false;
  while (work.length > 0) {
    const [from, to] = work.pop()!;
    for (const child of from.children ?? []) {
      if (isOwn(child.callFrame)) {
        dropped = true;
        continue;
      }
      const copy = strip(child);
      to.children.push(copy);
      work.push([child, copy]);
    }
  }
  return dropped ? { ...profile, head } : profile;
}
