// A file-backed leader lease, standing in for a Kubernetes Lease object so that several replicas
// of the example on one machine elect exactly one leader. The read-modify-write of the lease is
// serialised by an exclusive lock file; the lease itself is replaced atomically by rename.

import fs from 'node:fs';
import path from 'node:path';

/** The lease file's content. */
interface Lease {
  holder: string;
  /** Milliseconds since the epoch of the holder's last renewal. */
  renewTime: number;
  /** Milliseconds since the epoch when the holder first acquired the lease. */
  acquireTime: number;
}

function isLease(value: unknown): value is Lease {
  return (
    typeof value === 'object' &&
    value !== null &&
    'holder' in value &&
    typeof value.holder === 'string' &&
    'renewTime' in value &&
    typeof value.renewTime === 'number' &&
    'acquireTime' in value &&
    typeof value.acquireTime === 'number'
  );
}

/** The lease, or undefined when there is none (or it cannot be read, which counts as none). */
function readLease(file: string): Lease | undefined {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return isLease(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `fn` while holding `<file>.lock`; gives up (returns undefined) if another replica holds it. */
function withLock<T>(file: string, fn: () => T): T | undefined {
  const lock = `${file}.lock`;
  let fd: number;
  try {
    fd = fs.openSync(lock, 'wx');
  } catch {
    // A lock older than a few seconds belongs to a replica that died mid-update.
    try {
      if (Date.now() - fs.statSync(lock).mtimeMs > 5000) fs.rmSync(lock, { force: true });
    } catch {
      /* raced with its owner: fine */
    }
    return undefined;
  }
  try {
    return fn();
  } finally {
    fs.closeSync(fd);
    fs.rmSync(lock, { force: true });
  }
}

/**
 * Tries to acquire or renew the lease for `identity`. Returns true while this replica holds it.
 * A lease not renewed within `durationMs` may be taken over by another replica.
 */
export function tryAcquire(file: string, identity: string, durationMs: number): boolean {
  const result = withLock(file, () => {
    const now = Date.now();
    const lease = readLease(file);
    if (lease && lease.holder !== identity && now - lease.renewTime < durationMs) return false;
    const next: Lease = { holder: identity, renewTime: now, acquireTime: lease && lease.holder === identity ? lease.acquireTime : now };
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
    fs.writeFileSync(tmp, JSON.stringify(next));
    fs.renameSync(tmp, file);
    return true;
  });
  if (result !== undefined) return result;
  const lease = readLease(file);
  return Boolean(lease && lease.holder === identity && Date.now() - lease.renewTime < durationMs);
}

/** Gives the lease up at shutdown so that another replica takes over at once. */
export function release(file: string, identity: string): void {
  withLock(file, () => {
    const lease = readLease(file);
    if (lease && lease.holder === identity) fs.rmSync(file, { force: true });
  });
}

/** The replica holding the lease, or null when nobody does. */
export function currentHolder(file: string): string | null {
  const lease = readLease(file);
  return lease ? lease.holder : null;
}
