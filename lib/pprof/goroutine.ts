import { ChildProcess } from 'node:child_process';
import { Socket as DatagramSocket } from 'node:dgram';
import { Server, Socket } from 'node:net';
import type { Profile } from 'pprof-format';
import { PprofBuilder } from './pprof-builder';

/** Node's closest analog of goroutines: what keeps the event loop alive, grouped by kind. */
export interface ResourceSnapshot {
  /** Number of active resources. */
  total: number;
  /** Kind (libuv wrap or `Timeout`) → count, most frequent first. */
  kinds: Array<[string, number]>;
}

/** Counts active resources (`process.getActiveResourcesInfo()`; refed timers, handles, requests). */
export function snapshotResources(): ResourceSnapshot {
  const counts = new Map<string, number>();
  const all = process.getActiveResourcesInfo();
  for (const kind of all) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  const kinds = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return { total: all.length, kinds };
}

/** pprof with sample type `resources/count`, one single-frame stack per kind. */
export function resourcesToPprof(snapshot: ResourceSnapshot): Profile {
  const builder = new PprofBuilder();
  return builder.build({
    sampleTypes: [{ type: 'resources', unit: 'count' }],
    samples: snapshot.kinds.map(([kind, count]) => ({ locationIds: [builder.location(kind)], values: [count] })),
    periodType: { type: 'resources', unit: 'count' },
    period: 1,
    comments: ['Node.js analog of goroutines: active libuv handles, requests and refed timers (process.getActiveResourcesInfo())'],
  });
}

interface InternalProcess {
  _getActiveHandles?: () => unknown[];
  _getActiveRequests?: () => unknown[];
}

function endpoint(address: string | undefined, port: number | undefined): string {
  if (address === undefined) return '?';
  return address.includes(':') ? `[${address}]:${port ?? '?'}` : `${address}:${port ?? '?'}`;
}

function refState(handle: object): string {
  const hasRef = (handle as { hasRef?: unknown }).hasRef;
  if (typeof hasRef !== 'function') return '';
  return (hasRef as () => boolean).call(handle) ? ' (ref)' : ' (unref: does not keep the process alive)';
}

function describeHandle(handle: unknown): string {
  if (typeof handle !== 'object' || handle === null) return String(handle);
  const kind = handle.constructor?.name ?? 'Object';
  try {
    if (handle instanceof Socket) {
      const fd = (handle as Socket & { fd?: number }).fd;
      if (handle.remoteAddress === undefined && typeof fd === 'number') return `${kind} fd ${fd}${refState(handle)}`;
      return `${kind} ${endpoint(handle.localAddress, handle.localPort)} -> ${endpoint(handle.remoteAddress, handle.remotePort)}${refState(handle)}`;
    }
    if (handle instanceof Server) {
      const address = handle.address();
      const where = address === null ? 'not listening' : typeof address === 'string' ? address : endpoint(address.address, address.port);
      return `${kind} listening on ${where}${refState(handle)}`;
    }
    if (handle instanceof ChildProcess) return `${kind} pid ${handle.pid ?? '?'} ${handle.spawnfile}${refState(handle)}`;
    if (handle instanceof DatagramSocket) {
      const address = handle.address();
      return `${kind} udp ${endpoint(address.address, address.port)}${refState(handle)}`;
    }
  } catch {
    // A handle half torn down can throw from its getters; its kind is still worth listing.
  }
  return `${kind}${refState(handle)}`;
}

/**
 * The text forms: `debug=1` counts per kind like Go's goroutine summary; `debug=2` also lists
 * every handle and request Node exposes (addresses, pids, ref state). The underscore APIs are
 * undocumented, so they are used only when present.
 */
export function resourcesText(snapshot: ResourceSnapshot, debug: 1 | 2): string {
  const lines = [
    `active resources profile: total ${snapshot.total}`,
    '# Node.js analog of goroutines: what keeps the event loop alive (process.getActiveResourcesInfo())',
    '',
    ...snapshot.kinds.map(([kind, count]) => `${count} @ ${kind}`),
  ];
  if (debug === 2) {
    const internals = process as unknown as InternalProcess;
    const handles = typeof internals._getActiveHandles === 'function' ? internals._getActiveHandles() : undefined;
    const requests = typeof internals._getActiveRequests === 'function' ? internals._getActiveRequests() : undefined;
    lines.push('', `# handles (process._getActiveHandles()): ${handles ? handles.length : 'not available in this Node.js'}`);
    for (const handle of handles ?? []) lines.push(describeHandle(handle));
    lines.push('', `# requests (process._getActiveRequests()): ${requests ? requests.length : 'not available in this Node.js'}`);
    for (const request of requests ?? []) lines.push(describeHandle(request));
    lines.push('', '# timers: Node.js exposes only their count (the Timeout lines above); unref()ed timers are not listed');
  }
  return `${lines.join('\n')}\n`;
}
