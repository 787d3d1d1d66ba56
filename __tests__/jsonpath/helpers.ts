import { JsonPathError, selectTextSliced, type CompiledTemplate, type JsonPathLimits } from '../../lib/jsonpath';

/** Runs `run` and returns the JsonPathError it throws or rejects with; anything else (or nothing) fails the test. */
export async function failure(run: () => unknown): Promise<JsonPathError> {
  try {
    await run();
  } catch (err) {
    if (err instanceof JsonPathError) return err;
    throw err;
  }
  throw new Error('expected a JsonPathError, nothing was thrown');
}

/** Text mode as one string: the pieces `selectTextSliced` answers, joined. */
export async function selectText(template: CompiledTemplate, data: unknown, limits?: Partial<JsonPathLimits>): Promise<string> {
  return (await selectTextSliced(template, data, limits)).join('');
}
