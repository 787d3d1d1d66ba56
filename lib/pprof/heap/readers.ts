import type { Session } from 'node:inspector/promises';
import { errorMessage } from '../../util/error-message';
import { openSession } from '../inspector-session';
import type { V8SamplingHeapNode, V8SamplingHeapProfile } from '../v8-shapes';

/** Which library reads V8's sampling heap profile. */
export type HeapReaderName = '@datadog/pprof' | 'inspector';

/**
 * One way to run and read V8's sampling heap profiler (one per isolate). `read` returns the live
 * samples without stopping sampling.
 */
export interface HeapReader {
  readonly name: HeapReaderName;
  start(intervalBytes: number): Promise<void>;
  read(): Promise<V8SamplingHeapProfile>;
  stop(): void;
}

/** The parts of @datadog/pprof's heap module we use. */
interface DatadogHeap {
  start(intervalBytes: number, stackDepth: number): void;
  stop(): void;
  v8Profile(): DatadogNode;
}

interface DatadogNode {
  name: string;
  scriptName: string;
  scriptId: number;
  lineNumber: number;
  columnNumber: number;
  allocations: Array<{ sizeBytes: number; count: number }>;
  children: DatadogNode[];
}

/** Deepest stack recorded per sample (V8's own default is 128). */
const STACK_DEPTH = 128;

let datadog: { heap: DatadogHeap } | { error: string } | undefined;

/** Loads @datadog/pprof's native heap module once; its prebuilt binaries cover Node 20 to 26, glibc and musl. */
export function loadDatadogHeap(): { heap: DatadogHeap } | { error: string } {
  if (datadog === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- optional native module, loaded on demand
      const mod = require('@datadog/pprof') as { heap: DatadogHeap };
      datadog = typeof mod.heap?.v8Profile === 'function' ? { heap: mod.heap } : { error: '@datadog/pprof has no heap.v8Profile()' };
    } catch (err) {
      datadog = { error: errorMessage(err).split('\n')[0]! };
    }
  }
  return datadog;
}

/**
 * Turns V8's allocation tree (as the addon hands it over: 1-based lines, an array of allocations per
 * node) into the DevTools shape the rest of the package reads (0-based lines, `selfSize`).
 * Iterative: a deep tree cannot overflow the stack.
 */
function toDevTools(root: DatadogNode): V8SamplingHeapProfile {
  let ids = 0;
  const convert = (node: DatadogNode): V8SamplingHeapNode => {
    let selfSize = 0;
    for (const a of node.allocations) selfSize += a.sizeBytes * a.count;
    return {
      callFrame: {
        functionName: node.name,
        scriptId: String(node.scriptId),
        url: node.scriptName,
        lineNumber: node.lineNumber - 1,
        columnNumber: node.columnNumber - 1,
      },
      selfSize,
      id: ++ids,
      children: [],
    };
  };
  const head = convert(root);
  const pending: Array<[DatadogNode, V8SamplingHeapNode]> = [[root, head]];
  while (pending.length > 0) {
    const [source, target] = pending.pop()!;
    for (const child of source.children) {
      const converted = convert(child);
      target.children.push(converted);
      pending.push([child, converted]);
    }
  }
  return { head };
}

/**
 * Reads with @datadog/pprof: V8's `GetAllocationProfile` on the running sampler, without the
 * forced full collection the inspector asks for (its `HeapProfiler.startSampling` sets
 * `kSamplingForceGC`, so every `getSamplingProfile` stalls the host for a full GC: 60-170 ms with
 * an 85 MB heap, against ~1 ms here).
 */
export function datadogHeapReader(heap: DatadogHeap): HeapReader {
  return {
    name: '@datadog/pprof',
    async start(intervalBytes) {
      heap.start(intervalBytes, STACK_DEPTH);
    },
    async read() {
      return toDevTools(heap.v8Profile());
    },
    stop() {
      heap.stop();
    },
  };
}

/**
 * Reads through an in-process inspector session (every Node build with the inspector has it). With
 * `allocations`, V8 keeps the samples of objects the garbage collector has freed, so the profile
 * holds every sampled allocation since the start (Go's `allocs`) instead of the live heap.
 */
export function inspectorHeapReader(allocations = false): HeapReader {
  let session: Session | undefined;
  return {
    name: 'inspector',
    async start(intervalBytes) {
      session ??= openSession();
      await session.post('HeapProfiler.startSampling', {
        samplingInterval: intervalBytes,
        includeObjectsCollectedByMajorGC: allocations,
        includeObjectsCollectedByMinorGC: allocations,
      });
    },
    async read() {
      const { profile } = await session!.post('HeapProfiler.getSamplingProfile');
      return profile as V8SamplingHeapProfile;
    },
    stop() {
      // Disconnecting makes V8 stop the sampler and free its samples.
      session?.disconnect();
      session = undefined;
    },
  };
}
