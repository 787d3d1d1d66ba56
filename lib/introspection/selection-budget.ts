import { performance } from 'node:perf_hooks';
import { HttpError } from '../http/errors';
import { estimateJsonSize } from '../json-stream/index';

/** Selections up to this size are measured exactly, in one synchronous pass. */
const SYNC_MEASURE_BYTES = 256 * 1024;
/** Longest synchronous stretch of a large measurement before the event loop gets a turn. */
const SLICE_MS = 4;
/** Values visited between two clock reads. */
const VALUES_PER_CHECK = 4096;

function tooLarge(limit: number): HttpError {
  return new HttpError(
    413,
    `the selected value is larger than ${limit} bytes (the jsonPath.maxOutputBytes limit); select less with a narrower ?field=, or fetch the variable without ?field=`,
  );
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Approximate JSON length of a non-container, and pushes the members of a container onto `stack`. */
function measureOne(value: unknown, stack: unknown[]): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'object':
      break;
    default:
      // undefined, functions, symbols, BigInt: no JSON text of their own (the writer reports BigInt).
      return 0;
  }
  if (value === null) return 4;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    try {
      stack.push((value as { toJSON(): unknown }).toJSON());
    } catch {
      // The writer runs toJSON() again and reports the failure with its path.
    }
    return 0;
  }
  if (Array.isArray(value)) {
    // A huge array is over any limit by its commas alone: say so before stacking its items.
    if (value.length > SYNC_MEASURE_BYTES * 1024) return value.length;
    for (const item of value) stack.push(item === undefined ? null : item);
    return 2 + Math.max(0, value.length - 1);
  }
  const keys = Object.keys(value);
  let bytes = 2 + Math.max(0, keys.length - 1);
  for (const key of keys) {
    bytes += key.length + 3;
    stack.push((value as Record<string, unknown>)[key]);
  }
  return bytes;
}

/**
 * Rejects with a `413` when the JSON answer to a `?field=` selection would exceed `limit` bytes.
 *
 * Text output is bounded by the engine; JSON answers are bounded here because a short template
 * can select far more than the variable holds (a union naming the same key hundreds of times, or
 * `{..}` on a deep object, whose selected subtrees overlap). Small selections are measured exactly;
 * large ones by a walk that counts their JSON length closely enough to bound it (string escapes
 * are not counted), stops as soon as the limit is passed and yields to the event loop every few
 * milliseconds, so measuring never stalls the host. `signal` (the client going away) stops it.
 */
export async function checkSelectionSize(value: unknown, limit: number, signal: AbortSignal): Promise<void> {
  // The exact pass also reports a cycle or a BigInt near the start with the writer's own message.
  if (!estimateJsonSize(value, Math.min(limit, SYNC_MEASURE_BYTES)).exceeds) return;
  if (limit <= SYNC_MEASURE_BYTES) throw tooLarge(limit);
  const stack: unknown[] = [value];
  let bytes = 0;
  let sliceEnd = performance.now() + SLICE_MS;
  while (stack.length > 0) {
    for (let i = 0; i < VALUES_PER_CHECK && stack.length > 0; i++) {
      bytes += measureOne(stack.pop(), stack);
      if (bytes > limit) throw tooLarge(limit);
    }
    if (performance.now() >= sliceEnd) {
      await nextTurn();
      if (signal.aborted) return;
      sliceEnd = performance.now() + SLICE_MS;
    }
  }
}
