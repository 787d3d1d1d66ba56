import { JsonPathError } from '../../lib/jsonpath';

/** Runs `run` and returns the JsonPathError it throws; anything else (or nothing) fails the test. */
export function failure(run: () => unknown): JsonPathError {
  try {
    run();
  } catch (err) {
    if (err instanceof JsonPathError) return err;
    throw err;
  }
  throw new Error('expected a JsonPathError, nothing was thrown');
}
