// The coordination.k8s.io/v1 Lease and the calls on it, typed structurally (client-node's
// CoordinationV1Api fits): read by lease-record.ts, used by lease-elector.ts.

/**
 * A `coordination.k8s.io/v1` Lease's spec as the elector reads and writes it. Times are
 * MicroTimes: client-node 1.x hands them over as the API server's text, a client that parses them
 * as `Date`s; the elector writes them with six fractional digits, as the API server requires.
 *
 * What the API answers is checked field by field, as the API server stores it, before it is used:
 * a field of another type or out of range (a `leaseDurationSeconds` of `"abc"`, `NaN`, `0` or
 * `1e12`, a `leaseTransitions` of `"5"`, a time that is no RFC 3339 time, `null` anywhere) makes
 * the Lease invalid: reported as `lastError`, never taken over, never written.
 */
export interface LeaseSpecLike {
  /** Who holds the lease; empty or absent when nobody does (a released lease). */
  holderIdentity?: string;
  /**
   * How long, after the holder's last renewal as a candidate observes it, the lease is the
   * holder's: an int32 greater than 0.
   */
  leaseDurationSeconds?: number;
  /** When the current holder acquired the lease. */
  acquireTime?: Date | string;
  /** When the holder last renewed it. */
  renewTime?: Date | string;
  /** How many times the holder changed: an int32, 0 or more. */
  leaseTransitions?: number;
  /** Coordinated leader election's preferred holder; kept as read, not acted on. */
  preferredHolder?: string;
  /** Coordinated leader election's strategy; kept as read, not acted on. */
  strategy?: string;
}

/**
 * A Lease object as the elector needs it: client-node's `V1Lease` fits. The whole object read is
 * written back (with its `metadata.resourceVersion`), so a replace loses to any write in between.
 */
export interface LeaseObject {
  /** `coordination.k8s.io/v1` when the API server answered it. */
  apiVersion?: string;
  /** `Lease` when the API server answered it. */
  kind?: string;
  /** Its name, namespace and the resourceVersion that guards a replace. */
  metadata?: {
    /** The Lease's name. */
    name?: string;
    /** The Lease's namespace. */
    namespace?: string;
    /** The version a replace must match, or the API server answers 409. */
    resourceVersion?: string;
  };
  /** The election record. */
  spec?: LeaseSpecLike;
}

/**
 * The three calls of client-node's `CoordinationV1Api` (1.x and 2.x: object parameters) the
 * elector makes, written structurally so this package does not depend on client-node:
 * `kc.makeApiClient(k8s.CoordinationV1Api)` fits. A failed call rejects with an error carrying the
 * HTTP status as a numeric `code` (client-node's `ApiException`): 404 on a missing Lease, 409 on a
 * lost race.
 */
export interface LeaseApi {
  /** GET the Lease. */
  readNamespacedLease(param: { name: string; namespace: string }): Promise<LeaseObject>;
  /** POST a new Lease. */
  createNamespacedLease(param: { namespace: string; body: LeaseObject }): Promise<LeaseObject>;
  /** PUT the Lease, guarded by the body's `metadata.resourceVersion`. */
  replaceNamespacedLease(param: { name: string; namespace: string; body: LeaseObject }): Promise<LeaseObject>;
}
