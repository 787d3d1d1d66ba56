export { watchProgress, WATCHDOG_DEFAULTS, type ProgressWatchdogOptions } from './watchdog';
export {
  waitForCaches,
  CACHE_WAIT_DEFAULTS,
  type CacheSync,
  type CacheSyncGate,
  type InformerLike,
  type WaitForCachesOptions,
} from './caches';
export { drain, DRAIN_DEFAULTS, type Closable, type DrainOptions } from './drain';
