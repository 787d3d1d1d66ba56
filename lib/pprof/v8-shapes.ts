/**
 * The JSON shapes V8 produces, as the DevTools protocol defines them. Both profiler backends are
 * normalised to these, so DevTools and VS Code open what we serve and one converter to pprof
 * serves both.
 */

/** Where a frame's function lives. `lineNumber`/`columnNumber` are 0-based, `-1` when unknown. */
export interface V8CallFrame {
  /** Function name; empty for anonymous functions. */
  functionName: string;
  /** V8's script id, as a string (the protocol's `Runtime.ScriptId`). */
  scriptId: string;
  /** Script URL; `file://` URLs for files on disk, `node:` for built-ins, empty for natives. */
  url: string;
  /** 0-based line of the function's start. */
  lineNumber: number;
  /** 0-based column of the function's start. */
  columnNumber: number;
}

/** One node of a CPU profile's call tree. */
export interface V8CpuProfileNode {
  /** Unique id within the profile. */
  id: number;
  /** The function of this frame. */
  callFrame: V8CallFrame;
  /** Samples with this node on top of the stack. */
  hitCount: number;
  /** Ids of child nodes. */
  children?: number[];
  /** Samples per 1-based source line, when V8 recorded them. */
  positionTicks?: Array<{ line: number; ticks: number }>;
}

/** A Chrome DevTools `.cpuprofile`. Times are in microseconds on V8's monotonic clock. */
export interface V8CpuProfile {
  /** The call tree, root first. */
  nodes: V8CpuProfileNode[];
  /** Start of profiling, µs. */
  startTime: number;
  /** End of profiling, µs. */
  endTime: number;
  /** The node id on top of the stack, per sample. */
  samples: number[];
  /** µs between samples; the first is relative to `startTime`. */
  timeDeltas: number[];
}

/** One node of a sampling heap profile's allocation tree. */
export interface V8SamplingHeapNode {
  /** The allocating function. */
  callFrame: V8CallFrame;
  /** Estimated bytes of live sampled objects allocated by this frame itself. */
  selfSize: number;
  /** Unique id within the profile (the inspector provides it; the addon does not). */
  id?: number;
  /** Callees. */
  children: V8SamplingHeapNode[];
}

/** A Chrome DevTools `.heapprofile` (sampling heap profile). */
export interface V8SamplingHeapProfile {
  /** The allocation tree's root. */
  head: V8SamplingHeapNode;
  /** Individual samples (`size` is already scaled to an estimate), when the inspector gives them. */
  samples?: Array<{ size: number; nodeId: number; ordinal: number }>;
}
