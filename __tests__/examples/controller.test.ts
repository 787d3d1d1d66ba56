import { eventually } from '../helpers/eventually';
import { startExample, type ExampleApp } from '../helpers/example-app';
import { request } from '../helpers/http';
import { parseExposition, sampleValue, type Exposition, type Sample } from '../metrics/helpers/exposition-parser';

async function get(url: string): Promise<{ status: number; body: unknown; text: string; type: string }> {
  const res = await request(url);
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text: res.text, type: res.headers['content-type'] ?? '' };
}

// The example app starts a child process and reconciles on its own clock: generous deadlines.
const SLOW = { timeoutMs: 10_000, intervalMs: 100 };

describe('example controller app', () => {
  let app: ExampleApp;
  beforeAll(async () => {
    app = await startExample();
    // Wait for a full reconcile and deployment so that every variable has a value.
    await eventually(async () => (await get(`${app.debugUrl}/debug/vars/auxfiles`)).status === 200, {
      ...SLOW,
      what: 'the first deployment',
    });
  });
  afterAll(async () => {
    await app.stop();
  });

  it('serves /healthz and the variable list', async () => {
    expect(await get(`${app.debugUrl}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    const vars = await get(`${app.debugUrl}/debug/vars`);
    expect(vars.status).toBe(200);
    expect((vars.body as { vars: string[] }).vars).toEqual(
      expect.arrayContaining([
        'config',
        'credentials',
        'rendered',
        'auxfiles',
        'resources',
        'events',
        'state',
        'uptime',
        'leader_election',
        'simulation',
      ]),
    );
  });

  it('serves every built-in variable with the spec body shapes', async () => {
    const config = (await get(`${app.debugUrl}/debug/vars/config`)).body as Record<string, unknown>;
    expect(Object.keys(config).sort()).toEqual(['config', 'updated', 'version']);
    expect(typeof (config['config'] as { templates: Record<string, string> }).templates['haproxy.cfg']).toBe('string');
    expect(Array.isArray((config['config'] as { watched_resources: unknown[] }).watched_resources)).toBe(true);
    expect(config['updated']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const rendered = (await get(`${app.debugUrl}/debug/vars/rendered`)).body as Record<string, unknown>;
    expect(rendered['config']).toMatch(/^global\n/);
    expect(rendered['size']).toBe(Buffer.byteLength(rendered['config'] as string));

    const aux = (await get(`${app.debugUrl}/debug/vars/auxfiles`)).body as Record<string, Record<string, unknown>>;
    expect(aux['summary']).toEqual({ ssl_count: 1, map_count: 1, general_count: 1 });
    expect(JSON.stringify(aux)).not.toContain('PRIVATE KEY');

    const resources = (await get(`${app.debugUrl}/debug/vars/resources`)).body as Record<string, number>;
    expect(Object.keys(resources).sort()).toEqual(['endpoints', 'ingresses', 'lb-pods', 'services']);

    const credentials = await get(`${app.debugUrl}/debug/vars/credentials`);
    expect(credentials.body).toMatchObject({ credentials: { dataplane: { set: true, fields_set: ['password', 'username'] } } });
    expect(credentials.text).not.toContain('admin');

    const uptime = (await get(`${app.debugUrl}/debug/vars/uptime`)).body as Record<string, unknown>;
    expect(typeof uptime['uptime_seconds']).toBe('number');
    expect(uptime['uptime_string']).toMatch(/^[\d.hms]+$/);

    const state = (await get(`${app.debugUrl}/debug/vars/state`)).body as Record<string, unknown>;
    expect(state).toEqual(
      expect.objectContaining({ snapshot_time: expect.any(String), config: expect.any(Object), events: expect.any(Array) }),
    );
  });

  it('publishes the controller loop events', async () => {
    const types = await eventually(
      async () => {
        const events = (await get(`${app.debugUrl}/debug/vars/events`)).body as { type: string; summary: string; timestamp: string }[];
        const seen = new Set(events.map((e) => e.type));
        return ['reconciliation.triggered', 'config.validated', 'reconciliation.completed', 'deployment.completed'].every((t) =>
          seen.has(t),
        )
          ? seen
          : undefined;
      },
      { ...SLOW, what: 'the loop events' },
    );
    expect(types.has('deployment.started')).toBe(true);
    const events = (await get(`${app.debugUrl}/debug/vars/events`)).body as unknown[];
    expect(events.length).toBeLessThanOrEqual(100);
    expect((await get(`${app.debugUrl}/debug/vars/events?limit=5`)).body).toHaveLength(5);
  });

  it('answers the spec field selections', async () => {
    const version = await get(`${app.debugUrl}/debug/vars/config?field={.version}`);
    expect(typeof version.body).toBe('string');
    const template = await get(`${app.debugUrl}/debug/vars/config?field=${encodeURIComponent('{.config.templates.haproxy\\.cfg}')}`);
    expect(template.body).toMatch(/^global/);
    const renderedText = await get(`${app.debugUrl}/debug/vars/rendered?field={.config}`);
    expect(renderedText.body).toMatch(/^global\n/);
    expect(typeof (await get(`${app.debugUrl}/debug/vars/rendered?field={.size}`)).body).toBe('number');
    expect(typeof (await get(`${app.debugUrl}/debug/vars/resources?field={.ingresses}`)).body).toBe('number');
    expect((await get(`${app.debugUrl}/debug/vars/events?field={[0]}`)).body).toMatchObject({ type: expect.any(String) });
    const text = await get(`${app.debugUrl}/debug/vars/rendered?field={.config}&output=text`);
    expect(text.type).toMatch(/^text\/plain/);
    expect(text.text).toMatch(/^global\n/);
  });

  it('answers bad requests with JSON errors', async () => {
    const unknown = await get(`${app.debugUrl}/debug/vars/nope`);
    expect(unknown.status).toBe(404);
    expect((unknown.body as { error: string }).error).toContain('known variables: config, credentials');
    const bad = await get(`${app.debugUrl}/debug/vars/config?field={.version`);
    expect(bad.status).toBe(400);
    expect(typeof (bad.body as { error: string }).error).toBe('string');
    const post = await request(`${app.debugUrl}/debug/vars`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers['allow']).toBe('GET, HEAD');
  });
});

describe('example controller app metrics', () => {
  let app: ExampleApp;
  beforeAll(async () => {
    // Validation fails often enough that the work queue retries.
    app = await startExample({ simulation: { reconcileIntervalMs: 100, validationFailureRate: 0.3 } });
    await app.waitForLog((l) => l['msg'] === 'became leader');
  });
  afterAll(async () => {
    await app.stop();
  });

  const controller = { controller: 'loadbalancer' };
  const queue = { name: 'loadbalancer', controller: 'loadbalancer' };

  it("shows every controller-runtime and workqueue family and build_info with the work queue's real values", async () => {
    const scrapeText = async (): Promise<Exposition> => parseExposition((await request(`${app.metricsUrl}/metrics`)).text);
    const e = await eventually(
      async () => {
        const exposition = await scrapeText();
        const value = (name: string, labels: Record<string, string>) => sampleValue(exposition, name, labels) ?? 0;
        return value('controller_runtime_reconcile_total', { ...controller, result: 'success' }) >= 3 &&
          value('workqueue_retries_total', queue) >= 1
          ? exposition
          : undefined;
      },
      { ...SLOW, what: 'successes and a retry' },
    );
    const value = (name: string, labels: Record<string, string> = {}) => sampleValue(e, name, labels);
    const errors = value('controller_runtime_reconcile_errors_total', controller)!;
    expect(errors).toBeGreaterThan(0);
    expect(value('controller_runtime_reconcile_total', { ...controller, result: 'error' })).toBe(errors);
    expect(value('controller_runtime_reconcile_time_seconds_count', controller)).toBe(
      value('controller_runtime_reconcile_total', { ...controller, result: 'success' })! + errors,
    );
    // One worker: at most one reconciliation at a time.
    expect(value('controller_runtime_max_concurrent_reconciles', controller)).toBe(1);
    expect([0, 1]).toContain(value('controller_runtime_active_workers', controller));
    expect(value('leader_election_master_status', { name: 'controller-introspection-example' })).toBe(1);
    // Every key the worker took was added, and waited; an add not yet taken is the depth (one
    // informer tick may fall between the gauge's read and the counters').
    const adds = value('workqueue_adds_total', queue)!;
    const taken = value('workqueue_queue_duration_seconds_count', queue)!;
    expect(adds).toBeGreaterThan(0);
    expect(taken).toBeGreaterThan(0);
    expect(Math.abs(adds - taken - value('workqueue_depth', queue)!)).toBeLessThanOrEqual(1);
    expect(value('workqueue_work_duration_seconds_count', queue)).toBeGreaterThanOrEqual(taken - 1);
    expect(value('workqueue_work_duration_seconds_sum', queue)).toBeGreaterThan(0);
    expect(value('workqueue_unfinished_work_seconds', queue)).toBeGreaterThanOrEqual(0);
    expect(value('workqueue_longest_running_processor_seconds', queue)).toBeGreaterThanOrEqual(0);
    expect(value('workqueue_retries_total', queue)).toBeGreaterThan(0);
    const info = e.families.get('ctl_build_info')!.samples[0]!;
    expect(info.labels).toMatchObject({ version: '1.0.0-example', node_version: expect.stringMatching(/^v\d+\./) });
    expect(info.value).toBe(1);
  });

  it('leads from an exemplar in the OpenMetrics answer to the events of that cycle', async () => {
    const res = await request(`${app.metricsUrl}/metrics`, { headers: { Accept: 'application/openmetrics-text; version=1.0.0' } });
    const e = parseExposition(res.text);
    const withExemplar = (name: string): Sample[] => e.families.get(name)!.samples.filter((s) => s.exemplar !== undefined);
    const buckets = withExemplar('controller_runtime_reconcile_time_seconds');
    expect(buckets.length).toBeGreaterThan(0);
    expect(withExemplar('ctl_reconciliation_duration_seconds').length).toBeGreaterThan(0);
    const latest = buckets.reduce((a, b) => (a.exemplar!.timestamp! >= b.exemplar!.timestamp! ? a : b));
    const id = latest.exemplar!.labels['correlation_id']!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const events = (await get(`${app.debugUrl}/debug/vars/events?correlation_id=${id}`)).body as Array<{
      type: string;
      correlation_id: string;
    }>;
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(events.map((event) => event.correlation_id))).toEqual(new Set([id]));
    expect(events.map((event) => event.type)).toContain('reconciliation.triggered');
    // Text answers carry none.
    expect((await request(`${app.metricsUrl}/metrics`)).text).not.toContain('correlation_id');
  });
});

describe('example controller app with debugPort 0', () => {
  it('removes the debug endpoints and keeps health checks answering', async () => {
    const app = await startExample({ debugPort: 0 });
    try {
      expect(app.debugUrl).toBeUndefined();
      expect(await get(`${app.healthUrl}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect((await get(`${app.healthUrl}/readyz`)).text).toBe('ok');
      expect((await get(`${app.healthUrl}/debug/vars`)).status).toBe(404);
      expect((await get(`${app.healthUrl}/debug/pprof/`)).status).toBe(404);
    } finally {
      await app.stop();
    }
  });
});

describe('example controller app shutdown', () => {
  it('exits by itself on SIGTERM: nothing keeps the process alive', async () => {
    const app = await startExample();
    await get(`${app.debugUrl}/debug/vars/state`);
    expect(await app.stop(8000)).toBe(0);
    expect(app.logs.some((l) => l['msg'] === 'stopped')).toBe(true);
  });
});
