/**
 * createFleetView over real sockets: replicas are small HTTP(S) servers on their own loopback
 * addresses (and one the package's own routers), listed by a fake pods API; the view is mounted in
 * Express and asked over HTTP. Each fault of the fleet is named by the report.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { createFleetView, FLEET_VIEW_DEFAULTS, type FleetView, type FleetViewOptions } from '../../lib/fleet';
import type { FleetReport } from '../../lib/fleet/report';
import { createIntrospectionState } from '../../lib/state/store';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createPipeline } from '../../lib/pipeline';
import { FakeFleet, loopbackAddress, pipelineVar, type ReplicaState } from './fake-fleet';
import { closeAllListening, listen, request } from '../helpers/http';

const fleets: FakeFleet[] = [];
const views: FleetView[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(views.splice(0).map((v) => v.close()));
  await Promise.all(fleets.splice(0).map((f) => f.close()));
  await closeAllListening();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function fleetOf(states: ReplicaState[]): Promise<FakeFleet> {
  const fleet = await FakeFleet.create();
  fleets.push(fleet);
  for (const state of states) await fleet.add(state);
  return fleet;
}

function viewOf(fleet: FakeFleet, options: Partial<FleetViewOptions> = {}): FleetView {
  const view = createFleetView(fleet.api, {
    namespace: 'ctl',
    selector: 'app=ctl',
    port: fleet.port,
    tokenFile: null,
    self: 'ctl-a',
    ...options,
  });
  views.push(view);
  return view;
}

async function serveView(view: FleetView): Promise<string> {
  const app = express();
  app.use(view);
  return (await listen(app)).origin;
}

const leader = (name: string, extra: Partial<ReplicaState> = {}): ReplicaState => ({
  name,
  leading: true,
  holder: name,
  version: '7',
  pipeline: pipelineVar('succeeded'),
  ...extra,
});
const follower = (name: string, holder: string, extra: Partial<ReplicaState> = {}): ReplicaState => ({
  name,
  leading: false,
  holder,
  version: '7',
  pipeline: pipelineVar('succeeded'),
  ...extra,
});

const kinds = (report: FleetReport): string[] => report.findings.map((f) => `${f.severity}:${f.kind}:${f.replicas.join(',')}`);

describe('createFleetView', () => {
  it('answers GET /debug/fleet with the whole fleet: healthy, sorted by pod, observer and source named; HEAD and 405 as everywhere', async () => {
    const fleet = await fleetOf([follower('ctl-c', 'ctl-a'), leader('ctl-a'), follower('ctl-b', 'ctl-a')]);
    const origin = await serveView(viewOf(fleet));
    const res = await request(`${origin}/debug/fleet`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const report = res.json<FleetReport>();
    expect(report).toMatchObject({
      kind: 'FleetReport',
      version: 1,
      observer: 'ctl-a',
      source: { namespace: 'ctl', selector: 'app=ctl' },
      status: 'healthy',
      findings: [],
    });
    expect(report.replicas.map((r) => [r.pod, r.reachable, r.leading, r.holder, r.config_version, r.address])).toEqual(
      fleet.replicas
        .map((r) => [r.state.name, true, r.state.leading, 'ctl-a', '7', `http://${r.address}:${fleet.port}`])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    expect(Date.parse(report.gathered)).toBeGreaterThan(Date.now() - 60_000);
    expect(fleet.calls).toEqual([{ namespace: 'ctl', labelSelector: 'app=ctl', limit: 101 }]);

    const head = await request(`${origin}/debug/fleet`, { method: 'HEAD' });
    expect([head.status, head.body.length, Number(head.headers['content-length']) > 0]).toEqual([200, 0, true]);
    const post = await request(`${origin}/debug/fleet`, { method: 'POST' });
    expect([post.status, post.headers['allow']]).toEqual([405, 'GET, HEAD']);
    expect((await request(`${origin}/debug/Fleet`)).status).toBe(404);
  });

  it.each<[string, ReplicaState[], string[]]>([
    ['no leader', [follower('a', 'gone'), follower('b', 'gone')], ['critical:no_leader:']],
    ['two leaders', [leader('a'), leader('b', { holder: 'a' })], ['critical:several_leaders:a,b']],
    ['holder disagreement', [leader('a'), follower('b', 'a'), follower('c', 'old')], ['warning:holder_disagreement:c']],
    ['config skew', [leader('a'), follower('b', 'a', { version: '6' })], ['warning:config_skew:b']],
    [
      'not ready with its check',
      [leader('a'), follower('b', 'a', { failing: [{ name: 'dataplane', reason: 'haproxy unreachable' }] })],
      ['warning:not_ready:b'],
    ],
    ['last cycle failed', [leader('a', { pipeline: pipelineVar('failed') }), follower('b', 'a')], ['critical:last_cycle_failed:a']],
    ['stale cycle', [leader('a', { pipeline: pipelineVar('succeeded', 20 * 60_000) }), follower('b', 'a')], ['warning:no_recent_cycle:a']],
    [
      'stale cache',
      [
        leader('a'),
        follower('b', 'a', { failing: [{ name: 'caches-synced', reason: 'not open: cache "x" may be stale: watch silent for 300 s' }] }),
      ],
      ['warning:not_ready:b', 'warning:stale_cache:b'],
    ],
  ])('names the fault: %s', async (_name, states, expected) => {
    const report = await viewOf(await fleetOf(states)).gather();
    expect(kinds(report)).toEqual(expected);
    expect(report.status).toBe(expected.some((k) => k.startsWith('critical')) ? 'failing' : 'degraded');
  });

  it('names the failing check and its reason in not_ready, and the failed cycle in last_cycle_failed', async () => {
    const report = await viewOf(
      await fleetOf([
        leader('a', { pipeline: pipelineVar('failed') }),
        follower('b', 'a', { failing: [{ name: 'dataplane', reason: 'haproxy unreachable' }] }),
      ]),
    ).gather();
    expect(report.findings.map((f) => f.message)).toEqual([
      'the leader a\'s last cycle failed in "validate" (correlation id "c-1")',
      'b is not ready: "dataplane": "haproxy unreachable"',
    ]);
    expect(report.replicas[1]).toMatchObject({ ready: false, failing_checks: [{ name: 'dataplane', reason: 'haproxy unreachable' }] });
  });

  it('reports unreachable replicas each with its reason, a hung one costing no more than its timeout', async () => {
    const fleet = await fleetOf([leader('a')]);
    // Hung: accepts and never answers. Not JSON. Wrong types everywhere. 100 MB.
    await fleet.add({ name: 'hung', override: () => true });
    await fleet.add({
      name: 'html',
      override: (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html>hello</html>');
        return true;
      },
    });
    await fleet.add({
      name: 'types',
      override: (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          req.url?.startsWith('/readyz')
            ? '[-]x'
            : JSON.stringify({ is_leader: 1, holder: 2, status: [], cycles: 'x', uptime_seconds: 'NaN', subscribers: {} }),
        );
        return true;
      },
    });
    let written = 0;
    await fleet.add({
      name: 'huge',
      override: (req, res) => {
        if (req.url !== '/debug/vars/uptime') return false;
        res.writeHead(200);
        const chunk = Buffer.alloc(65_536, 0x20);
        const pump = (): void => {
          while (!res.destroyed && written < 100 * 1024 * 1024) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
        };
        pump();
        return true;
      },
    });
    // Refused: a pod whose address serves nothing. Pending: no address yet.
    fleet.extraPods.push(
      { metadata: { name: 'refused' }, status: { phase: 'Running', podIP: loopbackAddress() } },
      { metadata: { name: 'pending' }, status: { phase: 'Pending' } },
      { metadata: { name: 'bad-ip' }, status: { phase: 'Running', podIP: 42 } },
    );
    const timeoutMs = 400;
    const started = performance.now();
    const report = await viewOf(fleet, { timeoutMs }).gather();
    const took = performance.now() - started;
    // Eight pods, eight at once: one timeout, plus the list.
    expect(took).toBeLessThan(timeoutMs + 1000);
    const errors = Object.fromEntries(report.replicas.map((r) => [r.pod, r.error]));
    expect(errors).toEqual({
      a: null,
      'bad-ip': 'the API answered this pod with a status.podIP of the wrong type',
      html: 'GET /healthz?verbose answered HTTP 200 with a body that is not JSON',
      huge: 'answered more than maxReplicaBytes (1048576 bytes); the reading was cut off',
      hung: `no complete answer within ${timeoutMs} ms`,
      pending: 'the pod has no address yet',
      refused: 'connection refused',
      types: null,
    });
    expect(written).toBeLessThan(32 * 1024 * 1024);
    expect(report.replicas.find((r) => r.pod === 'types')).toMatchObject({
      reachable: true,
      leading: null,
      holder: null,
      uptime_seconds: null,
      event_subscribers: null,
    });
    expect(kinds(report)).toEqual([
      'warning:unreachable:bad-ip',
      'warning:unreachable:html',
      'warning:unreachable:huge',
      'warning:unreachable:hung',
      'warning:unreachable:refused',
      'info:unreachable:pending',
    ]);
  });

  it('bounds a gather by ceil(replicas / concurrency) × timeoutMs', async () => {
    const fleet = await fleetOf([]);
    for (let i = 0; i < 4; i++) await fleet.add({ name: `hung-${i}`, override: () => true });
    const started = performance.now();
    const report = await viewOf(fleet, { timeoutMs: 300, concurrency: 2 }).gather();
    const took = performance.now() - started;
    expect(report.replicas.every((r) => r.error === 'no complete answer within 300 ms')).toBe(true);
    expect(took).toBeGreaterThanOrEqual(590);
    expect(took).toBeLessThan(2 * 300 + 1000);
    expect(report.findings.map((f) => f.severity)).toEqual(['critical', 'critical', 'critical', 'critical']);
  });

  it("reads peers with the token file's token, reread when it is rotated, and names a peer that refuses it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-token-'));
    dirs.push(dir);
    const tokenFile = path.join(dir, 'token');
    fs.writeFileSync(tokenFile, 'first\n');
    const fleet = await fleetOf([leader('a', { token: 'second' })]);
    // Tokens of no ServiceAccount: the view is told which one the replicas run as.
    const view = viewOf(fleet, { tokenFile, minIntervalMs: 0, serviceAccountName: 'lb-controller' });
    const refused = await view.gather();
    expect(refused.replicas[0]!.error).toBe("forbidden: the fleet view's token was refused (see examples/kubernetes/fleet-rbac.yaml)");
    expect(kinds(refused)).toEqual(['critical:unreachable:a']);
    // Rotated as the kubelet does: a new file renamed into place.
    fs.writeFileSync(`${tokenFile}.new`, 'second\n');
    fs.renameSync(`${tokenFile}.new`, tokenFile);
    const read = await view.gather();
    expect(read.replicas[0]).toMatchObject({ reachable: true, leading: true });
    expect(new Set(fleet.replicas[0]!.authorizations)).toEqual(new Set(['Bearer first', 'Bearer second']));
  });

  it("sends its token only to pods that run as the token's ServiceAccount: a pod of another is named, never sent it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-sa-'));
    dirs.push(dir);
    const jwt = (sub: string): string =>
      ['{"alg":"RS256"}', JSON.stringify({ sub })].map((part) => Buffer.from(part).toString('base64url')).join('.') + '.c2ln';
    const tokenFile = path.join(dir, 'token');
    fs.writeFileSync(tokenFile, jwt('system:serviceaccount:ctl:lb-controller'));
    const fleet = await fleetOf([leader('a'), follower('b', 'a', { serviceAccount: 'intruder' })]);
    const report = await viewOf(fleet, { tokenFile, minIntervalMs: 0 }).gather();
    expect(report.replicas.map((r) => [r.pod, r.reachable, r.error])).toEqual([
      ['a', true, null],
      ['b', false, 'not read: the pod runs as ServiceAccount "intruder", not "lb-controller", and is not sent this pod\'s token'],
    ]);
    expect(fleet.replicas[1]!.authorizations).toEqual([]);
    expect(fleet.replicas[0]!.authorizations.every((a) => a === `Bearer ${jwt('system:serviceaccount:ctl:lb-controller')}`)).toBe(true);
    expect(kinds(report)).toContain('warning:unreachable:b');

    // null: every pod the selector matches is read with it.
    const all = await viewOf(fleet, { tokenFile, minIntervalMs: 0, serviceAccountName: null }).gather();
    expect(all.replicas.map((r) => r.reachable)).toEqual([true, true]);

    // A token that names no ServiceAccount, and no serviceAccountName: refused at creation.
    fs.writeFileSync(tokenFile, 'opaque-token');
    expect(() => viewOf(fleet, { tokenFile })).toThrow(
      `createFleetView: tokenFile: the token in ${tokenFile} names no ServiceAccount (system:serviceaccount:<namespace>:<name>): give serviceAccountName, the one the replicas run as`,
    );
    expect(() => viewOf(fleet, { tokenFile, serviceAccountName: 'Not A Name' })).toThrow(
      'createFleetView: serviceAccountName must be a ServiceAccount\'s name, or null, got "Not A Name"',
    );
  });

  it('reads an https replica with the CA file and reports its certificate expiring', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-cert-'));
    dirs.push(dir);
    const address = loopbackAddress();
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        'key.pem',
        '-out',
        'cert.pem',
        '-days',
        '1',
        '-subj',
        '/CN=ctl',
        '-addext',
        `subjectAltName=IP:${address}`,
      ],
      { cwd: dir, stdio: 'pipe' },
    );
    const tls = { cert: fs.readFileSync(path.join(dir, 'cert.pem')), key: fs.readFileSync(path.join(dir, 'key.pem')) };
    const fleet = await fleetOf([]);
    await fleet.add(leader('a'), { tls, address });
    const report = await viewOf(fleet, { scheme: 'https', caFile: path.join(dir, 'cert.pem') }).gather();
    expect(report.replicas[0]).toMatchObject({ reachable: true, address: `https://${address}:${fleet.port}` });
    const notAfter = Date.parse(report.replicas[0]!.certificate_not_after!);
    expect(Math.abs(notAfter - (Date.now() + 86_400_000))).toBeLessThan(120_000);
    expect(kinds(report)).toEqual(['warning:certificate_expiring:a']);
    // Without the CA, the certificate is refused: unreachable, with TLS's reason.
    const untrusted = await viewOf(fleet, { scheme: 'https' }).gather();
    expect(untrusted.replicas[0]!.error).toMatch(/^TLS: /);
  });

  it('finds subscribers dropped across two gathers, and forgets pods that are gone', async () => {
    const fleet = await fleetOf([leader('a', { subscribers: 3 }), follower('b', 'a', { subscribers: 2 })]);
    const view = viewOf(fleet, { minIntervalMs: 0 });
    expect(kinds(await view.gather())).toEqual([]);
    fleet.replicas[0]!.state.subscribers = 1;
    const dropped = await view.gather();
    expect(kinds(dropped)).toEqual(['warning:subscribers_dropped:a']);
    expect(dropped.findings[0]!.message).toBe('a has 1 event subscribers, 3 before: a component may have stopped');
    // Still fewer than before: still a finding. A new pod under the same name starts afresh.
    expect(kinds(await view.gather())).toEqual(['warning:subscribers_dropped:a']);
    fleet.replicas[0]!.state.uid = 'a-restarted';
    expect(kinds(await view.gather())).toEqual([]);
  });

  it('reports a truncated list and an empty one', async () => {
    const fleet = await fleetOf([leader('a'), follower('b', 'a'), follower('c', 'a')]);
    const truncated = await viewOf(fleet, { maxReplicas: 2 }).gather();
    expect(truncated.replicas.map((r) => r.pod)).toEqual(['a', 'b']);
    expect(kinds(truncated)).toEqual(['warning:truncated:']);
    const empty = await viewOf(await fleetOf([])).gather();
    expect(empty).toMatchObject({ status: 'failing', replicas: [] });
    expect(kinds(empty)).toEqual(['critical:no_replicas:']);
  });

  it('shares one gather among concurrent requests and back-to-back ones within minIntervalMs', async () => {
    const fleet = await fleetOf([leader('a'), follower('b', 'a')]);
    fleet.listDelayMs = 100;
    const origin = await serveView(viewOf(fleet, { minIntervalMs: 500 }));
    const answers = await Promise.all(Array.from({ length: 10 }, () => request(`${origin}/debug/fleet`)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(fleet.calls).toHaveLength(1);
    expect(fleet.replicas[0]!.requests).toHaveLength(7);
    expect((await request(`${origin}/debug/fleet`)).text).toBe(answers[0]!.text);
    expect(fleet.calls).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 550));
    expect((await request(`${origin}/debug/fleet`)).status).toBe(200);
    expect(fleet.calls).toHaveLength(2);
  });

  it('stops a gather that every client left: its sockets are closed, and the next request gathers anew', async () => {
    const fleet = await fleetOf([leader('a')]);
    const hung = await fleet.add({ name: 'hung', override: () => true });
    const origin = await serveView(viewOf(fleet, { timeoutMs: 10_000 }));
    const client = new AbortController();
    const leaving = request(`${origin}/debug/fleet`, { signal: client.signal }).catch((err: unknown) => err);
    const deadline = Date.now() + 2000;
    while (hung.sockets.size === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(hung.sockets.size).toBeGreaterThan(0);
    client.abort();
    await leaving;
    const closedBy = Date.now() + 1000;
    while (hung.sockets.size > 0 && Date.now() < closedBy) await new Promise((r) => setTimeout(r, 10));
    expect(hung.sockets.size).toBe(0);
    // The gather was abandoned, not kept: the next request lists the pods again.
    hung.state.override = undefined;
    const next = await request(`${origin}/debug/fleet`);
    expect(next.status).toBe(200);
    expect(fleet.calls).toHaveLength(2);
    expect(next.json<FleetReport>().replicas.map((r) => r.reachable)).toEqual([true, true]);
  });

  it('answers 503 with the reason when the pods cannot be listed, shared for minIntervalMs', async () => {
    const fleet = await fleetOf([leader('a')]);
    fleet.listError = Object.assign(new Error('Forbidden'), { code: 403, body: { message: 'pods is forbidden' } });
    const view = viewOf(fleet);
    const origin = await serveView(view);
    const res = await request(`${origin}/debug/fleet`);
    expect(res.status).toBe(503);
    expect(res.json()).toEqual({
      error:
        'listReplicas: listing the pods of namespace "ctl" with selector "app=ctl" failed: HTTP 403: pods is forbidden (the ServiceAccount needs a Role that may list pods in the namespace)',
    });
    await expect(view.gather()).rejects.toThrow(/HTTP 403/);
    expect(fleet.calls).toHaveLength(1);
  });

  it('closes: the gather in flight stops at once, then 503; idempotent and never rejecting', async () => {
    const fleet = await fleetOf([]);
    const hung = await fleet.add({ name: 'hung', override: () => true });
    const view = viewOf(fleet, { timeoutMs: 10_000 });
    const origin = await serveView(view);
    const pending = request(`${origin}/debug/fleet`);
    const gathering = view.gather().catch((err: unknown) => err);
    while (hung.sockets.size === 0) await new Promise((r) => setTimeout(r, 10));
    const started = performance.now();
    const closing = view.close();
    expect(view.close()).toBe(closing);
    await closing;
    expect(performance.now() - started).toBeLessThan(1100);
    expect((await pending).json()).toEqual({ error: 'the fleet view is closed' });
    expect(String(await gathering)).toMatch(/the fleet view is closed/);
    expect((await request(`${origin}/debug/fleet`)).status).toBe(503);
    await expect(view.gather()).rejects.toThrow('the fleet view is closed');
  });

  it("keeps a hostile peer's markup as data in the JSON", async () => {
    const fleet = await fleetOf([leader('a', { holder: '</script><script>alert(1)</script>', version: '"><img src=x onerror=alert(1)>' })]);
    const res = await request(`${await serveView(viewOf(fleet))}/debug/fleet`);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const report = res.json<FleetReport>();
    expect(report.replicas[0]).toMatchObject({
      holder: '</script><script>alert(1)</script>',
      config_version: '"><img src=x onerror=alert(1)>',
    });
    // Only inside JSON strings: the quote of the version is escaped.
    expect(res.text).toContain('"config_version":"\\"><img src=x onerror=alert(1)>"');
  });

  it("reads the package's own routers: state, introspection router and pipeline, as the example mounts them", async () => {
    const fleet = await fleetOf([]);
    const state = createIntrospectionState();
    state.setConfig({ templates: {}, watched_resources: [] }, '42');
    state.publishVar('leader_election', () => ({ identity: 'real-a', is_leader: true, holder: 'real-a' }));
    const pipeline = createPipeline(state);
    await pipeline.run({ trigger: 'resync', render: () => 'global\n', validate: () => true });
    const unsubscribe = state.subscribe(() => undefined);
    const router = createIntrospectionRouter(state, { pprof: false });
    const app = express();
    app.use(router);
    await fleet.add({ name: 'real-a' }, { listener: app });
    try {
      const view = viewOf(fleet, { minIntervalMs: 0 });
      const report = await view.gather();
      expect(report.replicas[0]).toMatchObject({
        pod: 'real-a',
        reachable: true,
        error: null,
        ready: true,
        failing_checks: [],
        leading: true,
        holder: 'real-a',
        config_version: '42',
        last_cycle: { outcome: 'succeeded', failed_phase: null },
        cycles: { total: 1, succeeded: 1, failed: 0 },
        event_subscribers: 1,
        caches_fresh: null,
        certificate_not_after: null,
      });
      expect(report.replicas[0]!.last_cycle!.correlation_id).toEqual(expect.any(String));
      expect(report.replicas[0]!.uptime_seconds).toEqual(expect.any(Number));
      expect(report.status).toBe('healthy');
      // A component stops listening: the next gather says so.
      unsubscribe();
      state.addReadinessGate('dataplane', 'haproxy not answering');
      expect(kinds(await view.gather())).toEqual(['warning:not_ready:real-a', 'warning:subscribers_dropped:real-a']);
    } finally {
      await router.close();
    }
  });

  it('refuses wrong options at creation, with a "did you mean"', () => {
    const api = { listNamespacedPod: () => Promise.resolve({ items: [] }) };
    const base = { namespace: 'ctl', selector: 'app=ctl', tokenFile: null };
    expect(FLEET_VIEW_DEFAULTS).toEqual({
      port: 8080,
      scheme: 'http',
      basePath: '',
      tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      concurrency: 8,
      timeoutMs: 3000,
      maxReplicaBytes: 1_048_576,
      maxReplicas: 100,
      staleCycleMs: 600_000,
      certificateWarningMs: 604_800_000,
      minIntervalMs: 1000,
    });
    expect(() => createFleetView(api, { ...base, concurency: 4 } as never)).toThrow(
      /^createFleetView: unknown option "concurency" \(did you mean "concurrency"\?\); known options: namespace, selector, port/,
    );
    expect(() => createFleetView(api, { ...base, scheme: 'htps' as never })).toThrow(
      /createFleetView: scheme must be one of http, https, got "htps" \(did you mean "https"\?\)/,
    );
    expect(() => createFleetView(api, { namespace: 'ctl', tokenFile: null } as never)).toThrow(/createFleetView: selector is required/);
    expect(() => createFleetView(api, { ...base, selector: 'app in (a' })).toThrow(
      /createFleetView: selector must be a valid label selector: unbalanced parentheses/,
    );
    expect(() => createFleetView(api, { ...base, selector: '' })).toThrow(
      /createFleetView: selector must be a label selector that selects something/,
    );
    expect(() => createFleetView(api, { ...base, namespace: 'Bad_NS' })).toThrow(/createFleetView: namespace must be a namespace's name/);
    expect(() => createFleetView(api, { ...base, basePath: 'ctl/' })).toThrow(
      /createFleetView: basePath must be '' or a path like "\/ctl"/,
    );
    expect(() => createFleetView(api, { ...base, concurrency: 0 })).toThrow(
      /createFleetView: concurrency must be an integer from 1 to 256/,
    );
    expect(() => createFleetView({} as never, base)).toThrow(
      /createFleetView: api must be client-node's CoreV1Api \(an object with listNamespacedPod\), got an object/,
    );
    expect(() => createFleetView(api, { selector: 'app=ctl', tokenFile: null })).toThrow(
      /createFleetView: namespace was not given and \/var\/run\/secrets\/kubernetes.io\/serviceaccount\/namespace cannot be read .*: give namespace/,
    );
    expect(() => createFleetView(api, { namespace: 'ctl', selector: 'app=ctl' })).toThrow(
      /createFleetView: tokenFile \/var\/run\/secrets\/kubernetes.io\/serviceaccount\/token cannot be read/,
    );
    expect(() => createFleetView(api, { ...base, caFile: '/nonexistent/ca.crt' })).toThrow(
      /createFleetView: caFile \/nonexistent\/ca.crt cannot be read/,
    );
  });
});
