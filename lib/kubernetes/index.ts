export {
  createLeaseElector,
  LEASE_ELECTOR_DEFAULTS,
  type LeaseApi,
  type LeaseElector,
  type LeaseElectorOptions,
  type LeaseElectorVariable,
  type LeaseObject,
  type LeaseSpecLike,
} from './lease-elector';
