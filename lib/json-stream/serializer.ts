import { errorMessage } from '../util/error-message';
import { performance } from 'node:perf_hooks';
import { types } from 'node:util';
import { JsonSerializationError, pathSegment } from './errors';
import { escapeGo, quoteGo, sortKeysGo } from './go';
import { MAX_DEPTH as PROBE_DEPTH, sharedProbe, type SubtreeProbe } from './probe';

/** Construction options of {@link JsonChunker}. */
export interface JsonChunkerOptions {
  /** Target chunk length in UTF-16 code units (bytes, for ASCII text). */
  chunkChars: number;
  /** Deepest nesting of any value. Default: no limit. */
  maxDepth?: number;
  /** Deepest nesting inside values that user code produced (getters, `toJSON()`, Proxies). Default: no limit. */
  maxComputedDepth?: number;
  /** Most JSON (UTF-16 units) that user code may produce. Default: no limit. */
  maxComputedChars?: number;
  /**
   * `json` (default): the text of `JSON.stringify`. `go`: the text of Go's `json.Marshal`, as
   * kubectl prints it: keys sorted by code point, Go's HTML-safe escapes (see `go.ts`), a BigInt
   * written as its digits (Go's integers have no size limit JSON would refuse).
   */
  dialect?: 'json' | 'go';
}

/*
 * The host's plain data (own data properties of ordinary objects and arrays) is finite: it is
 * already in memory. A value that user code produces while it is being written (a getter that
 * builds a new object on every read, a Proxy, a toJSON() result) need not be: a getter returning an
 * object with the same getter is an endless structure that would stream forever while the walk's
 * stack grows. Such values are "computed"; the walk bounds how deep they nest and how much JSON they
 * produce, and says which path went over.
 */
const lookupGetter = (Object.prototype as unknown as { __lookupGetter__(key: PropertyKey): unknown }).__lookupGetter__;

// Characters JSON.stringify leaves as they are. A string made only of these needs no escaping, and
// this anchored scan is 2-4x faster than JSON.stringify(string) in V8 (measured on Node 20), which
// matters because strings are most of the bytes of a controller's state. Surrogates are excluded
// even when paired so that only JSON.stringify decides about them (it escapes lone ones).
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/** `JSON.stringify(s)` for any string, without its surrounding quotes. */
function escapeInner(s: string): string {
  if (PLAIN.test(s)) return s;
  const quoted = JSON.stringify(s);
  return quoted.slice(1, quoted.length - 1);
}

/** `JSON.stringify(s)` for any string. */
function quote(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

// Numeric tags rather than an enum: the hot loop compares them on every node.
const OBJECT = 0;
const ARRAY = 1;
type Kind = typeof OBJECT | typeof ARRAY;

/** Placeholder for a pooled frame's value; never a real value, so never matches a cycle check. */
const NO_VALUE: object = Object.freeze({});

/** One container being written. Frames are pooled: deep or wide values allocate them only once. */
class Frame {
  kind: Kind = OBJECT;
  value: object = NO_VALUE;
  /** Own enumerable string keys, captured when the object is entered (as JSON.stringify does). */
  keys: string[] = [];
  /** The next key or element to write; the one being written is `index - 1`. */
  index = 0;
  length = 0;
  /** No member written yet: decides whether a comma precedes the next one. */
  empty = true;
  /** The container is a Proxy: reading any member runs user code. */
  proxy = false;
  /** The container, or one of its ancestors, was produced by user code. */
  computed = false;
}

// Ancestors in the first frames are checked for cycles by a linear scan (as V8 does, and faster
// than a Set at the depths real state has); deeper ones also live in a Set so that a 100 000-level
// value costs O(depth), not O(depth^2).
const LINEAR_DEPTH = 64;
// Keys repeat across objects of the same shape; caching their quoted form saves the escape scan.
// Bounded so that maps keyed by ids cannot grow it without limit.
const KEY_CACHE_LIMIT = 4096;
// Work units charged per character of a string piece: escaping 64 characters costs about as much
// as visiting one small node.
const CHARS_PER_UNIT = 64;
// Subtrees, and runs of array elements, whose JSON is estimated at most this long are written by
// one native JSON.stringify call. Large enough that the call's fixed cost is noise, small enough
// that probe plus call stay far below a time slice (~0.1 ms each, measured on Node 20) and that a
// failed probe wastes little.
const NATIVE_CHARS = 16 * 1024;
// Captured at load: the fast path must be the intrinsic, whatever the host later patches.
const nativeStringify = JSON.stringify;
// Objects a probe found too large for one native call, remembered across answers. Listing an
// object's keys is one atomic step (6-10 ms for 44 000 keys, measured on Node 20), and a failed
// probe plus the walk that follows would list them twice in one slice; known here, the probe is
// skipped. Safe when stale: an object that shrank is only walked instead of written natively.
const tooLargeForNative = new WeakSet<object>();
// Objects seen with at least this many keys: listing them is one atomic step of a millisecond or
// more (0.15-0.25 µs a key on Node 20), so the next time one is entered the chunker asks for a turn
// first and the listing opens a slice instead of ending one already spent.
const MANY_KEYS = 4096;
const manyKeys = new WeakSet<object>();

/**
 * Produces the exact text of `JSON.stringify(value)` (except that `-0` keeps its sign: it is valid
 * JSON, and what Go and kubectl write), or in the `go` dialect that of Go's `json.Marshal`, in
 * chunks, in bounded synchronous
 * steps, with an explicit stack (no recursion, so nesting depth is limited only by memory).
 *
 * Small subtrees and runs of small array elements are handed to
 * `JSON.stringify` itself, which is much faster than walking them here even with the probe that
 * admits only values for which that is exact and runs no user code (see {@link SubtreeProbe}):
 * a 49 MB controller state is written in about 20 % less time. The rest is walked here.
 *
 * It does no I/O and never yields by itself: callers drive it with {@link step} and decide when to
 * write and when to give the event loop a turn.
 */
export class JsonChunker {
  /** True once the last chunk has been returned. */
  done = false;
  /** Nodes (values and string pieces) visited so far; lets callers bound their work. */
  visited = 0;
  /**
   * Set when {@link step} stopped early because its next step is a long atomic one (listing the
   * keys of an object known to have thousands): the caller should give the event loop a turn
   * before the next call, so that step starts a slice. Cleared by the next {@link step}.
   */
  wantsTurn = false;
  /** Characters written by native `JSON.stringify` calls, and the time they took: what it costs here. */
  nativeChars = 0;
  nativeMs = 0;

  private readonly chunkChars: number;
  private readonly maxDepth: number;
  private readonly maxComputedDepth: number;
  private readonly maxComputedChars: number;
  /** Computed frames on the stack (they are all above the first one). */
  private computedDepth = 0;
  /** JSON written for computed values so far. */
  private computedChars = 0;
  /** The value being written now was produced by user code (read through a getter or a Proxy, or returned by toJSON). */
  private producedByCode = false;
  /** Strings at least this long are written piece by piece instead of escaped in one go. */
  private readonly splitAt: number;
  /** Go's dialect: no native runs (native JSON.stringify writes neither its key order nor its escapes). */
  private readonly go: boolean;
  private readonly quote: (s: string) => string;
  private readonly escapeInner: (s: string) => string;
  private readonly root: unknown;
  private started = false;
  private readonly stack: Frame[] = [];
  private depth = 0;
  private readonly deep = new Set<object>();
  private readonly keyCache = new Map<string, string>();
  /** From the last failed probe: containers that will fail again, innermost first. */
  private knownToFail: object[] = [];
  /** The run of array elements being gathered for one native call (reused). */
  private readonly run: unknown[] = [];
  /** An element read after a run that it could not join, to write once the run's text is out. */
  private pending: unknown;
  private hasPending = false;
  /** An object with many keys whose entry was put off to the next step (see {@link wantsTurn}). */
  private deferred: { prefix: string; value: object; producedByCode: boolean } | undefined;
  /** Text not yet handed out. */
  private buf = '';
  /** A completed chunk waiting to be returned by {@link step}. */
  private ready: string | undefined;
  /** A long string being written piece by piece, and where the next piece starts. */
  private str: string | undefined;
  private strPos = 0;
  /** Whether {@link str} is JSON text already (a natively written subtree) rather than a string to quote. */
  private strIsJson = false;
  /** Decides which values JSON.stringify may write (see {@link writeNativeRun}). */
  private readonly probe: SubtreeProbe = sharedProbe;
  private budget = 0;

  constructor(value: unknown, options: JsonChunkerOptions) {
    this.root = value;
    this.chunkChars = options.chunkChars;
    this.maxDepth = options.maxDepth ?? Infinity;
    this.maxComputedDepth = options.maxComputedDepth ?? Infinity;
    this.maxComputedChars = options.maxComputedChars ?? Infinity;
    this.go = options.dialect === 'go';
    this.quote = this.go ? quoteGo : quote;
    this.escapeInner = this.go ? escapeGo : escapeInner;
    // Short enough that escaping one piece stays far below a time slice (1-4 ns per character
    // measured on Node 20), long enough that the per-piece overhead is noise.
    this.splitAt = Math.max(16, Math.min(this.chunkChars >> 2, 1 << 16));
  }

  /**
   * Does up to `units` of work (about one small node each). Returns the next chunk as soon as one
   * is complete (the last one when {@link done} becomes true), or `undefined` when the budget ran
   * out first.
   *
   * @throws {JsonSerializationError} for cycles, BigInt, a top-level value with no JSON form, or
   *   when a getter or `toJSON()` throws (the original error is the `cause`).
   */
  step(units: number): string | undefined {
    if (this.done) return undefined;
    this.budget = units;
    this.wantsTurn = false;
    if (this.buf.length >= this.chunkChars) this.handOut();
    try {
      while (this.ready === undefined && this.budget > 0 && !this.wantsTurn) {
        if (this.deferred !== undefined) this.enterDeferred();
        else if (this.str !== undefined) this.writeStringPiece();
        else if (this.hasPending) this.writePending();
        else if (this.depth > 0) this.advance(this.stack[this.depth - 1]);
        else if (!this.started) this.writeRoot();
        else {
          this.ready = this.buf;
          this.buf = '';
          this.done = true;
        }
      }
    } catch (err) {
      // The walk cannot resume from the middle of a failed node.
      this.done = true;
      if (err instanceof JsonSerializationError) throw err;
      const message = errorMessage(err);
      throw new JsonSerializationError(this.currentPath(), 'threw', `serializing threw: ${message}`, { cause: err });
    }
    const chunk = this.ready;
    this.ready = undefined;
    return chunk;
  }

  private writeRoot(): void {
    this.started = true;
    this.budget--;
    this.visited++;
    const root = this.root;
    if (!this.go && typeof root === 'object' && root !== null && this.fitsNativeMember(root)) {
      this.writeNative('', root);
      return;
    }
    const value = this.prepare('', this.root);
    if (isSkipped(value)) {
      throw new JsonSerializationError(
        '$',
        'no-value',
        `the value has no JSON form (${describe(value)}); JSON.stringify would return undefined`,
      );
    }
    this.writeValue('', value);
    this.producedByCode = false;
  }

  /** Writes the next member of the innermost container, or closes it. */
  private advance(frame: Frame): void {
    this.budget--;
    this.visited++;
    if (frame.kind === ARRAY) {
      if (frame.index === frame.length) {
        this.pop();
        this.emit(']');
        return;
      }
      const index = frame.index++;
      const holder = frame.value as Record<number, unknown>;
      // Index getters on arrays are rare enough to leave to the Proxy check.
      this.producedByCode = frame.proxy;
      const member = holder[index];
      const prefix = index === 0 ? '' : ',';
      if (this.go || !this.writeNativeRun(frame, prefix, member)) this.writeElement(holder, index, member);
      this.producedByCode = false;
      return;
    }
    const keys = frame.keys;
    if (frame.index === keys.length) {
      this.pop();
      this.emit('}');
      return;
    }
    const key = keys[frame.index++];
    const holder = frame.value as Record<string, unknown>;
    this.producedByCode = frame.proxy || lookupGetter.call(holder, key) !== undefined;
    this.writeMember(frame, key, holder[key]);
    this.producedByCode = false;
  }

  /** Writes one object member, as read from its holder. */
  private writeMember(frame: Frame, key: string, member: unknown): void {
    // Only containers are worth a native call here; the probe admits no value that JSON.stringify
    // skips, so the member is written.
    if (!this.go && typeof member === 'object' && member !== null && this.fitsNativeMember(member)) {
      this.writeNative(`${frame.empty ? '' : ','}${this.quoteKey(key)}:`, member);
      frame.empty = false;
      return;
    }
    const value = this.prepare(key, member);
    if (isSkipped(value)) return;
    const prefix = `${frame.empty ? '' : ','}${this.quoteKey(key)}:`;
    frame.empty = false;
    this.writeValue(prefix, value);
  }

  /**
   * Writes `first` (the array element just read) and the elements after it with one native
   * `JSON.stringify` call, as long as each passes the probe (see {@link SubtreeProbe}) and the run
   * stays about {@link NATIVE_CHARS} long. Returns false, having done nothing observable, when
   * `first` itself does not pass; an element after it that does not pass is written by the walker
   * from the value already read, since reading it again could run a getter twice.
   *
   * Elements are passed as read from the array, before `toJSON()`: the probe admits no `toJSON`
   * but an unmodified Date's, which ignores its key, so JSON.stringify applying it is exact.
   */
  private writeNativeRun(frame: Frame, prefix: string, first: unknown): boolean {
    let fit = this.fitsNative(first, NATIVE_CHARS);
    if (fit < 0) return false;
    const run = this.run;
    const holder = frame.value as Record<number, unknown>;
    let left = NATIVE_CHARS;
    let element = first;
    for (;;) {
      run.push(element);
      left -= NATIVE_CHARS - fit;
      // The run may end one element past its target: elements are measured on their own, so
      // none is read without being written here.
      if (left <= 0 || frame.index === frame.length || this.budget <= 0) break;
      const index = frame.index++;
      element = holder[index];
      fit = this.fitsNative(element, NATIVE_CHARS); // charges the element and its contents
      if (fit < 0) {
        this.writeNative(prefix, run);
        run.length = 0;
        // Written after the run's text, once that is out (it may have completed a chunk, or be
        // going out piece by piece).
        if (this.str === undefined && this.ready === undefined) this.writeElement(holder, index, element);
        else {
          this.hasPending = true;
          this.pending = element;
        }
        return true;
      }
    }
    this.writeNative(prefix, run);
    run.length = 0;
    return true;
  }

  /** Writes the element that {@link writeNativeRun} read but could not add to its run. */
  private writePending(): void {
    const frame = this.stack[this.depth - 1];
    const element = this.pending;
    this.pending = undefined;
    this.hasPending = false;
    this.writeElement(frame.value as Record<number, unknown>, frame.index - 1, element);
  }

  /** Writes an array element (as read from `holder`) the way JSON.stringify does, with the walker. */
  private writeElement(holder: Record<number, unknown>, index: number, member: unknown): void {
    const value = this.prepare(index, member);
    const prefix = index === 0 ? '' : ',';
    if (isSkipped(value)) this.emit(`${prefix}null`);
    else this.writeValue(prefix, value);
  }

  /** Whether an object member (or the root) can be written natively, remembering large objects. */
  private fitsNativeMember(member: object): boolean {
    if (tooLargeForNative.has(member)) return false;
    if (this.fitsNative(member, NATIVE_CHARS) >= 0) return true;
    if (!this.probe.refused && !Array.isArray(member)) tooLargeForNative.add(member);
    return false;
  }

  /**
   * The probe's verdict on `value` (see {@link SubtreeProbe.measure}), with its work charged to
   * the step; a value met on the path of an earlier failed probe fails without being probed.
   */
  private fitsNative(value: unknown, budget: number): number {
    // A native write nests up to the probe's depth unchecked: near the depth limit, walk instead.
    if (this.depth + PROBE_DEPTH >= this.maxDepth) return -1;
    const probe = this.probe;
    const known = this.knownToFail;
    if (known.length !== 0 && known[known.length - 1] === value) {
      known.pop();
      return -1;
    }
    const left = probe.measure(value, budget);
    this.budget -= probe.nodes;
    this.visited += probe.nodes;
    // The containers on the way to where the probe stopped fail again; the walker enters them
    // without probing them (the innermost is met last). `value` itself is walked next.
    if (left < 0 && probe.failedPath.length > 1) this.knownToFail = probe.failedPath.slice(0, -1);
    return left;
  }

  /**
   * Writes `prefix` and the JSON.stringify text of a value the probe admitted, or of a run of
   * array elements (then without the run's brackets). Long text goes out piece by piece, like a
   * long string, so chunks keep their size.
   */
  private writeNative(prefix: string, value: object): void {
    const started = performance.now();
    let text = nativeStringify(value);
    this.nativeMs += performance.now() - started;
    this.nativeChars += text.length;
    if (value === this.run) text = text.slice(1, text.length - 1);
    if (text.length < this.splitAt) {
      this.emit(prefix + text);
      return;
    }
    this.emit(prefix);
    this.str = text;
    this.strPos = 0;
    this.strIsJson = true;
  }

  /** Applies `toJSON()`, as SerializeJSONProperty does. */
  private prepare(key: string | number, value: unknown): unknown {
    // Functions are objects to JSON.stringify: one with a toJSON method is written as its result.
    if ((typeof value === 'object' && value !== null) || typeof value === 'bigint' || typeof value === 'function') {
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') {
        value = toJSON.call(value, String(key));
        this.producedByCode = true;
      }
    }
    return value;
  }

  /** Writes `prefix` followed by a value that is known not to be skipped. */
  private writeValue(prefix: string, value: unknown): void {
    switch (typeof value) {
      case 'string':
        this.writeString(prefix, value);
        return;
      case 'number':
        this.emit(prefix + (Object.is(value, -0) ? '-0' : Number.isFinite(value) ? `${value}` : 'null'));
        return;
      case 'boolean':
        this.emit(prefix + (value ? 'true' : 'false'));
        return;
      case 'bigint':
        if (!this.go) throw this.bigintError();
        this.emit(prefix + value.toString());
        return;
      default:
        break;
    }
    if (value === null) {
      this.emit(`${prefix}null`);
      return;
    }
    const object = value as object;
    if (Array.isArray(object)) {
      this.enter(prefix, object, ARRAY);
      return;
    }
    if (types.isBoxedPrimitive(object)) {
      // Unwrapped with the same abstract operations JSON.stringify uses (ToNumber / ToString may
      // call an overridden valueOf / toString); a boxed Symbol is an ordinary object for JSON.
      if (types.isNumberObject(object)) return this.writeValue(prefix, Number(object));
      if (types.isStringObject(object)) return this.writeValue(prefix, String(object));
      if (types.isBooleanObject(object)) return this.writeValue(prefix, Boolean.prototype.valueOf.call(object));
      if (types.isBigIntObject(object)) return this.writeValue(prefix, BigInt.prototype.valueOf.call(object));
    }
    this.enter(prefix, object, OBJECT);
  }

  private writeString(prefix: string, value: string): void {
    if (value.length < this.splitAt) {
      this.emit(prefix + this.quote(value));
      return;
    }
    this.emit(`${prefix}"`);
    this.str = value;
    this.strPos = 0;
  }

  /** Writes the next piece of a long string, sized to fill the current chunk. */
  private writeStringPiece(): void {
    const str = this.str as string;
    const start = this.strPos;
    // One unit of room stays free for the closing quote that follows the last piece.
    let end = start + Math.max(this.chunkChars - this.buf.length - 1, this.splitAt);
    if (end >= str.length) end = str.length;
    else if (isHighSurrogate(str.charCodeAt(end - 1))) end--; // keep a surrogate pair in one piece
    const last = end === str.length;
    const isJson = this.strIsJson;
    const piece = isJson ? str.slice(start, end) : this.escapeInner(str.slice(start, end));
    this.strPos = end;
    if (last) {
      this.str = undefined;
      this.strIsJson = false;
    }
    this.budget -= 1 + Math.floor((end - start) / CHARS_PER_UNIT);
    this.visited++;
    this.emit(last && !isJson ? `${piece}"` : piece);
  }

  private enterDeferred(): void {
    const { prefix, value, producedByCode } = this.deferred as NonNullable<JsonChunker['deferred']>;
    this.deferred = undefined;
    this.producedByCode = producedByCode;
    this.enter(prefix, value, OBJECT, true);
    this.producedByCode = false;
  }

  private enter(prefix: string, value: object, kind: Kind, resumed = false): void {
    if (kind === OBJECT && !resumed && manyKeys.has(value)) {
      // Nothing observable has happened since the member was read and its toJSON applied, so
      // the walk can resume right here after the turn.
      this.deferred = { prefix, value, producedByCode: this.producedByCode };
      this.wantsTurn = true;
      return;
    }
    this.checkCycle(value);
    let keys: string[] | undefined;
    let length: number;
    if (kind === ARRAY) {
      length = (value as unknown[]).length;
    } else {
      keys = this.go ? sortKeysGo(Object.keys(value)) : Object.keys(value);
      length = keys.length;
      if (length >= MANY_KEYS) manyKeys.add(value);
    }
    if (length === 0) {
      this.emit(prefix + (kind === ARRAY ? '[]' : '{}'));
      return;
    }
    const computed = this.producedByCode || this.computedDepth > 0;
    this.checkDepth(computed);
    let frame = this.stack[this.depth];
    if (frame === undefined) {
      frame = new Frame();
      this.stack.push(frame);
    }
    frame.kind = kind;
    frame.value = value;
    frame.proxy = types.isProxy(value);
    frame.computed = computed;
    if (computed) this.computedDepth++;
    if (keys !== undefined) frame.keys = keys;
    frame.index = 0;
    frame.length = length;
    frame.empty = true;
    if (this.depth >= LINEAR_DEPTH) this.deep.add(value);
    this.depth++;
    this.emit(prefix + (kind === ARRAY ? '[' : '{'));
  }

  private pop(): void {
    this.depth--;
    const frame = this.stack[this.depth];
    if (frame.computed) this.computedDepth--;
    if (this.depth >= LINEAR_DEPTH) this.deep.delete(frame.value);
    // Let a finished subtree be collected while a long stream goes on.
    frame.value = NO_VALUE;
    frame.keys = [];
  }

  private checkCycle(value: object): void {
    const linear = Math.min(this.depth, LINEAR_DEPTH);
    for (let i = 0; i < linear; i++) {
      if (this.stack[i].value === value) throw this.cycleError(i);
    }
    if (this.depth > LINEAR_DEPTH && this.deep.has(value)) {
      for (let i = LINEAR_DEPTH; i < this.depth; i++) {
        if (this.stack[i].value === value) throw this.cycleError(i);
      }
    }
  }

  /**
   * Appends text to the pending chunk. When the text would push the chunk past its target, the
   * pending chunk is completed first, so chunks stay within `chunkChars` unless a single piece
   * (a long key, or heavy escaping) is larger on its own.
   */
  private emit(text: string): void {
    if (this.producedByCode || this.computedDepth > 0) {
      this.computedChars += text.length;
      if (this.computedChars > this.maxComputedChars) throw this.computedTooLarge();
    }
    const buf = this.buf;
    if (buf.length !== 0 && buf.length + text.length > this.chunkChars) {
      this.ready = buf;
      this.buf = text;
      return;
    }
    this.buf = buf + text;
    if (this.buf.length >= this.chunkChars) this.handOut();
  }

  private handOut(): void {
    if (this.ready !== undefined) return;
    this.ready = this.buf;
    this.buf = '';
  }

  private quoteKey(key: string): string {
    let quoted = this.keyCache.get(key);
    if (quoted === undefined) {
      quoted = this.quote(key);
      if (this.keyCache.size < KEY_CACHE_LIMIT) this.keyCache.set(key, quoted);
    }
    return quoted;
  }

  /** JSONPath of the value being written: every open container's current member. */
  private currentPath(frames = this.depth): string {
    let path = '$';
    for (let i = 0; i < frames; i++) {
      const frame = this.stack[i];
      const current = frame.index - 1;
      if (current < 0) break;
      path += pathSegment(frame.kind === ARRAY ? current : frame.keys[current]);
    }
    return path;
  }

  private cycleError(ancestor: number): JsonSerializationError {
    return new JsonSerializationError(
      this.currentPath(),
      'cycle',
      `cycle (the value is its own ancestor at ${this.currentPath(ancestor)}); JSON cannot represent it`,
    );
  }

  /** Refuses to open one more container past the depth limits. */
  private checkDepth(computed: boolean): void {
    if (this.depth >= this.maxDepth) {
      throw new JsonSerializationError(this.currentPath(), 'too-deep', `the value nests deeper than ${this.maxDepth} levels`);
    }
    if (computed && this.computedDepth >= this.maxComputedDepth) {
      throw new JsonSerializationError(
        this.currentPath(),
        'too-deep',
        `values produced by getters, toJSON() or Proxies nest deeper than ${this.maxComputedDepth} levels (an endlessly generated structure?); publish plain data`,
      );
    }
  }

  private computedTooLarge(): JsonSerializationError {
    return new JsonSerializationError(
      this.currentPath(),
      'too-large',
      `getters, toJSON() or Proxies produced more than ${this.maxComputedChars} characters of JSON (an endlessly generated structure?); publish plain data`,
    );
  }

  private bigintError(): JsonSerializationError {
    return new JsonSerializationError(
      this.currentPath(),
      'bigint',
      'BigInt is not JSON; convert it in the provider (for example to a string)',
    );
  }
}

function isSkipped(value: unknown): boolean {
  const type = typeof value;
  return type === 'undefined' || type === 'function' || type === 'symbol';
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function describe(value: unknown): string {
  return value === undefined ? 'undefined' : `a ${typeof value}`;
}
