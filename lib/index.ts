/**
 * controller-introspection: the introspection server (health, debug variables with kubectl
 * JSONPath field selection, runtime profiling) and the Prometheus metrics endpoint of a
 * Kubernetes controller, as Express routers the host mounts on its own ports.
 *
 * @packageDocumentation
 */
export { createIntrospectionState, BUILTIN_VARS, CONFIG_GATE, STATE_DEFAULTS, type IntrospectionStateOptions } from './state/store';
export {
  UnknownVariableError,
  type IntrospectionState,
  type IntrospectionStateReader,
  type ControllerConfig,
  type AuxFile,
  type AuxFilesInput,
  type ControllerEvent,
  type EventDetails,
  type EventQuery,
  type EventPage,
  type EventReadOptions,
  type PublishEventOptions,
  type EventListener,
  type EventStats,
  type VarProvider,
  type PublishVarOptions,
  type HealthCheck,
  type HealthCheckOptions,
  type HealthCheckResult,
  type HealthCheckReport,
  type ProgressRecord,
  type ReadinessGate,
  type ReadinessGateStatus,
  type RegisteredHealthCheck,
  type VarReading,
  type ReadVarOptions,
  type Timestamp,
} from './state/types';
export { REDACTED } from './state/redaction';
export type { CredentialMetadata, CredentialsVariable } from './state/credentials';
export type { UptimeVariable } from './state/uptime';
export {
  createIntrospectionRouter,
  INTROSPECTION_ROUTER_DEFAULTS,
  type IntrospectionRouter,
  type IntrospectionRouterOptions,
  type IntrospectionWatchOptions,
  type IntrospectionLimits,
  type IntrospectionRouterState,
} from './introspection/router';
export { DEFAULT_JSONPATH_LIMITS, type JsonPathLimits } from './jsonpath';
export { HttpError } from './http/errors';
export * from './metrics';
export {
  createPprofRouter,
  isProfiling,
  PPROF_DEFAULTS,
  TRACE_DEFAULTS,
  type PprofRouter,
  type PprofOptions,
  type ProfilerChoice,
  type TraceOptions,
  type BackendName,
  type HeapProfilerChoice,
  type HeapSamples,
  type HeapReaderName,
} from './pprof';
export { createAccessGuard, type AccessGuardOptions } from './http/access-guard';
export {
  watchProgress,
  waitForCaches,
  drain,
  WATCHDOG_DEFAULTS,
  CACHE_WAIT_DEFAULTS,
  DRAIN_DEFAULTS,
  type ProgressWatchdogOptions,
  type CacheSync,
  type CacheSyncGate,
  type InformerLike,
  type WaitForCachesOptions,
  type Closable,
  type DrainOptions,
} from './health';
export {
  createPipeline,
  type CycleSpec,
  type CycleResult,
  type PhaseStatus,
  type PipelineOptions,
  type ReconciliationPipeline,
  createWorkQueue,
  WORK_QUEUE_DEFAULTS,
  QUEUE_PROCESSING_DEFAULTS,
  type WorkQueue,
  type WorkQueueOptions,
  type QueueProcessing,
  type QueueProcessingOptions,
} from './pipeline';
