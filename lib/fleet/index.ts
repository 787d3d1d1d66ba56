export { createFleetView, FLEET_VIEW_DEFAULTS, type FleetView, type FleetViewOptions } from './view';
export { readReplica, READ_REPLICA_DEFAULTS, MAX_PEER_TEXT, peerText, type ReadReplicaOptions } from './replica';
export { FINDING_BOUNDS, findingsOf, statusOf, type FindingsContext } from './findings';
export type { FleetReport, ReplicaReport, ReplicaCycle, FailingCheck, Finding, FindingKind, FindingSeverity } from './report';
