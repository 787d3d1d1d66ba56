/**
 * What Prometheus 3 changed, against the router: one Prometheus 3.16 (built from its module) scrapes
 * routers on a test server in every job set-up that matters, with no `fallback_scrape_protocol`
 * (so a missing or unusable `Content-Type` fails the scrape):
 *
 * - each exposition protocol forced alone (`scrape_protocols`: text 0.0.4, text 1.0.0, OpenMetrics
 *   0.0.1 and 1.0.0) and protobuf first (`scrape_native_histograms: true`, answered with the
 *   delimited protobuf exposition);
 * - each name escaping Prometheus 3 asks for (`metric_name_escaping_scheme`: `allow-utf-8`, the
 *   default, `underscores`, `dots`, `values`), and legacy name validation;
 * - a host metric whose name is outside the legacy set (written with underscores, stated as
 *   `escaping=underscores` whatever was asked), and a registry that renders itself.
 *
 * For each job: the `Accept` Prometheus sent (so the set-up under test is the one asked for), the
 * `Content-Type` the router answered, the target up with no scrape error, and the samples in the
 * TSDB, a UTF-8 label value intact. Then every answer of `/metrics` is checked over HTTP for a
 * `Content-Type` Prometheus 3 parses (GET, HEAD, gzip or not, any `Accept`, and the 405, 500 and
 * 503 answers). The shipped alert rules under Prometheus 3 are alert-rules.test.ts.
 *
 * Without the Prometheus 3 binaries (`bash scripts/build-peers.sh prometheus`) this file skips,
 * unless `CI` is set, where it fails.
 */
import zlib from 'node:zlib';
import express from 'express';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { createMetricsRouter } from '../../lib/metrics';
import { eventually } from '../helpers/eventually';
import { listen, request, type HttpResponse, type Listening } from '../helpers/http';
import { describeWithPrometheus, prometheusPeer, startPrometheus, type PrometheusServer } from './prometheus-harness';

const PEER = prometheusPeer(3);

const TEXT = 'text/plain; version=0.0.4; charset=utf-8';
const OPENMETRICS = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
const PROTOBUF = 'application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited';
/** A label value far from ASCII: Latin, CJK, an emoji outside the BMP, a quote and a backslash. */
const GREETING = 'Grüße, 世界 🌍 "q" \\';

/** Every name legacy; a UTF-8 label value, a counter, a histogram. */
function plainRegistry(): Registry {
  const registry = new Registry();
  new Gauge({ name: 'host_greeting_info', help: 'A UTF-8 label value: ünïcödé', labelNames: ['greeting'], registers: [registry] }).set(
    { greeting: GREETING },
    1,
  );
  new Counter({ name: 'host_jobs_total', help: 'Jobs', registers: [registry] }).inc(3);
  const histogram = new Histogram({ name: 'host_cycle_seconds', help: 'Cycles', buckets: [0.5], registers: [registry] });
  histogram.observe(0.2);
  histogram.observe(2);
  return registry;
}

/** A host metric (read through its public get()) whose metric and label names are outside the legacy set. */
function rewrittenRegistry(): Registry {
  const registry = new Registry();
  registry.registerMetric({
    name: 'host.dotted.gauge',
    help: 'A name with dots',
    type: 'gauge',
    get: async () => ({
      name: 'host.dotted.gauge',
      help: 'A name with dots',
      type: 'gauge',
      aggregator: 'sum',
      values: [{ value: 7, labels: { 'zone.name': 'zürich' } }],
    }),
  } as unknown as Parameters<Registry['registerMetric']>[0]);
  return registry;
}

/** A registry that renders itself (a subclass overriding metrics()): answered in its own format. */
class SelfRenderingRegistry extends Registry {
  override async metrics(): Promise<string> {
    return '# HELP own_gauge Rendered by the registry itself\n# TYPE own_gauge gauge\nown_gauge 5\n';
  }
}

/** One that fails whole: 500. */
class FailingRegistry extends Registry {
  override async metrics(): Promise<string> {
    throw new Error('the registry broke');
  }
}

/** A collect() slower than the router's scrape timeout: 503. */
function slowRegistry(): Registry {
  const registry = new Registry();
  new Gauge({
    name: 'host_slow',
    help: 'Slow',
    registers: [registry],
    async collect() {
      await new Promise((resolve) => setTimeout(resolve, 300));
      this.set(1);
    },
  });
  return registry;
}

/** The media types of Prometheus 3's `scrape_protocols`, as it writes them into `Accept` (config.ScrapeProtocolsHeaders). */
const PROTOCOL_MEDIA: Record<string, string> = {
  PrometheusProto: 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited',
  'PrometheusText0.0.4': 'text/plain;version=0.0.4',
  'PrometheusText1.0.0': 'text/plain;version=1.0.0',
  'OpenMetricsText0.0.1': 'application/openmetrics-text;version=0.0.1',
  'OpenMetricsText1.0.0': 'application/openmetrics-text;version=1.0.0',
};
const PROTO_FIRST = ['PrometheusProto', 'OpenMetricsText1.0.0', 'OpenMetricsText0.0.1', 'PrometheusText1.0.0', 'PrometheusText0.0.4'];

/**
 * The `Accept` Prometheus 3 sends for `protocols` and an escaping scheme: `escaping=` on text 1.0.0
 * and OpenMetrics 1.0.0 only, weights from 0.7 down (it counts six protocols, OpenMetrics 2.0
 * included), then `*` `/*`.
 */
function acceptFor(protocols: readonly string[], escaping: string): string {
  const ranges = protocols.map((protocol, i) => {
    const escaped = protocol === 'PrometheusText1.0.0' || protocol === 'OpenMetricsText1.0.0' ? `;escaping=${escaping}` : '';
    return `${PROTOCOL_MEDIA[protocol]}${escaped};q=0.${7 - i}`;
  });
  return [...ranges, `*/*;q=0.${7 - protocols.length}`].join(',');
}

/** One scrape job: what it asks, what the router must answer. */
interface Job {
  readonly name: string;
  /** Which router: every name legacy, a rewritten name, or a registry rendering itself. */
  readonly router: 'plain' | 'rewritten' | 'own';
  /** `scrape_protocols`; none is the global default (protobuf first here, native histograms on). */
  readonly protocols?: readonly string[];
  readonly escaping?: 'allow-utf-8' | 'underscores' | 'dots' | 'values';
  readonly validation?: 'legacy';
  /** The `Content-Type` the router answers. */
  readonly answered: string;
}

const JOBS: readonly Job[] = [
  // The harness's own job (`controller`): its scrapeProtocols option.
  { name: 'controller', router: 'plain', protocols: ['PrometheusText0.0.4'], answered: `${TEXT}; escaping=underscores` },
  { name: 'text-1.0.0', router: 'plain', protocols: ['PrometheusText1.0.0'], answered: `${TEXT}; escaping=allow-utf-8` },
  { name: 'om-0.0.1', router: 'plain', protocols: ['OpenMetricsText0.0.1'], answered: `${OPENMETRICS}; escaping=underscores` },
  { name: 'om-1.0.0', router: 'plain', protocols: ['OpenMetricsText1.0.0'], answered: `${OPENMETRICS}; escaping=allow-utf-8` },
  // Native histograms on: protobuf asked first, and answered; its range names no escaping (Prometheus
  // 3 puts `escaping` on the text ranges only), so the default is stated.
  { name: 'proto-first', router: 'plain', answered: `${PROTOBUF}; escaping=underscores` },
  ...(['underscores', 'dots', 'values'] as const).flatMap((escaping): Job[] => {
    // `dots` would write every `_` as `__`; the router keeps the names and says underscores.
    const stated = escaping === 'dots' ? 'underscores' : escaping;
    return [
      { name: `text-${escaping}`, router: 'plain', protocols: ['PrometheusText1.0.0'], escaping, answered: `${TEXT}; escaping=${stated}` },
      {
        name: `om-${escaping}`,
        router: 'plain',
        protocols: ['OpenMetricsText1.0.0'],
        escaping,
        answered: `${OPENMETRICS}; escaping=${stated}`,
      },
    ];
  }),
  {
    name: 'om-legacy-validation',
    router: 'plain',
    protocols: ['OpenMetricsText1.0.0'],
    validation: 'legacy',
    answered: `${OPENMETRICS}; escaping=underscores`,
  },
  // allow-utf-8 asked, but a name had to be rewritten: the answer says what was done.
  { name: 'rewritten-text', router: 'rewritten', protocols: ['PrometheusText1.0.0'], answered: `${TEXT}; escaping=underscores` },
  { name: 'rewritten-om', router: 'rewritten', protocols: ['OpenMetricsText1.0.0'], answered: `${OPENMETRICS}; escaping=underscores` },
  // Rendered by the registry itself: its own content type, whatever was asked.
  { name: 'own', router: 'own', protocols: ['OpenMetricsText1.0.0'], answered: TEXT },
];

/** The control job: an answer without a Content-Type. */
const UNTYPED_JOB = (host: string): string =>
  [
    '  - job_name: untyped',
    '    metrics_path: /untyped/metrics',
    '    params: { job: [untyped] }',
    `    static_configs: [{ targets: [${JSON.stringify(host)}] }]`,
  ].join('\n');

/** The escaping scheme a job asks for: its own, else `underscores` under legacy validation, else `allow-utf-8`. */
function askedEscaping(job: Job): string {
  return job.escaping ?? (job.validation === 'legacy' ? 'underscores' : 'allow-utf-8');
}

/** The job's entry under `scrape_configs:` (all but `controller`, which the harness writes). */
function scrapeConfig(job: Job, host: string): string {
  return [
    `  - job_name: ${job.name}`,
    `    metrics_path: /${job.router}/metrics`,
    // Tells the test server which job a request is of.
    `    params: { job: [${JSON.stringify(job.name)}] }`,
    ...(job.protocols === undefined ? [] : [`    scrape_protocols: [${job.protocols.join(', ')}]`]),
    ...(job.escaping === undefined ? [] : [`    metric_name_escaping_scheme: ${job.escaping}`]),
    ...(job.validation === undefined ? [] : [`    metric_name_validation_scheme: ${job.validation}`]),
    `    static_configs: [{ targets: [${JSON.stringify(host)}] }]`,
  ].join('\n');
}

/**
 * Go's `mime.ParseMediaType`, which Prometheus 3 runs on every scrape's `Content-Type`
 * (textparse.extractMediaType), made stricter rather than looser: `type/subtype` of RFC 9110
 * tokens, then `; name=value` parameters (token or quoted string), names case-insensitive and
 * unique. Undefined when it does not parse.
 */
function parseMediaType(value: string): { mediaType: string; params: Map<string, string> } | undefined {
  const token = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
  const head = new RegExp(`^\\s*(${token}/${token})\\s*`).exec(value);
  if (head === null) return undefined;
  const params = new Map<string, string>();
  const param = new RegExp(`^;\\s*(${token})=(${token}|"(?:[^"\\\\\\x00-\\x08\\x0a-\\x1f\\x7f]|\\\\[\\x09\\x20-\\x7e])*")\\s*`);
  let rest = value.slice(head[0].length);
  while (rest !== '') {
    const match = param.exec(rest);
    if (match === null) return undefined;
    const name = match[1]!.toLowerCase();
    if (params.has(name)) return undefined;
    const raw = match[2]!;
    params.set(name, raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw);
    rest = rest.slice(match[0].length);
  }
  return { mediaType: head[1]!.toLowerCase(), params };
}

/**
 * Why Prometheus 3 would not read a 200 answer with this `Content-Type` and body, or undefined:
 * textparse.extractMediaType's media types (OpenMetrics 2.0 only behind a feature flag),
 * expfmt's checks (`charset=utf-8` on OpenMetrics, text `version` 0.0.4 when given, a known
 * `escaping`), and the body being of the type stated.
 */
function unreadable(contentType: string | undefined, body: string): string | undefined {
  if (contentType === undefined) return 'no Content-Type';
  const parsed = parseMediaType(contentType);
  if (parsed === undefined) return `Content-Type ${JSON.stringify(contentType)} does not parse`;
  const { mediaType, params } = parsed;
  const escaping = params.get('escaping');
  if (escaping !== undefined && !['allow-utf-8', 'underscores', 'dots', 'values'].includes(escaping)) return `unknown escaping ${escaping}`;
  if (mediaType === 'application/openmetrics-text') {
    if (!['1.0.0', '0.0.1'].includes(params.get('version') ?? '')) return `OpenMetrics version ${params.get('version')}`;
    if (params.get('charset') !== 'utf-8') return 'OpenMetrics without charset=utf-8';
    if (body !== '' && !body.endsWith('# EOF\n')) return 'an OpenMetrics body without # EOF';
    return undefined;
  }
  if (mediaType === 'application/vnd.google.protobuf') {
    if (params.get('proto') !== 'io.prometheus.client.MetricFamily' || params.get('encoding') !== 'delimited') {
      return `protobuf with proto=${params.get('proto')} encoding=${params.get('encoding')}`;
    }
    if (body.startsWith('# ')) return 'a text body labelled protobuf';
    return undefined;
  }
  if (mediaType === 'text/plain') {
    if (!['0.0.4', undefined].includes(params.get('version'))) return `text version ${params.get('version')}`;
    if (body.includes('# EOF')) return 'an OpenMetrics body labelled text';
    return undefined;
  }
  return `media type ${mediaType}`;
}

/** The body as sent, gunzipped when it says so. */
function bodyOf(res: HttpResponse): string {
  return res.headers['content-encoding'] === 'gzip' ? zlib.gunzipSync(res.body).toString('utf8') : res.text;
}

interface Target {
  labels: Record<string, string>;
  health: string;
  lastError: string;
  lastScrape: string;
}

interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

describeWithPrometheus(PEER)(`${PEER.label} scraping the router in every protocol and name escaping`, () => {
  let target: Listening | undefined;
  let prometheus: PrometheusServer | undefined;
  /** What each job asked (`Accept`) and was answered (`Content-Type`), by the `job` query parameter. */
  const seen = new Map<string, { accepts: Set<string>; answered: Set<string> }>();

  beforeAll(async () => {
    const app = express();
    app.use((req, res, next) => {
      const job = typeof req.query['job'] === 'string' ? req.query['job'] : 'controller';
      res.on('finish', () => {
        if (!req.headers['user-agent']?.startsWith('Prometheus/')) return;
        const entry = seen.get(job) ?? { accepts: new Set(), answered: new Set() };
        entry.accepts.add(String(req.headers['accept']));
        entry.answered.add(`${res.statusCode} ${String(res.getHeader('content-type'))}`);
        seen.set(job, entry);
      });
      next();
    });
    // The control: an answer without Content-Type, which Prometheus 3 must refuse here.
    app.get('/untyped/metrics', (_req, res) => {
      res.writeHead(200);
      res.end('host_untyped 1\n');
    });
    app.use('/plain', createMetricsRouter(plainRegistry()));
    app.use('/rewritten', createMetricsRouter(rewrittenRegistry()));
    app.use('/own', createMetricsRouter(new SelfRenderingRegistry()));
    app.use('/failing', createMetricsRouter(new FailingRegistry(), { onError: () => undefined }));
    app.use('/slow', createMetricsRouter(slowRegistry(), { scrapeTimeoutMs: 50, onError: () => undefined }));
    target = await listen(app);
  });

  afterAll(async () => {
    const results = await Promise.allSettled([prometheus?.stop(), target?.close()]);
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;
  });

  it('scrapes every job with no error: the asked protocol and escaping, a valid Content-Type, the samples stored', async () => {
    const host = new URL(target!.origin).host;
    const controller = JOBS[0]!;
    prometheus = await startPrometheus(PEER, new URL(`${target!.origin}/plain/metrics`), {
      scrapeProtocols: controller.protocols,
      nativeHistograms: true,
      scrapeConfigs: [...JOBS.slice(1).map((job) => scrapeConfig(job, host)), UNTYPED_JOB(host)].join('\n'),
    });
    const server = prometheus;
    const withLog = async <T>(step: Promise<T>): Promise<T> => {
      try {
        return await step;
      } catch (err) {
        throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- prometheus log ---\n${server.log().slice(-4000)}`);
      }
    };

    const targets = await withLog(
      eventually(
        async () => {
          const { activeTargets } = await server.api<{ activeTargets: Target[] }>('/api/v1/targets');
          const done = activeTargets.filter((t) => t.health !== 'unknown' && !t.lastScrape.startsWith('0001-'));
          return done.length === JOBS.length + 1 ? done : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 200, what: 'a completed scrape of every job' },
      ),
    );
    expect(Object.fromEntries(targets.map((t) => [t.labels['job'], [t.health, t.lastError]]))).toEqual({
      ...Object.fromEntries(JOBS.map((job) => [job.name, ['up', '']])),
      // The control: this Prometheus does fail a scrape for its Content-Type.
      untyped: ['down', 'non-compliant scrape target sending blank Content-Type and no fallback_scrape_protocol specified for target'],
    });

    // What each job asked and what it was answered, on every scrape so far.
    const asked = (job: Job) => acceptFor(job.protocols ?? PROTO_FIRST, askedEscaping(job));
    expect(
      Object.fromEntries(
        [...seen]
          .filter(([job]) => job !== 'untyped')
          .map(([job, { accepts, answered }]) => [job, { accepts: [...accepts], answered: [...answered] }]),
      ),
    ).toEqual(Object.fromEntries(JOBS.map((job) => [job.name, { accepts: [asked(job)], answered: [`200 ${job.answered}`] }])));

    const query = async (promql: string) =>
      (await server.api<{ result: VectorSample[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`)).result;
    const plain = JOBS.filter((job) => job.router === 'plain').map((job) => job.name);
    // Every plain job stored the same series, the UTF-8 label value intact, the values right.
    const names = await withLog(
      eventually(
        async () => {
          const found = await query('count by (job, __name__) ({__name__=~"host_.*", job!~"rewritten-.*"})');
          return found.length === plain.length * 5 ? found : undefined;
        },
        { timeoutMs: 15_000, intervalMs: 200, what: 'the host_ series of every job' },
      ),
    );
    const byJob = (samples: VectorSample[], value: (s: VectorSample) => unknown) =>
      Object.fromEntries(
        [...new Set(samples.map((s) => s.metric['job']!))].sort().map((job) => [
          job,
          samples
            .filter((s) => s.metric['job'] === job)
            .map(value)
            .sort(),
        ]),
      );
    const everyPlainJob = <T>(value: T) => Object.fromEntries([...plain].sort().map((job) => [job, value]));
    expect(byJob(names, (s) => s.metric['__name__'])).toEqual(
      everyPlainJob([
        'host_cycle_seconds_bucket',
        'host_cycle_seconds_count',
        'host_cycle_seconds_sum',
        'host_greeting_info',
        'host_jobs_total',
      ]),
    );
    expect(byJob(await query('host_greeting_info'), (s) => [s.metric['greeting'], s.value[1]])).toEqual(everyPlainJob([[GREETING, '1']]));
    expect(byJob(await query('host_jobs_total'), (s) => s.value[1])).toEqual(everyPlainJob(['3']));
    // Classic buckets, `le` a float as Prometheus 3 stores it, also where native histograms are on.
    expect(byJob(await query('host_cycle_seconds_bucket'), (s) => [s.metric['le'], s.value[1]])).toEqual(
      everyPlainJob([
        ['+Inf', '2'],
        ['0.5', '1'],
      ]),
    );
    const metadata = await server.api<Record<string, Array<{ help: string }>>>('/api/v1/metadata?metric=host_greeting_info');
    expect(metadata['host_greeting_info']?.map((m) => m.help)).toEqual(['A UTF-8 label value: ünïcödé']);
    // The rewritten names, stored as written; the registry rendering itself, as it rendered.
    expect(byJob(await query('{__name__=~"host_dotted.*|own_.*"}'), (s) => s.metric)).toEqual({
      'rewritten-om': [{ __name__: 'host_dotted_gauge', instance: host, job: 'rewritten-om', zone_name: 'zürich' }],
      'rewritten-text': [{ __name__: 'host_dotted_gauge', instance: host, job: 'rewritten-text', zone_name: 'zürich' }],
      own: [{ __name__: 'own_gauge', instance: host, job: 'own' }],
    });
  });

  describe('every answer of /metrics carries a Content-Type Prometheus 3 reads', () => {
    const ACCEPTS = [
      undefined,
      '*/*',
      acceptFor(['PrometheusText0.0.4'], 'allow-utf-8'),
      acceptFor(['PrometheusText1.0.0'], 'values'),
      acceptFor(['OpenMetricsText0.0.1'], 'allow-utf-8'),
      acceptFor(['OpenMetricsText1.0.0'], 'dots'),
      acceptFor(PROTO_FIRST, 'allow-utf-8'),
      acceptFor(['OpenMetricsText1.0.0', 'OpenMetricsText0.0.1', 'PrometheusText1.0.0', 'PrometheusText0.0.4'], 'underscores'),
      'application/openmetrics-text;version=2.0.0',
      'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited',
      'text/plain;q=0,application/openmetrics-text;q=0,*/*;q=0',
      'nonsense',
    ];
    const cases = ['plain', 'rewritten', 'own'].flatMap((router) =>
      ['GET', 'HEAD'].flatMap((method) =>
        ['gzip', 'identity'].flatMap((encoding) => ACCEPTS.map((accept) => ({ router, method, encoding, accept }))),
      ),
    );

    it(`answers 200 with one for each of ${cases.length} requests (routers, GET and HEAD, gzip or not, any Accept)`, async () => {
      const problems: string[] = [];
      for (const { router, method, encoding, accept } of cases) {
        const res = await request(`${target!.origin}/${router}/metrics`, {
          method,
          headers: { 'Accept-Encoding': encoding, ...(accept === undefined ? {} : { Accept: accept }) },
        });
        const what = `${method} /${router}/metrics, ${encoding}, Accept ${accept ?? '(none)'}`;
        if (res.status !== 200) problems.push(`${what}: status ${res.status}`);
        if ((res.headers['content-encoding'] === 'gzip') !== (encoding === 'gzip')) {
          problems.push(`${what}: Content-Encoding ${res.headers['content-encoding']}`);
        }
        // A HEAD's headers are a GET's: checked against the GET's body.
        const body = method === 'HEAD' ? '' : bodyOf(res);
        // A text body starts with a family's HELP; a protobuf one with its first family's length, then field 1 (its name).
        const protobuf = res.headers['content-type']?.startsWith('application/vnd.google.protobuf;') === true;
        const looksRight = protobuf ? /^[\s\S]{1,5}?\n/.test(body) && !body.startsWith('# ') : /^# (HELP|TYPE) /.test(body);
        if (method === 'GET' && !looksRight) problems.push(`${what}: body ${JSON.stringify(body.slice(0, 80))}`);
        const why = unreadable(res.headers['content-type'], body);
        if (why !== undefined) problems.push(`${what}: ${why}`);
      }
      expect(problems).toEqual([]);
    });

    it('answers 405, 500 and 503 with a JSON error under a Content-Type that parses', async () => {
      const answers = [
        await request(`${target!.origin}/plain/metrics`, { method: 'POST' }),
        await request(`${target!.origin}/failing/metrics`),
        await request(`${target!.origin}/slow/metrics`),
      ];
      expect(answers.map((res) => res.status)).toEqual([405, 500, 503]);
      for (const res of answers) {
        const parsed = parseMediaType(res.headers['content-type'] ?? '');
        expect(parsed?.mediaType).toBe('application/json');
        expect(typeof res.json<{ error: unknown }>().error).toBe('string');
      }
    });

    it('the Content-Type check refuses what Prometheus 3 refuses (it can fail)', () => {
      expect(unreadable(undefined, '')).toBe('no Content-Type');
      expect(unreadable('', '')).toMatch(/does not parse/);
      expect(unreadable('text/plain; version=0.0.4; charset=utf-8; escaping=underscores', '# HELP a b\n')).toBeUndefined();
      expect(unreadable('text/plain; version=0.0.4; charset', '')).toMatch(/does not parse/);
      expect(unreadable('text/plain; version=0.0.4; version=0.0.4', '')).toMatch(/does not parse/);
      expect(unreadable('text/plain; escaping=utf8', '')).toBe('unknown escaping utf8');
      expect(unreadable('application/openmetrics-text; version=1.0.0', '')).toBe('OpenMetrics without charset=utf-8');
      expect(unreadable('application/openmetrics-text; version=2.0.0; charset=utf-8', '')).toBe('OpenMetrics version 2.0.0');
      expect(unreadable('application/openmetrics-text; version=1.0.0; charset=utf-8', '# HELP a b\n')).toBe(
        'an OpenMetrics body without # EOF',
      );
      expect(unreadable('application/json', '')).toBe('media type application/json');
      expect(unreadable('application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=text', '')).toBe(
        'protobuf with proto=io.prometheus.client.MetricFamily encoding=text',
      );
      expect(unreadable('text/plain; version=1.0.0', '')).toBe('text version 1.0.0');
      expect(unreadable('text/plain', '# EOF\n')).toBe('an OpenMetrics body labelled text');
    });
  });
});
