import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { errorMessage } from '../../util/error-message';
import type { V8CallFrame, V8CpuProfile, V8SamplingHeapNode, V8SamplingHeapProfile } from '../v8-shapes';

/** What the index says about source mapping. */
export interface SourceMapStatus {
  /** Scripts whose frames were mapped through a source map so far. */
  mappedScripts: number;
  /** Scripts whose map could not be used, each said once, with why (the frames stay unmapped). */
  failures: Array<{ script: string; reason: string }>;
}

interface WorkerResult {
  url: string;
  error?: string;
  none?: boolean;
  mapped?: Array<{ source: string; line: number; column: number; name: string | null } | null>;
}

/** Maps positions of frames; the identity for frames it cannot map. */
export type FrameMap = (frame: V8CallFrame) => V8CallFrame;

// Decoded maps kept by the worker: a bundle's map decodes to tens of MB, so a few dozen at most.
const MAX_SCRIPTS = 64;
const MAX_FAILURES_SHOWN = 32;
const WORKER_FILE = path.join(__dirname, 'worker.js');

function positionKey(url: string, line: number, column: number): string {
  return `${url}\u0000${line}\u0000${column}`;
}

/** Only scripts on disk can have maps we can read; `node:internal/...` and eval'd code cannot. */
function mappable(url: string): boolean {
  return url.startsWith('file:') || url.startsWith('/');
}

/**
 * Maps profile frames to the host's original sources (TypeScript, or code before bundling) through
 * the scripts' source maps, inline or in `.map` files. All reading, parsing and decoding happens in
 * a worker thread, so a large map never stalls the host's event loop; the worker keeps decoded
 * maps for the scripts it has seen (bounded) and is started on first use.
 */
export class SourceMapper {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(results: WorkerResult[]): void; reject(err: Error): void }>();
  private readonly mapped = new Set<string>();
  private readonly failures = new Map<string, string>();

  constructor(private readonly timeoutMs = 30_000) {}

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_FILE, { workerData: { maxScripts: MAX_SCRIPTS } });
    // Never what keeps the host alive.
    worker.unref();
    worker.on('message', ({ id, results }: { id: number; results: WorkerResult[] }) => {
      this.pending.get(id)?.resolve(results);
      this.pending.delete(id);
    });
    const fail = (err: Error): void => {
      this.worker = undefined;
      for (const { reject } of this.pending.values()) reject(err);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the source-map worker exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private ask(scripts: Array<{ url: string; positions: Array<[number, number]> }>): Promise<WorkerResult[]> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<WorkerResult[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`source maps were not read within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      timer.unref();
      this.pending.set(id, {
        resolve: (results) => {
          clearTimeout(timer);
          resolve(results);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      worker.postMessage({ id, scripts });
    });
  }

  private fail(script: string, reason: string): void {
    if (this.failures.has(script) || this.failures.size >= MAX_FAILURES_SHOWN) return;
    this.failures.set(script, reason);
  }

  /** Looks up every distinct position of `frames` once; never rejects (unmappable frames stay as they are). */
  async mapFrames(frames: Iterable<V8CallFrame>): Promise<FrameMap> {
    const byUrl = new Map<string, Map<string, [number, number]>>();
    for (const frame of frames) {
      if (!mappable(frame.url)) continue;
      let positions = byUrl.get(frame.url);
      if (!positions) byUrl.set(frame.url, (positions = new Map()));
      positions.set(`${frame.lineNumber}:${frame.columnNumber}`, [frame.lineNumber, frame.columnNumber]);
    }
    if (byUrl.size === 0) return (frame) => frame;
    const scripts = [...byUrl].map(([url, positions]) => ({ url, positions: [...positions.values()] }));
    let results: WorkerResult[];
    try {
      results = await this.ask(scripts);
    } catch (err) {
      this.fail('(all scripts)', errorMessage(err));
      return (frame) => frame;
    }
    const table = new Map<string, { frame: Omit<V8CallFrame, 'functionName'>; name: string | null }>();
    results.forEach((result, i) => {
      if (result.error !== undefined) this.fail(result.url, result.error);
      if (!result.mapped) return;
      this.mapped.add(result.url);
      const positions = scripts[i]!.positions;
      result.mapped.forEach((original, j) => {
        if (!original) return;
        const [line, column] = positions[j]!;
        const url = path.isAbsolute(original.source) ? pathToFileURL(original.source).href : original.source;
        // scriptId 0: frames of two scripts that map to the same original function are one function.
        table.set(positionKey(result.url, line, column), {
          frame: { scriptId: '0', url, lineNumber: original.line - 1, columnNumber: original.column },
          name: original.name,
        });
      });
    });
    return (frame) => {
      const found = table.get(positionKey(frame.url, frame.lineNumber, frame.columnNumber));
      if (!found) return frame;
      // A name from the map only replaces a name V8 has (a minifier's `l` for `parseConfig`): at an
      // anonymous function's position the map names whatever identifier happens to be there.
      return { ...found.frame, functionName: frame.functionName && found.name ? found.name : frame.functionName };
    };
  }

  /** A copy of the CPU profile with its frames mapped; per-line ticks are dropped for mapped frames. */
  async mapCpuProfile(profile: V8CpuProfile): Promise<V8CpuProfile> {
    const map = await this.mapFrames(profile.nodes.map((n) => n.callFrame));
    return {
      ...profile,
      nodes: profile.nodes.map((node) => {
        const callFrame = map(node.callFrame);
        if (callFrame === node.callFrame) return node;
        const { positionTicks: _generatedLines, ...rest } = node;
        return { ...rest, callFrame };
      }),
    };
  }

  /** A copy of the heap profile with its frames mapped. */
  async mapHeapProfile(profile: V8SamplingHeapProfile): Promise<V8SamplingHeapProfile> {
    const frames: V8CallFrame[] = [];
    const pending: V8SamplingHeapNode[] = [profile.head];
    while (pending.length > 0) {
      const node = pending.pop()!;
      frames.push(node.callFrame);
      for (const child of node.children ?? []) pending.push(child);
    }
    const map = await this.mapFrames(frames);
    const copy = (node: V8SamplingHeapNode): V8SamplingHeapNode => ({ ...node, callFrame: map(node.callFrame), children: [] });
    const head = copy(profile.head);
    const work: Array<[V8SamplingHeapNode, V8SamplingHeapNode]> = [[profile.head, head]];
    while (work.length > 0) {
      const [from, to] = work.pop()!;
      for (const child of from.children ?? []) {
        const copied = copy(child);
        to.children.push(copied);
        work.push([child, copied]);
      }
    }
    return { ...profile, head };
  }

  /** For the index. */
  status(): SourceMapStatus {
    return { mappedScripts: this.mapped.size, failures: [...this.failures].map(([script, reason]) => ({ script, reason })) };
  }

  /** Stops the worker. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}
