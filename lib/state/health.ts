import type { HealthCheck, HealthCheckOptions, ProgressRecord, ReadinessGate, ReadinessGateStatus, RegisteredHealthCheck } from './types';

const CHECK_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** Names readiness reserves for its own built-in checks. */
const RESERVED_CHECK_NAMES: ReadonlySet<string> = new Set(['ping', 'shutdown']);

interface GateEntry {
  readonly name: string;
  open: boolean;
  reason: string;
  since: number;
}

interface ProgressEntry {
  atWall: number;
  atMonotonic: number;
  count: number;
}

function checkName(caller: string, what: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || !CHECK_NAME.test(name)) {
    throw new TypeError(`${caller}: ${what} must match ${CHECK_NAME.source}, got ${JSON.stringify(name)}`);
  }
}

/**
 * The health side of the state: the host's checks, readiness gates, the shutdown flag and the
 * progress heartbeats, which the probes and the watchdog read.
 */
export class HealthState {
  private readonly checks: RegisteredHealthCheck[] = [];
  private readonly gates: GateEntry[] = [];
  private shutdown: string | undefined;
  private readonly progressByActivity = new Map<string, ProgressEntry>();

  /** @param now The wall clock gate changes and progress are stamped with. */
  constructor(private readonly now: () => number) {}

  /** See `IntrospectionState.addHealthCheck`. */
  addHealthCheck(name: string, check: HealthCheck, options: HealthCheckOptions = {}): () => void {
    checkName('addHealthCheck', 'name', name);
    this.assertFreeName('addHealthCheck', name);
    if (typeof check !== 'function') throw new TypeError('addHealthCheck: check must be a function');
    const entry: RegisteredHealthCheck = { name, check, livez: options.livez ?? true, readyz: options.readyz ?? true };
    this.checks.push(entry);
    return () => removeFrom(this.checks, entry);
  }

  /** See `IntrospectionStateReader.healthChecks`. */
  healthChecks(): readonly RegisteredHealthCheck[] {
    return this.checks;
  }

  /** See `IntrospectionState.setShuttingDown`. */
  setShuttingDown(shuttingDown: boolean, reason = 'shutting down'): void {
    this.shutdown = shuttingDown ? reason : undefined;
  }

  /** See `IntrospectionStateReader.shutdownReason`. */
  shutdownReason(): string | undefined {
    return this.shutdown;
  }

  /** See `IntrospectionState.recordProgress`. */
  recordProgress(activity = 'reconciliation'): void {
    const entry = this.progressByActivity.get(activity);
    if (entry !== undefined) {
      // The hot path: no allocation, two clock reads.
      entry.atWall = this.now();
      entry.atMonotonic = performance.now();
      entry.count++;
      return;
    }
    checkName('recordProgress', 'activity', activity);
    this.progressByActivity.set(activity, { atWall: this.now(), atMonotonic: performance.now(), count: 1 });
  }

  /** See `IntrospectionStateReader.progress`. */
  progress(): readonly ProgressRecord[] {
    const now = performance.now();
    return [...this.progressByActivity].map(([activity, e]) => ({
      activity,
      at: new Date(e.atWall).toISOString(),
      ageMs: Math.max(0, now - e.atMonotonic),
      count: e.count,
    }));
  }

  /** See `IntrospectionState.addReadinessGate`. */
  addReadinessGate(name: string, reason?: string): ReadinessGate {
    checkName('addReadinessGate', 'name', name);
    if (reason !== undefined && typeof reason !== 'string') throw new TypeError('addReadinessGate: reason must be a string');
    this.assertFreeName('addReadinessGate', name);
    const entry: GateEntry = { name, open: false, reason: reason ?? `waiting for ${name}`, since: this.now() };
    this.gates.push(entry);
    return {
      name,
      get isOpen() {
        return entry.open;
      },
      open: () => {
        if (!entry.open) this.setGate(entry, true, '');
      },
      close: (why?: string) => {
        if (why !== undefined && typeof why !== 'string') throw new TypeError('ReadinessGate.close: reason must be a string');
        this.setGate(entry, false, why ?? `waiting for ${name}`);
      },
      remove: () => removeFrom(this.gates, entry),
    };
  }

  /** See `IntrospectionState.openReadinessGate`. */
  openReadinessGate(name: string): boolean {
    const gate = this.gates.find((g) => g.name === name);
    if (gate === undefined) return false;
    if (!gate.open) this.setGate(gate, true, '');
    return true;
  }

  /** See `IntrospectionStateReader.readinessGates`. */
  readinessGates(): readonly ReadinessGateStatus[] {
    return this.gates.map((g) => ({ name: g.name, open: g.open, reason: g.open ? '' : g.reason, since: new Date(g.since).toISOString() }));
  }

  private setGate(entry: GateEntry, open: boolean, reason: string): void {
    entry.open = open;
    entry.reason = reason.slice(0, 256);
    entry.since = this.now();
  }

  /** Health checks and readiness gates share one namespace: `/readyz/<name>` must mean one thing. */
  private assertFreeName(caller: string, name: string): void {
    if (RESERVED_CHECK_NAMES.has(name) || this.checks.some((c) => c.name === name) || this.gates.some((g) => g.name === name)) {
      throw new Error(`${caller}: a check or readiness gate named "${name}" already exists`);
    }
  }
}

/** Removes `entry` from `list` if it is still there (removers are idempotent). */
function removeFrom<T>(list: T[], entry: T): void {
  const index = list.indexOf(entry);
  if (index >= 0) list.splice(index, 1);
}
