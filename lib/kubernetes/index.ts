export {
  createLeaseElector,
  LEASE_ELECTOR_DEFAULTS,
  type LeaseApi,
  type LeaseElector,
  type LeaseElectorOptions,
  type LeaseElectorVariable,
  type LeaderReporter,
  type LeaseObject,
  type LeaseSpecLike,
} from './lease-elector';
export {
  waitForCaches,
  CACHE_WAIT_DEFAULTS,
  type CacheSync,
  type CacheSyncGate,
  type InformerLike,
  type WaitForCachesOptions,
} from './caches';
export {
  createKubeAuth,
  KUBE_AUTH_DEFAULTS,
  type KubeAuth,
  type KubeAuthApi,
  type KubeAuthOptions,
  type KubeAuthOutcome,
  type KubeAuthReporter,
  type KubeAuthStats,
  type SubjectAccessReviewLike,
  type TokenReviewLike,
  type TokenReviewRequest,
  type UserInfoLike,
} from './kube-auth';
