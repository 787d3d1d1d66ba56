/**
 * The one way tests wait for something that happens on its own time: poll a probe until it
 * answers, with a deadline, and on failure say what was seen last.
 */
import { inspect } from 'node:util';

/** Options of {@link eventually}. */
export interface EventuallyOptions {
  /** Give up after this long. Default 5000 ms. */
  timeoutMs?: number;
  /** Pause between tries. Default 10 ms. */
  intervalMs?: number;
  /** What is awaited, for the failure message. */
  what?: string;
}

/** What {@link eventually} resolves with: the probe's answer, never a "not yet". */
export type Answer<T> = Exclude<Awaited<T>, undefined | null | false>;

function describe(last: { value: unknown } | { error: unknown }): string {
  if ('error' in last) {
    const error = last.error;
    return `error: ${error instanceof Error ? error.message : inspect(error, { depth: 4, breakLength: Infinity })}`;
  }
  return `value: ${inspect(last.value, { depth: 4, breakLength: Infinity, maxStringLength: 500 })}`;
}

/**
 * Calls `probe` until it answers, and resolves with the answer. `undefined`, `null`, `false` or a
 * throw mean "not yet", so a boolean probe works as a condition, and a probe that throws says why
 * it is not there yet. Once `timeoutMs` has passed (the probe is tried one last time at the
 * deadline), rejects with an error naming `what` and the last value or error seen.
 */
export async function eventually<T>(probe: () => T, options: EventuallyOptions = {}): Promise<Answer<T>> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const intervalMs = options.intervalMs ?? 10;
  const deadline = performance.now() + timeoutMs;
  let tries = 0;
  for (;;) {
    tries++;
    let last: { value: unknown } | { error: unknown };
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value as Answer<T>;
      last = { value };
    } catch (error) {
      last = { error };
    }
    const left = deadline - performance.now();
    if (left <= 0) {
      const cause = 'error' in last ? last.error : undefined;
      throw new Error(`${options.what ?? 'condition'} not met within ${timeoutMs} ms (${tries} tries); last ${describe(last)}`, { cause });
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, left)));
  }
}
