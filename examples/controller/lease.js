'use strict';
// A file-backed leader lease, standing in for a Kubernetes Lease object so that several replicas
// of the example on one machine elect exactly one leader. The read-modify-write of the lease is
// serialised by an exclusive lock file; the lease itself is replaced atomically by rename.

const fs = require('node:fs');
const path = require('node:path');

function readLease(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

/** Runs `fn` while holding `<file>.lock`; gives up (returns undefined) if another replica holds it. */
function withLock(file, fn) {
  const lock = `${file}.lock`;
  let fd;
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
function tryAcquire(file, identity, durationMs) {
  const result = withLock(file, () => {
    const now = Date.now();
    const lease = readLease(file);
    if (lease && lease.holder !== identity && now - lease.renewTime < durationMs) return false;
    const next = { holder: identity, renewTime: now, acquireTime: lease && lease.holder === identity ? lease.acquireTime : now };
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
function release(file, identity) {
  withLock(file, () => {
    const lease = readLease(file);
    if (lease && lease.holder === identity) fs.rmSync(file, { force: true });
  });
}

function currentHolder(file) {
  const lease = readLease(file);
  return lease ? lease.holder : null;
}

module.exports = { tryAcquire, release, currentHolder };
