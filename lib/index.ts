/**
 * controller-introspection: the introspection server (health, debug variables with kubectl
 * JSONPath field selection, runtime profiling) and the Prometheus metrics endpoint of a
 * Kubernetes controller, as Express routers the host mounts on its own ports.
 *
 * Grouped by what a host does with it: push state in, serve it (introspection, profiles,
 * metrics), record reconciliation, and run probes and shutdown. Values first, then their types.
 *
 * @packageDocumentation
 */

// --- Values -----------------------------------------------------------------------------------

// Push state in.
export { createIntrospectionState, STATE_DEFAULTS, BUILTIN_VARS, CONFIG_GATE } from './state/store';
export { REDACTED } from './state/redaction';
export { UnknownVariableError } from './state/types';

// Serve it: the introspection router (health, /debug/vars, the console) and its guards.
export { createIntrospectionRouter, INTROSPECTION_ROUTER_DEFAULTS } from './introspection/router';
export { DEFAULT_JSONPATH_LIMITS } from './jsonpath';
export { createAccessGuard, ACCESS_GUARD_DEFAULTS } from './http/access-guard';
export { createKubeAuth, KUBE_AUTH_DEFAULTS } from './kubernetes';
export { HttpError } from './http/errors';
export { watchServingCertificate, SERVING_CERTIFICATE_DEFAULTS } from './tls';

// Profile it: /debug/pprof.
export { createPprofRouter, isProfiling, PPROF_DEFAULTS, TRACE_DEFAULTS } from './pprof';

// Measure it: /metrics and the controller's metric families.
export {
  createMetricsRouter,
  MetricCollectError,
  createControllerMetrics,
  CONTROLLER_METRICS_DEFAULTS,
  DEFAULT_DURATION_BUCKETS,
  DEFAULT_METRIC_PREFIX,
  controllerMetricNames,
  RECONCILE_TIME_BUCKETS,
  WORKQUEUE_DURATION_BUCKETS,
  MAX_CORRELATION_ID_LENGTH,
  collectProcessMetrics,
  DEFAULT_NATIVE_BUCKET_FACTOR,
  DEFAULT_NATIVE_MAX_BUCKETS,
  DEFAULT_NATIVE_ZERO_THRESHOLD,
  // The counter createKubeAuth reports to: createKubeAuth(api, createKubeAuthMetrics(registry), options).
  createKubeAuthMetrics,
  KUBE_AUTH_METRICS_DEFAULTS,
} from './metrics';

// Record reconciliation: cycles, and the work queue that feeds them.
export { createPipeline, createWorkQueue, WORK_QUEUE_DEFAULTS, QUEUE_PROCESSING_DEFAULTS } from './pipeline';

// Probes and shutdown.
export { watchProgress, drain, WATCHDOG_DEFAULTS, DRAIN_DEFAULTS } from './health';

// Kubernetes: leader election, informer caches as readiness.
export { createLeaseElector, LEASE_ELECTOR_DEFAULTS, waitForCaches, CACHE_WAIT_DEFAULTS } from './kubernetes';

// The fleet: every replica of the controller, read from any one of them, at /debug/fleet.
export { createFleetView, FLEET_VIEW_DEFAULTS, readReplica, READ_REPLICA_DEFAULTS, findingsOf, FINDING_BOUNDS } from './fleet';

// --- Types ------------------------------------------------------------------------------------

// The state: what a host pushes, what the routers read, and what they serve.
export type { IntrospectionStateOptions } from './state/store';
export type {
  IntrospectionState,
  IntrospectionStateReader,
  ControllerConfig,
  AuxFile,
  AuxFilesInput,
  ControllerEvent,
  EventDetails,
  EventQuery,
  EventPage,
  EventReadOptions,
  PublishEventOptions,
  EventListener,
  EventStats,
  VarProvider,
  PublishVarOptions,
  HealthCheck,
  HealthCheckOptions,
  HealthCheckResult,
  HealthCheckReport,
  ProgressRecord,
  ReadinessGate,
  ReadinessGateStatus,
  RegisteredHealthCheck,
  VarReading,
  ReadVarOptions,
  Timestamp,
  CycleSpan,
  CycleSegment,
  CycleLabels,
  CycleTimelineReading,
} from './state/types';
export type { CredentialMetadata, CredentialsVariable } from './state/credentials';
export type { UptimeVariable } from './state/uptime';

// The introspection router.
export type {
  IntrospectionRouter,
  IntrospectionRouterOptions,
  IntrospectionWatchOptions,
  IntrospectionLimits,
  IntrospectionRouterState,
} from './introspection/router';
export type { JsonPathLimits } from './jsonpath';
export type { AccessGuardOptions } from './http/access-guard';
export type { CertificateEventPublisher, ServingCertificateOptions, ServingCertificateInfo, ServingCertificateWatch } from './tls';
export type {
  KubeAuth,
  KubeAuthApi,
  KubeAuthOptions,
  KubeAuthOutcome,
  KubeAuthReporter,
  KubeAuthStats,
  SubjectAccessReviewLike,
  TokenReviewLike,
  TokenReviewRequest,
  UserInfoLike,
} from './kubernetes';

// Profiles.
export type {
  PprofRouter,
  PprofOptions,
  ProfilerChoice,
  TraceOptions,
  BackendName,
  HeapProfilerChoice,
  HeapSamples,
  HeapReaderName,
} from './pprof';

// Metrics.
export type {
  MetricsRegistry,
  MetricsRouterOptions,
  ControllerMetrics,
  ControllerMetricsDriver,
  ControllerRuntimeDriver,
  QueueReader,
  QueueRecorder,
  BuildInfoOptions,
  ControllerMetricsOptions,
  ControllerRuntimeOptions,
  DurationBuckets,
  MetricsStateSource,
  ReconcileResult,
  ProcessMetricsOptions,
  MonotonicClock,
  NativeHistogramOptions,
  KubeAuthMetrics,
  KubeAuthMetricsOptions,
} from './metrics';

// Reconciliation. Each component declares what it reports (PipelineMetrics here, LeaderReporter,
// KubeAuthReporter, CertificateEventPublisher beside their factories) and knows no metrics; the
// metrics' handles fit those shapes (__tests__/package/reporters.test.ts checks it at compile time).
export type {
  CycleSpec,
  CycleResult,
  PhaseStatus,
  PipelineOptions,
  ReconciliationPipeline,
  WorkQueue,
  WorkQueueOptions,
  QueueProcessing,
  QueueProcessingOptions,
  PipelineMetrics,
  PipelineDriver,
  ControllerRuntimeReporter,
  QueueReporter,
  WorkQueueReading,
  CycleOutcome,
} from './pipeline';

// Probes and shutdown.
export type { ProgressWatchdog, ProgressWatchdogOptions, Closable, DrainOptions } from './health';

// Kubernetes: leader election, informer caches as readiness.
export type {
  LeaseApi,
  LeaseElector,
  LeaseElectorOptions,
  LeaseElectorVariable,
  LeaderReporter,
  LeaseObject,
  LeaseSpecLike,
  CacheSync,
  CacheSyncGate,
  InformerLike,
  WaitForCachesOptions,
} from './kubernetes';

// The fleet view and its report.
export type {
  FleetView,
  FleetViewOptions,
  ReadReplicaOptions,
  FindingsContext,
  FleetReport,
  ReplicaReport,
  ReplicaCycle,
  FailingCheck,
  Finding,
  FindingKind,
  FindingSeverity,
} from './fleet';
export type { PodsApi, PodLike, PodListLike } from './kubernetes/replicas';
