import type { HealthCheckReport, IntrospectionState } from '../state/types';
import { checkStateArgument, integerOption, stringOption } from '../options';
import * as option from '../options/spec';
import { optionSpec } from '../options/spec';
import { closeOnce } from '../util/close-once';
import { formatRoundedDuration } from '../util/duration';

/** Options of {@link watchProgress}; omitted ones take {@link WATCHDOG_DEFAULTS}. */
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

/** A running watchdog, from {@link watchProgress}. */
export interface ProgressWatchdog {
  /** The liveness check's name, as `?verbose` and `/livez/<name>` show it. */
  readonly name: string;
  /**
   * Removes the check: liveness no longer looks at the activity. Settles at once (on a later
   * microtask); never rejects. Idempotent: every call answers the same promise. Fits
   * `drain({ close: [watchdog] })`.
   */
  close(): Promise<void>;
}

const WHERE = 'watchProgress';
const MAX_TIMER_MS = 2_147_483_647;

/** The options of {@link watchProgress}, declared once: kinds, ranges and defaults. */
const WATCHDOG_SPEC = optionSpec(WHERE, {
  /** The activity `createControllerMetrics` records on every completed reconciliation. */
  activity: option.string('reconciliation', 1),
  timeoutMs: option.integer(undefined, { min: 1, max: MAX_TIMER_MS, hint: 'milliseconds, required' }),
  // The defaults of these two follow timeoutMs and activity: checked once those are known.
  startupGraceMs: option.later(),
  name: option.later(),
});

/**
 * What the options of {@link watchProgress} resolve to when omitted. Frozen. `timeoutMs` has no
 * default; `startupGraceMs` defaults to `timeoutMs` and `name` to `progress-<activity>`.
 */
export const WATCHDOG_DEFAULTS = WATCHDOG_SPEC.defaults;

/** The check's name is this and the activity, unless named. */
const NAME_PREFIX = 'progress-';

/** What the watchdog calls on its state. */
const STATE_METHODS = ['progress', 'addHealthCheck'] as const;

/** {@link ProgressWatchdogOptions} checked, with {@link WATCHDOG_DEFAULTS} applied: the options {@link watchProgress} runs with. */
export function resolveWatchdogOptions(options: ProgressWatchdogOptions): Readonly<Required<ProgressWatchdogOptions>> {
  const { activity, timeoutMs, startupGraceMs, name } = WATCHDOG_SPEC.resolve(options);
  return {
    activity,
    timeoutMs,
    startupGraceMs: integerOption(WHERE, 'startupGraceMs', startupGraceMs, timeoutMs, 0, MAX_TIMER_MS, 'milliseconds'),
    name: stringOption(WHERE, 'name', name, `${NAME_PREFIX}${activity}`, 1),
  };
}

/**
 * Adds a liveness check that fails when `activity` has made no progress for `timeoutMs`: the
 * reconcile loop that silently stopped, which only a restart cures. `?verbose` says how long ago
 * progress was last seen. An idle controller is not a stuck one: tick
 * `state.recordProgress(activity)` from the idle loop. Readiness does not include this check.
 *
 * @returns The watchdog: the check's name, and `close()`, which removes the check.
 * @throws TypeError on invalid options.
 */
export function watchProgress(state: IntrospectionState, options: ProgressWatchdogOptions): ProgressWatchdog {
  checkStateArgument(WHERE, state, STATE_METHODS);
  const { activity, timeoutMs, startupGraceMs: graceMs, name } = resolveWatchdogOptions(options);
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
  const removeCheck = state.addHealthCheck(name, check, { livez: true, readyz: false });
  return { name, close: closeOnce(0, removeCheck) };
}
