export { watchProgress, WATCHDOG_DEFAULTS, type ProgressWatchdog, type ProgressWatchdogOptions } from './watchdog';
export { drain, DRAIN_DEFAULTS, type Closable, type DrainOptions } from './drain';
