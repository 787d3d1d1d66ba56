// Platform-neutral: the debug console's page builds the same pprof in a browser. Gzip, which
// needs Node's zlib, is pprof-encoder.ts's.
import {
  Function as PprofFunction,
  Location,
  Profile,
  StringTable,
  ValueType,
  emptyTableToken,
  type ProfileInput,
  type SampleInput,
} from 'pprof-format';
import { cooperativeTicker } from '../util/cooperative';
import type { V8CallFrame } from './v8-shapes';

/** A pprof sample type or period type, as plain strings. */
export interface ValueTypeSpec {
  /** e.g. `cpu`, `inuse_space`. */
  type: string;
  /** e.g. `nanoseconds`, `bytes`, `count`. */
  unit: string;
}

/** A sample: a stack (leaf first) and one value per sample type. */
export interface SampleSpec {
  /** Location ids from {@link PprofBuilder.location}, leaf first as pprof expects. */
  locationIds: number[];
  /** One value per sample type. */
  values: number[];
  /** Numeric labels, e.g. `{ key: 'p99', num: 1234, unit: 'nanoseconds' }`. */
  numLabels?: Array<{ key: string; num: number; unit?: string }>;
  /** String labels, e.g. `{ key: 'correlation_id', str: '…' }` (`go tool pprof -tags`, `-tagfocus`). */
  labels?: Array<{ key: string; str: string }>;
}

/** Everything about a profile except its samples and tables. */
export interface ProfileSpec {
  /** Sample types, in value order. */
  sampleTypes: ValueTypeSpec[];
  /** The samples. */
  samples: SampleSpec[];
  /** What one period measures, e.g. `cpu/nanoseconds`. */
  periodType?: ValueTypeSpec;
  /** The sampling period in `periodType` units. */
  period?: number;
  /** Wall-clock collection time, ms since the epoch. */
  timeMs?: number;
  /** Collection duration, ns. */
  durationNanos?: number;
  /** Free-form lines shown by `go tool pprof -comments`. */
  comments?: string[];
}

/**
 * Readable file name for a V8 script URL: a path for `file://`, the URL otherwise. Decodes as
 * Node's `fileURLToPath` does (which a browser lacks), and keeps the URL where that would throw: a
 * remote host, an encoded `/`, a malformed escape. A drive letter (`file:///C:/app.js`, only written
 * by V8 on Windows) gives a Windows path.
 */
export function fileNameOf(url: string): string {
  if (!url.startsWith('file:')) return url;
  try {
    const parsed = new URL(url);
    if ((parsed.host !== '' && parsed.host !== 'localhost') || /%2f/i.test(parsed.pathname)) return url;
    const path = decodeURIComponent(parsed.pathname);
    return /^\/[A-Za-z]:\//.test(path) ? path.slice(1).replaceAll('/', '\\') : path;
  } catch {
    return url;
  }
}

/** The name pprof shows for a frame; V8 leaves anonymous functions unnamed. */
export function functionNameOf(frame: V8CallFrame): string {
  return frame.functionName || '(anonymous)';
}

/**
 * A location's address: a hash of what it names (function, file, lines, V8's script and column),
 * the same in every profile, never 0. JavaScript frames have no machine address, but continuous
 * profilers identify a sample by its locations' addresses, not their names: Grafana Alloy's
 * `pyroscope.scrape` takes differences of cumulative profiles (and merges samples) by the sequence of
 * addresses, so with every address 0 it would merge every stack of one depth into one sample. Two
 * 32-bit FNV-1a hashes make 53 bits, a JavaScript number: among the few thousand locations of a
 * profile, the chance of a collision is about one in a billion.
 */
export function locationAddress(key: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  const address = (a >>> 0) * 0x200000 + ((b >>> 0) >>> 11);
  return address === 0 ? 1 : address;
}

/**
 * Builds a pprof profile with deduplicated strings, functions and locations. V8 call trees repeat
 * the same function at many tree nodes; pprof wants each function and call site once.
 */
export class PprofBuilder {
  private readonly strings = new StringTable();
  private readonly functions: PprofFunction[] = [];
  private readonly functionIds = new Map<string, number>();
  private readonly locations: Location[] = [];
  private readonly locationIds = new Map<string, number>();
  // Decoding a file URL costs microseconds, and a profile names the same few scripts at every frame.
  private readonly fileNames = new Map<string, string>();

  /** Location id for a V8 call frame; `line` (1-based) overrides the function's start line. */
  frameLocation(frame: V8CallFrame, line?: number): number {
    const startLine = frame.lineNumber >= 0 ? frame.lineNumber + 1 : 0;
    const name = functionNameOf(frame);
    let fileName = this.fileNames.get(frame.url);
    if (fileName === undefined) {
      fileName = fileNameOf(frame.url);
      this.fileNames.set(frame.url, fileName);
    }
    return this.location(name, fileName, startLine, line ?? startLine, `${frame.scriptId}:${frame.columnNumber}`);
  }

  /** Location id for a synthetic frame, such as a resource kind. */
  location(name: string, fileName = '', startLine = 0, line = startLine, discriminator = ''): number {
    const functionKey = `${name}\u0000${fileName}\u0000${startLine}\u0000${discriminator}`;
    let functionId = this.functionIds.get(functionKey);
    if (functionId === undefined) {
      functionId = this.functions.length + 1;
      const nameIndex = this.strings.dedup(name);
      this.functions.push(
        new PprofFunction({ id: functionId, name: nameIndex, systemName: nameIndex, filename: this.strings.dedup(fileName), startLine }),
      );
      this.functionIds.set(functionKey, functionId);
    }
    const locationKey = `${functionId}:${line}`;
    let locationId = this.locationIds.get(locationKey);
    if (locationId === undefined) {
      locationId = this.locations.length + 1;
      this.locations.push(
        new Location({ id: locationId, address: locationAddress(`${functionKey}\u0000${line}`), line: [{ functionId, line }] }),
      );
      this.locationIds.set(locationKey, locationId);
    }
    return locationId;
  }

  /** Assembles the profile. */
  build(spec: ProfileSpec): Profile {
    const valueType = (v: ValueTypeSpec): ValueType =>
      new ValueType({ type: this.strings.dedup(v.type), unit: this.strings.dedup(v.unit) });
    const sampleTypes = spec.sampleTypes.map(valueType);
    const samples: SampleInput[] = spec.samples.map((s) => ({
      locationId: s.locationIds,
      value: s.values,
      label: [
        ...(s.labels ?? []).map((l) => ({ key: this.strings.dedup(l.key), str: this.strings.dedup(l.str) })),
        ...(s.numLabels ?? []).map((l) => ({
          key: this.strings.dedup(l.key),
          num: l.num,
          numUnit: l.unit ? this.strings.dedup(l.unit) : 0,
        })),
      ],
    }));
    return new Profile({
      sampleType: sampleTypes,
      sample: samples,
      location: this.locations,
      function: this.functions,
      stringTable: this.strings,
      ...(spec.periodType ? { periodType: valueType(spec.periodType) } : {}),
      period: spec.period ?? 0,
      timeNanos: BigInt(Math.round(spec.timeMs ?? Date.now())) * 1_000_000n,
      durationNanos: Math.round(spec.durationNanos ?? 0),
      comment: (spec.comments ?? []).map((c) => this.strings.dedup(c)),
    });
  }
}

// The repeated fields that grow with the profile, in the order pprof-format itself writes them.
const LISTS = ['sampleType', 'sample', 'mapping', 'location', 'function'] as const;
// Items encoded between two looks at the clock: a sample with a 50-frame stack encodes in ~13 µs.
const ITEMS_PER_PART = 128;

/**
 * Encodes in parts that share the event loop. Protobuf lets a repeated field be split across the
 * message and parsers concatenate the pieces, so each part is a profile holding only a slice of
 * one list and an empty string table; the last part carries the string table and every scalar
 * field, once. The bytes are those of `profile.encode()`, which took 65 ms for a 3 MB profile in
 * one piece. Not gzipped: `go tool pprof` reads either, and gzip is the platform's (Node's zlib in
 * pprof-encoder.ts, the browser's CompressionStream in the console page). Aborting `signal` stops
 * it at its next yield, rejecting with the reason.
 */
export async function encodeProfile(profile: Profile, signal?: AbortSignal): Promise<Uint8Array> {
  const tick = cooperativeTicker(5, 1, signal);
  const parts: Uint8Array[] = [];
  for (const list of LISTS) {
    const items = profile[list];
    for (let start = 0; start < items.length; start += ITEMS_PER_PART) {
      const part: ProfileInput = { [list]: items.slice(start, start + ITEMS_PER_PART), stringTable: new StringTable(emptyTableToken) };
      parts.push(new Profile(part).encode());
      const pause = tick();
      if (pause) await pause;
    }
  }
  parts.push(new Profile({ ...profile, sampleType: [], sample: [], mapping: [], location: [], function: [] }).encode());
  const encoded = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    encoded.set(part, offset);
    offset += part.length;
  }
  return encoded;
}
