/**
 * An in-memory Lease API for the elector's unit tests, shaped as client-node's CoordinationV1Api
 * (the elector's structural `LeaseApi`). It keeps one Lease as the API server would: what is
 * written goes through JSON (so MicroTimes become text), every write gets a new resourceVersion,
 * a create of an existing Lease and a replace with a stale resourceVersion answer 409, a read of
 * a missing one 404. A test may also put any value in `stored` (a hostile Lease: a field no API
 * server would store), which reads then answer as it is.
 */
import { createIntrospectionState } from '../../lib/state/store';
import type { LeaseApi, LeaseObject } from '../../lib/kubernetes';

/** An error as client-node's ApiException carries it: the HTTP status as a numeric `code`. */
export class FakeApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The fake API; `reads`, `writes` count the calls, `broken` makes every call fail with a 503. */
export class FakeLeaseApi implements LeaseApi {
  /** The Lease as stored; `undefined` when there is none. Reads answer a copy of it. */
  stored: unknown;
  reads = 0;
  /** Every body written (create or replace), as the server stored it. */
  readonly written: LeaseObject[] = [];
  broken = false;
  /** Answers arrive this long after the call (a timer), instead of at once. */
  delayMs = 0;
  /** Called with each body sent for a create or replace, when it is sent. */
  onWrite: ((body: LeaseObject) => void) | undefined;
  private version = 0;

  constructor(
    readonly namespace = 'ns',
    readonly name = 'lease',
  ) {}

  /** A valid Lease held by `holder` (resourceVersion set), as the API server would answer it. */
  lease(spec: Record<string, unknown>): LeaseObject {
    this.version++;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace, resourceVersion: String(this.version) },
      spec: spec as LeaseObject['spec'],
    };
  }

  /** The stored Lease's spec (for a valid one). */
  spec(): NonNullable<LeaseObject['spec']> {
    return (this.stored as LeaseObject).spec ?? {};
  }

  readNamespacedLease(): Promise<LeaseObject> {
    this.reads++;
    return this.answer(() => {
      if (this.stored === undefined) throw new FakeApiError(404, 'leases "lease" not found');
      return copy(this.stored) as LeaseObject;
    });
  }

  createNamespacedLease({ body }: { namespace: string; body: LeaseObject }): Promise<LeaseObject> {
    this.onWrite?.(body);
    return this.answer(() => {
      if (this.stored !== undefined) throw new FakeApiError(409, 'leases "lease" already exists');
      return this.store(body);
    });
  }

  replaceNamespacedLease({ body }: { name: string; namespace: string; body: LeaseObject }): Promise<LeaseObject> {
    this.onWrite?.(body);
    return this.answer(() => {
      const current = (this.stored as LeaseObject | undefined)?.metadata?.resourceVersion;
      if (current === undefined || body.metadata?.resourceVersion !== current) {
        throw new FakeApiError(409, 'the object has been modified; please apply your changes to the latest version');
      }
      return this.store(body);
    });
  }

  /** Runs the call now, or after `delayMs`, as a promise; `broken` fails it. */
  private answer(run: () => LeaseObject): Promise<LeaseObject> {
    const settle = (): LeaseObject => {
      if (this.broken) throw new FakeApiError(503, 'the test broke the API');
      return run();
    };
    if (this.delayMs === 0) return new Promise((resolve) => resolve(settle()));
    return new Promise((resolve, reject) => {
      setTimeout(() => {
        try {
          resolve(settle());
        } catch (err) {
          reject(err as Error);
        }
      }, this.delayMs);
    });
  }

  private store(body: LeaseObject): LeaseObject {
    // Through JSON, as over the wire: MicroTimes become text, and what the elector wrote is checked as sent.
    const stored = JSON.parse(JSON.stringify(body)) as LeaseObject;
    this.version++;
    stored.metadata = { ...stored.metadata, name: this.name, namespace: this.namespace, resourceVersion: String(this.version) };
    this.stored = stored;
    this.written.push(copy(stored) as LeaseObject);
    return copy(stored) as LeaseObject;
  }
}

/** A deep copy that keeps what JSON cannot carry (NaN, Infinity, Dates, undefined): hostile values stay hostile. */
function copy(value: unknown): unknown {
  return structuredClone(value);
}

/** A state to create electors on. */
export function testState(): ReturnType<typeof createIntrospectionState> {
  return createIntrospectionState({ waitForConfig: false });
}

/** Blocks the event loop for `ms` milliseconds: no timer, I/O or other callback runs meanwhile. */
export function stallEventLoop(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: a long GC pause, a synchronous call of the host
  }
}
