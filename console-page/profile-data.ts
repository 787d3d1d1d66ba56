import { describeFrame } from '../lib/pprof/heap/to-pprof';
import { labelSamples, type LabelledCpuProfile } from '../lib/pprof/cpu/sample-labels';
import type { V8CallFrame, V8CpuProfile, V8CpuProfileNode, V8SamplingHeapNode, V8SamplingHeapProfile } from '../lib/pprof/v8-shapes';

/** A frame of the flame graph: `value` is the frame's own (self) samples or bytes. */
export interface FlameNode {
  name: string;
  value: number;
  children: FlameNode[];
}

/** A row of the top-functions table, like `go tool pprof -top`: flat (self) and cumulative. */
export interface TopRow {
  name: string;
  self: number;
  total: number;
}

/** What the profiles view draws from one profile. */
export interface ProfileSummary {
  tree: FlameNode;
  /** Functions by self value, largest first. */
  top: TopRow[];
  /** Sum of every frame's self value. */
  total: number;
}

interface Frame {
  callFrame: V8CallFrame;
  self: number;
  children: Frame[];
}

// V8's synthetic frames: idle is not CPU time (pprof leaves it out too), the root is not a function.
const IDLE = '(idle)';
const ROOT = '(root)';

function frameKey(frame: V8CallFrame): string {
  return `${frame.functionName}\u0000${frame.url}\u0000${frame.lineNumber}\u0000${frame.columnNumber}`;
}

/**
 * Builds the flame tree and the top table in one walk. Cumulative values count a function once
 * per stack, so recursion does not count it twice (as pprof's `cum`).
 */
function summarise(root: Frame, rootName: string): ProfileSummary {
  const rows = new Map<string, TopRow>();
  const onStack = new Map<string, number>();
  const tree: FlameNode = { name: rootName, value: 0, children: [] };
  let total = 0;
  // Iterative: a deep recursion in the host must not overflow the page's stack.
  type Step = { frame: Frame; parent: FlameNode; key: string; subtotal: number; next: number; node: FlameNode };
  const stack: Step[] = [];
  const enter = (frame: Frame, parent: FlameNode): void => {
    const key = frameKey(frame.callFrame);
    const node: FlameNode = { name: describeFrame(frame.callFrame), value: frame.self, children: [] };
    parent.children.push(node);
    onStack.set(key, (onStack.get(key) ?? 0) + 1);
    stack.push({ frame, parent, key, subtotal: frame.self, next: 0, node });
    total += frame.self;
  };
  for (const child of root.children) {
    if (child.callFrame.functionName === IDLE) continue;
    enter(child, tree);
    while (stack.length > 0) {
      const step = stack[stack.length - 1]!;
      if (step.next < step.frame.children.length) {
        enter(step.frame.children[step.next++]!, step.node);
        continue;
      }
      stack.pop();
      const depth = onStack.get(step.key)! - 1;
      onStack.set(step.key, depth);
      let row = rows.get(step.key);
      if (!row) {
        row = { name: step.node.name, self: 0, total: 0 };
        rows.set(step.key, row);
      }
      row.self += step.frame.self;
      // Only the outermost call of a recursive function adds its subtree to the cumulative value.
      if (depth === 0) row.total += step.subtotal;
      if (stack.length > 0) stack[stack.length - 1]!.subtotal += step.subtotal;
    }
  }
  const top = [...rows.values()].filter((r) => r.self > 0 || r.total > 0).sort((a, b) => b.self - a.self || b.total - a.total);
  return { tree, top, total };
}

/** A Chrome DevTools `.cpuprofile` (what `/debug/pprof/profile?format=cpuprofile` serves). */
export function summariseCpuProfile(profile: V8CpuProfile): ProfileSummary {
  const byId = new Map<number, V8CpuProfileNode>(profile.nodes.map((n) => [n.id, n]));
  const frames = new Map<number, Frame>();
  for (const node of profile.nodes) frames.set(node.id, { callFrame: node.callFrame, self: node.hitCount ?? 0, children: [] });
  let root: Frame | undefined;
  const isChild = new Set<number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) {
      const frame = frames.get(child);
      if (frame && byId.has(child)) {
        frames.get(node.id)!.children.push(frame);
        isChild.add(child);
      }
    }
  }
  for (const node of profile.nodes) if (!isChild.has(node.id)) root ??= frames.get(node.id);
  if (!root) return { tree: { name: 'all', value: 0, children: [] }, top: [], total: 0 };
  // Usually the root is V8's "(root)"; if not, it is a real frame and belongs in the graph.
  const top: Frame =
    root.callFrame.functionName === ROOT
      ? root
      : { callFrame: { functionName: ROOT, scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 }, self: 0, children: [root] };
  return summarise(top, 'all samples');
}

/** A DevTools `.heapprofile` (what `/debug/pprof/heap?format=heapprofile` serves). */
export function summariseHeapProfile(profile: V8SamplingHeapProfile): ProfileSummary {
  const convert = (root: V8SamplingHeapNode): Frame => {
    const out: Frame = { callFrame: root.callFrame, self: root.selfSize, children: [] };
    const pending: Array<[V8SamplingHeapNode, Frame]> = [[root, out]];
    while (pending.length > 0) {
      const [node, frame] = pending.pop()!;
      for (const child of node.children ?? []) {
        const converted: Frame = { callFrame: child.callFrame, self: child.selfSize, children: [] };
        frame.children.push(converted);
        pending.push([child, converted]);
      }
    }
    return out;
  };
  return summarise(convert(profile.head), 'all live bytes');
}

/** A cycle whose samples a CPU profile holds: its labels and how many samples it has. */
export interface ProfiledCycle {
  /** The cycle's correlation id. */
  id: string;
  /** Its trigger (and controller, when it had one), for the selector. */
  trigger: string;
  /** On-CPU samples labelled with it. */
  samples: number;
}

/** The cycles labelled in a `.cpuprofile` of `/debug/pprof/profile` (its `cycles`), most samples first. */
export function cyclesOf(profile: LabelledCpuProfile): ProfiledCycle[] {
  const spans = profile.cycles ?? [];
  if (spans.length === 0) return [];
  const { spanOf } = labelSamples(profile, spans, profile.cycleSegments);
  const idle = idleNodes(profile);
  const counts = new Map<number, number>();
  spanOf.forEach((span, i) => {
    if (span >= 0 && !idle.has(profile.samples[i] ?? 0)) counts.set(span, (counts.get(span) ?? 0) + 1);
  });
  const byId = new Map<string, ProfiledCycle>();
  for (const [span, samples] of counts) {
    const labels = spans[span]?.labels ?? {};
    const id = labels['correlation_id'];
    if (id === undefined) continue;
    const trigger = [labels['controller'], labels['trigger']].filter(Boolean).join(' · ');
    const known = byId.get(id);
    if (known) known.samples += samples;
    else byId.set(id, { id, trigger, samples });
  }
  return [...byId.values()].sort((a, b) => b.samples - a.samples);
}

/** The profile with only the samples of cycle `id` (hit counts recounted): what the view draws for one cycle. */
export function onlyCycle(profile: LabelledCpuProfile, id: string): V8CpuProfile {
  const spans = profile.cycles ?? [];
  const { spanOf } = labelSamples(profile, spans, profile.cycleSegments);
  const hits = new Map<number, number>();
  spanOf.forEach((span, i) => {
    if (span >= 0 && spans[span]?.labels['correlation_id'] === id) {
      const node = profile.samples[i] ?? 0;
      hits.set(node, (hits.get(node) ?? 0) + 1);
    }
  });
  return { ...profile, nodes: profile.nodes.map((node) => ({ ...node, hitCount: hits.get(node.id) ?? 0 })) };
}

function idleNodes(profile: V8CpuProfile): Set<number> {
  const idle = new Set<number>();
  for (const node of profile.nodes) if (node.callFrame.functionName === IDLE || node.callFrame.functionName === ROOT) idle.add(node.id);
  return idle;
}
