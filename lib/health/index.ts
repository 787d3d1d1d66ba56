export { watchProgress, type ProgressWatchdogOptions } from './watchdog';
export { waitForCaches, type CacheSync, type CacheSyncGate, type InformerLike, type WaitForCachesOptions } from './caches';
export { drain, type Closable, type DrainOptions } from './drain';
