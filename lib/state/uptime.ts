import { formatGoDuration } from '../util/duration';

/** The body of the `uptime` variable. */
export interface UptimeVariable {
  /** When the store was created (ISO 8601 UTC). */
  started: string;
  /** Seconds since then, with millisecond precision. */
  uptime_seconds: number;
  /** The same as a Go duration string (`1h2m3.456s`), as Go controllers print uptime. */
  uptime_string: string;
}

/** Describes the uptime of something started at `startedMs`, as seen at `nowMs`. */
export function describeUptime(startedMs: number, nowMs: number): UptimeVariable {
  const elapsed = Math.max(0, nowMs - startedMs);
  return {
    started: new Date(startedMs).toISOString(),
    uptime_seconds: Math.round(elapsed) / 1000,
    uptime_string: formatGoDuration(elapsed),
  };
}
