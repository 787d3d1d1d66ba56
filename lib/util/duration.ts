/**
 * Milliseconds as Go's `time.Duration.String` writes them, to millisecond precision: `1h2m3.456s`,
 * `3m20s`, `850ms`, `0s`. The one spelling of a duration in this package's output (the `uptime`
 * variable, probe details), the one operators of Go controllers already read.
 */
export function formatGoDuration(ms: number): string {
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

/**
 * {@link formatGoDuration} rounded the way a person reading a probe wants it: milliseconds below a
 * second, tenths of a second below a minute, whole seconds above (`850ms`, `1.2s`, `3m20s`).
 */
export function formatRoundedDuration(ms: number): string {
  if (ms < 1000) return formatGoDuration(ms);
  const precision = ms < 60_000 ? 100 : 1000;
  return formatGoDuration(Math.round(ms / precision) * precision);
}
