import { HttpError } from '../http/errors';
import { JsonStreamAbortError, measureJson } from '../json-stream/index';

function tooLarge(limit: number): HttpError {
  return new HttpError(
    413,
    `the selected value is larger than ${limit} bytes (the limits.jsonPath.maxOutputBytes limit); select less with a narrower ?field=, or fetch the variable without ?field=`,
  );
}

/**
 * Rejects with a `413` when the JSON answer to a `?field=` selection would exceed `limit` bytes.
 *
 * Text output is bounded by the engine; JSON answers are bounded here because a short template
 * can select far more than the variable holds (a union naming the same key hundreds of times, or
 * `{..}` on a deep object, whose selected subtrees overlap). The measure is the serializer's own
 * (exact, in time slices, stopping as soon as the limit is passed), so measuring never stalls the
 * host. `signal` (the client going away) stops it.
 */
export async function checkSelectionSize(value: unknown, limit: number, signal: AbortSignal): Promise<void> {
  try {
    if ((await measureJson(value, { limitBytes: limit, signal })).exceeds) throw tooLarge(limit);
  } catch (err) {
    if (err instanceof JsonStreamAbortError) return;
    throw err;
  }
}
