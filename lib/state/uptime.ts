/** The body of the `uptime` variable. */
export interface UptimeVariable {
  /** When the store was created (ISO 8601 UTC). */
  started: string;
  /** Seconds since then, with millisecond precision. */
  uptime_seconds: number;
  /** The same as a Go duration string (`1h2m3.456s`), as Go controllers print uptime. */
  uptime_string: string;
}

/** Formats milliseconds the way Go's `time.Duration.String` does, to millisecond precision. */
function formatGoDuration(ms: number): string {
  if (ms <= 0) return '0s';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const totalMs = Math.round(ms);
  const hours = Math.floor(totalMs / 3_600_000);
  const minutes = Math.floor((totalMs % 3_600_000) / 60_000);
  const seconds = (totalMs % 60_000) / 1000;
  const secondsText = `${Number.isInteger(seconds) ? seconds : seconds.toFixed(3).replace(/0+$/, '')}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
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
