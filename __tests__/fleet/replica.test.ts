/**
 * readReplica over real sockets: one replica's endpoints read, and every way a peer can be hostile
 * (refusing, hanging, answering 100 MB, answering HTML, answering wrong types, refusing the token,
 * sending markup and control characters) reported, bounded, never thrown.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { readReplica, READ_REPLICA_DEFAULTS } from '../../lib/fleet/replica';
import { loopbackAddress, pipelineVar, replicaListener, type ReplicaState } from './fake-fleet';
import { freePort } from '../helpers/ports';

interface Served {
  readonly url: string;
  readonly server: http.Server;
  readonly sockets: Set<Socket>;
  close(): Promise<void>;
}

const open: Served[] = [];

async function serve(listener: http.RequestListener): Promise<Served> {
  const address = loopbackAddress();
  const port = await freePort();
  const server = http.createServer(listener);
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, address, () => resolve()));
  const served: Served = {
    url: `http://${address}:${port}`,
    server,
    sockets,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  open.push(served);
  return served;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function replica(state: Partial<ReplicaState> = {}): http.RequestListener {
  return replicaListener({ name: 'ctl-a', leading: true, holder: 'ctl-a', version: '7', pipeline: pipelineVar('succeeded'), ...state });
}

describe('readReplica', () => {
  it('reads a healthy replica: readiness, leadership, version, last cycle, counts, with the token on every request', async () => {
    const seen = { requests: [] as string[], authorizations: [] as Array<string | undefined> };
    const served = await serve(
      replicaListener(
        { name: 'ctl-a', leading: true, holder: 'ctl-a', version: '7', pipeline: pipelineVar('succeeded'), uptime: 90.5, subscribers: 3 },
        seen,
      ),
    );
    const report = await readReplica(served.url, { pod: 'ctl-a', phase: 'Running', token: 'sa-token' });
    expect(report).toMatchObject({
      pod: 'ctl-a',
      address: served.url,
      phase: 'Running',
      reachable: true,
      error: null,
      ready: true,
      failing_checks: [],
      leading: true,
      holder: 'ctl-a',
      config_version: '7',
      last_cycle: { outcome: 'succeeded', took_ms: 120, correlation_id: 'c-1', failed_phase: null },
      cycles: { total: 3, succeeded: 3, failed: 0 },
      uptime_seconds: 90.5,
      event_subscribers: 3,
      caches_fresh: null,
      certificate_not_after: null,
    });
    expect(report.last_cycle?.ended).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(report.read_ms).toBeGreaterThanOrEqual(0);
    expect(seen.requests.sort()).toEqual(
      [
        '/readyz?verbose',
        '/healthz?verbose',
        '/debug/vars/leader_election',
        '/debug/vars/config?field=%7B.version%7D',
        '/debug/vars/pipeline',
        '/debug/vars/uptime',
        '/debug/vars/event_counts',
      ].sort(),
    );
    expect(new Set(seen.authorizations)).toEqual(new Set(['Bearer sa-token']));
  });

  it('reads the failing checks and the caches: stale or silent is not fresh, not yet synced is unknown', async () => {
    const stale = await serve(
      replica({
        failing: [{ name: 'caches-synced', reason: 'not open: cache "ingresses" may be stale: watch silent for 301 s, restarted' }],
      }),
    );
    const syncing = await serve(
      replica({
        failing: [
          { name: 'caches-synced', reason: 'not open: waiting for ingresses' },
          { name: 'config-loaded', reason: 'not open: config not loaded yet' },
        ],
      }),
    );
    const fresh = await serve((req, res) => {
      if (req.url === '/readyz?verbose') res.end('[+]ping ok\n[+]caches-synced ok (synced 3 caches)\nreadyz check passed\n');
      else replica()(req, res);
    });
    const staleReport = await readReplica(stale.url);
    expect(staleReport).toMatchObject({ ready: false, caches_fresh: false });
    expect(staleReport.failing_checks).toEqual([{ name: 'caches-synced', reason: expect.stringContaining('may be stale') }]);
    const syncingReport = await readReplica(syncing.url);
    expect(syncingReport).toMatchObject({ ready: false, caches_fresh: null });
    expect(syncingReport.failing_checks.map((c) => c.name)).toEqual(['caches-synced', 'config-loaded']);
    expect(await readReplica(fresh.url)).toMatchObject({ ready: true, caches_fresh: true });
  });

  it('reads variables that are not published (404) or have no value (503) as null, not as errors', async () => {
    const served = await serve(replica({ leading: null, version: null, pipeline: null, subscribers: null }));
    expect(await readReplica(served.url)).toMatchObject({
      reachable: true,
      error: null,
      leading: null,
      holder: null,
      config_version: null,
      last_cycle: null,
      cycles: null,
      event_subscribers: null,
    });
  });

  it('reports a refused connection', async () => {
    const address = loopbackAddress();
    const report = await readReplica(`http://${address}:${await freePort()}`);
    expect(report).toMatchObject({ reachable: false, error: 'connection refused', ready: null, leading: null });
  });

  it('bounds a hung replica by timeoutMs and destroys its sockets', async () => {
    const served = await serve(() => undefined);
    const started = performance.now();
    const report = await readReplica(served.url, { timeoutMs: 300 });
    const took = performance.now() - started;
    expect(report).toMatchObject({ reachable: false, error: 'no complete answer within 300 ms' });
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(1500);
    // Its connections are closed by the reader, not left to the server.
    const deadline = Date.now() + 2000;
    while (served.sockets.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(served.sockets.size).toBe(0);
  });

  it('cuts off a replica answering 100 MB at maxReplicaBytes, buffering no more', async () => {
    let written = 0;
    let stopped = false;
    const served = await serve((req, res) => {
      if (req.url !== '/debug/vars/pipeline') {
        replica()(req, res);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(65_536, 0x20);
      res.on('close', () => (stopped = true));
      const pump = (): void => {
        while (!stopped && written < 100 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!stopped) res.end();
      };
      pump();
    });
    const report = await readReplica(served.url, { maxReplicaBytes: 1_048_576 });
    expect(report).toMatchObject({
      reachable: false,
      error: 'answered more than maxReplicaBytes (1048576 bytes); the reading was cut off',
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped).toBe(true);
    // What the kernel's buffers took in before the cut; nothing near 100 MB.
    expect(written).toBeLessThan(32 * 1024 * 1024);
  });

  it('refuses a Content-Length over the bound before reading the body', async () => {
    const served = await serve((req, res) => {
      if (req.url === '/debug/vars/uptime') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(100 * 1024 * 1024) });
        res.write('{');
        return;
      }
      replica()(req, res);
    });
    expect(await readReplica(served.url, { maxReplicaBytes: 65_536 })).toMatchObject({
      reachable: false,
      error: expect.stringContaining('maxReplicaBytes (65536 bytes)'),
    });
  });

  it('reports a server that answers HTML where JSON is expected, and one that serves no introspection', async () => {
    const html = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>It works!</body></html>');
    });
    expect(await readReplica(html.url)).toMatchObject({
      reachable: false,
      error: expect.stringMatching(/answered HTTP 200 with a body that is not JSON$/),
    });
    const nothing = await serve((_req, res) => {
      res.writeHead(404);
      res.end();
    });
    expect(await readReplica(nothing.url)).toMatchObject({
      reachable: false,
      error: expect.stringContaining('no introspection server here'),
    });
  });

  it('reads wrong types everywhere as nulls, never a crash', async () => {
    const answers: Record<string, unknown> = {
      '/healthz?verbose': { status: 7, checks: ['not', 'an', 'object'] },
      '/debug/vars/leader_election': { identity: {}, is_leader: 'yes', holder: ['a'] },
      '/debug/vars/config?field=%7B.version%7D': 42,
      '/debug/vars/pipeline': { status: 5, started: 'yesterday', duration_ms: 'NaN', cycles: { total: '3', succeeded: -1, failed: 1.5 } },
      '/debug/vars/uptime': { uptime_seconds: -5 },
      '/debug/vars/event_counts': { subscribers: 1.5 },
    };
    const served = await serve((req, res) => {
      if (req.url === '/readyz?verbose') {
        res.writeHead(200);
        res.end('[x]garbage\n[-]\n[+]\n\u0000\u0001\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answers[req.url ?? ''] ?? null));
    });
    expect(await readReplica(served.url)).toMatchObject({
      reachable: true,
      ready: true,
      failing_checks: [],
      leading: null,
      holder: null,
      config_version: null,
      last_cycle: null,
      cycles: null,
      uptime_seconds: null,
      event_subscribers: null,
    });
    answers['/debug/vars/pipeline'] = {
      status: 'failed',
      started: 12,
      ended: '2026-13-45',
      duration_ms: Infinity,
      correlation_id: 5,
      failed_phase: {},
    };
    answers['/debug/vars/uptime'] = 'up';
    answers['/debug/vars/event_counts'] = [1, 2];
    expect((await readReplica(served.url)).last_cycle).toEqual({
      outcome: 'failed',
      started: null,
      ended: null,
      took_ms: null,
      correlation_id: null,
      failed_phase: null,
    });
  });

  it('reports a replica that refuses the token (401 and 403) as forbidden', async () => {
    const guarded = await serve(replica({ token: 'right' }));
    expect(await readReplica(guarded.url, { token: 'wrong' })).toMatchObject({
      reachable: false,
      error: "forbidden: the fleet view's token was refused (see examples/kubernetes/fleet-rbac.yaml)",
    });
    expect(await readReplica(guarded.url, { token: 'right' })).toMatchObject({ reachable: true });
    const forbidden = await serve((req, res) => {
      if (req.url === '/debug/vars/pipeline') {
        res.writeHead(403);
        res.end('{"error":"forbidden"}');
      } else replica()(req, res);
    });
    expect(await readReplica(forbidden.url)).toMatchObject({ reachable: false, error: expect.stringMatching(/^forbidden: /) });
  });

  it("keeps a peer's markup as text, strips control and direction characters, and cuts long text", async () => {
    const served = await serve(
      replica({
        holder: '<script>alert(1)</script>\u001b[31mred\u202e',
        version: 'v'.repeat(5000),
        failing: [{ name: '<img src=x onerror=alert(1)>', reason: 'line one\u0007 [+]forged ok' }],
      }),
    );
    const report = await readReplica(served.url);
    expect(report.holder).toBe('<script>alert(1)</script>\uFFFD[31mred\uFFFD');
    expect(report.config_version).toHaveLength(201);
    expect(report.config_version?.endsWith('…')).toBe(true);
    expect(report.failing_checks).toEqual([{ name: '<img src=x onerror=alert(1)>', reason: 'line one\uFFFD [+]forged ok' }]);
  });

  it('stops at once when its signal aborts', async () => {
    const served = await serve(() => undefined);
    const controller = new AbortController();
    const reading = readReplica(served.url, { signal: controller.signal, timeoutMs: 10_000 });
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    expect(await reading).toMatchObject({ reachable: false, error: 'abandoned: the gather was stopped' });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('refuses wrong options and URLs at the call, with a "did you mean"', () => {
    expect(READ_REPLICA_DEFAULTS).toMatchObject({ timeoutMs: 3000, maxReplicaBytes: 1_048_576, rejectUnauthorized: true });
    expect(() => readReplica('http://127.0.0.1:1', { timeoutMS: 5 } as never)).toThrow(
      /readReplica: unknown option "timeoutMS" \(did you mean "timeoutMs"\?\)/,
    );
    expect(() => readReplica('ftp://x', {})).toThrow(/readReplica: baseUrl must be an http:\/\/ or https:\/\/ URL/);
    expect(() => readReplica('http://u:p@x:1', {})).toThrow(/no credentials, query or fragment/);
    expect(() => readReplica('http://x:1', { token: 'a b' })).toThrow(/token must be a bearer token .* got a string of 3 characters/);
    expect(() => readReplica('http://x:1', { maxReplicaBytes: 10 })).toThrow(/readReplica: maxReplicaBytes must be an integer from 1024/);
  });
});
