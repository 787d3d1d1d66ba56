import type { HealthCheckReport, IntrospectionState } from '../state/types';
import { formatRoundedDuration } from '../util/duration';

/** Options of {@link watchProgress}. */
export interface ProgressWatchdogOptions {
  /**
   * The activity to watch, as recorded with `state.recordProgress(activity)`. Default
   * `reconciliation`, which `createControllerMetrics` (given this state) records on every
   * completed cycle.
   */
  activity?: string;
  /** Liveness fails when the activity has not progressed for this long. Milliseconds, required. */
  timeoutMs: number;
  /**
   * After start-up, liveness passes for this long even with no progress yet (informers listing,
   * first render). Milliseconds; default `timeoutMs`.
   */
  startupGraceMs?: number;
  /** The check's name in `?verbose` and at `/livez/<name>`. Default `progress-<activity>`. */
  name?: string;
}

function positiveInteger(value: unknown, option: string, allowZero = false): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < (allowZero ? 0 : 1) || value > 2_147_483_647) {
    throw new TypeError(
      `watchProgress: ${option} must be ${allowZero ? 'a non-negative' : 'a positive'} integer number of milliseconds, got ${String(value)}`,
    );
  }
  return value;
}

const KNOWN_OPTIONS = ['activity', 'timeoutMs', 'startupGraceMs', 'name'];

/**
 * Adds a liveness check that fails when `activity` has made no progress for `timeoutMs`: the
 * reconcile loop that silently stopped, which only a restart cures. `?verbose` says how long ago
 * progress was last seen. An idle controller is not a stuck one: tick
 * `state.recordProgress(activity)` from the idle loop. Readiness does not include this check.
 *
 * @returns A function that removes the check.
 * @throws TypeError on invalid options.
 */
export function watchProgress(state: IntrospectionState, options: ProgressWatchdogOptions): () => void {
  if (options === null || typeof options !== 'object') throw new TypeError('watchProgress: options must be an object with timeoutMs');
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.includes(key))
      throw new TypeError(`watchProgress: unknown option "${key}"; known options: ${KNOWN_OPTIONS.join(', ')}`);
  }
  const activity = options.activity ?? 'reconciliation';
  if (typeof activity !== 'string') throw new TypeError('watchProgress: activity must be a string');
  const timeoutMs = positiveInteger(options.timeoutMs, 'timeoutMs');
  const graceMs = options.startupGraceMs === undefined ? timeoutMs : positiveInteger(options.startupGraceMs, 'startupGraceMs', true);
  const createdAt = performance.now();

  const check = (): HealthCheckReport => {
    const sinceStart = performance.now() - createdAt;
    const last = state.progress().find((p) => p.activity === activity);
    if (last === undefined) {
      if (sinceStart <= graceMs)
        return { ok: true, detail: `no ${activity} progress yet; start-up grace ends in ${formatRoundedDuration(graceMs - sinceStart)}` };
      return {
        ok: false,
        detail: `no ${activity} progress since start-up ${formatRoundedDuration(sinceStart)} ago (start-up grace ${formatRoundedDuration(graceMs)})`,
      };
    }
    if (last.ageMs <= timeoutMs || sinceStart <= graceMs)
      return { ok: true, detail: `last ${activity} progress ${formatRoundedDuration(last.ageMs)} ago` };
    return {
      ok: false,
      detail: `no ${activity} progress for ${formatRoundedDuration(last.ageMs)} (timeout ${formatRoundedDuration(timeoutMs)}, last at ${last.at})`,
    };
  };
  return state.addHealthCheck(options.name ?? `progress-${activity}`, check, { livez: true, readyz: false });
}
