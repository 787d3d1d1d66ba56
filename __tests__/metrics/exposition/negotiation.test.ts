/**
 * Per-request format negotiation in the router, over real sockets: what each `Accept` gets,
 * headers, HEAD, gzip, and that no sequence of scrapes in either format changes the registry.
 */
import { gunzipSync } from 'node:zlib';
import express from 'express';
import { Counter, Gauge, Histogram, Registry, type OpenMetricsContentType, type RegistryContentType } from 'prom-client';
import { createMetricsRouter } from '../../../lib/metrics';
import { PROTOBUF_CONTENT_TYPE, renderExpositionText } from '../../../lib/metrics/exposition';
import { listen, request, type Listening } from '../../helpers/http';

const TEXT = 'text/plain; version=0.0.4; charset=utf-8';
const OPENMETRICS = 'application/openmetrics-text; version=1.0.0; charset=utf-8';
/** What the router answers: the format's content type and the names' escaping (`underscores` unless asked otherwise). */
const textType = (escaping = 'underscores'): string => `${TEXT}; escaping=${escaping}`;
const omType = (escaping = 'underscores'): string => `${OPENMETRICS}; escaping=${escaping}`;
const protoType = (escaping = 'underscores'): string => `${PROTOBUF_CONTENT_TYPE}; escaping=${escaping}`;
/** What Prometheus 2.42 sends on every scrape. */
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
/** What Prometheus 3 sends by default (UTF-8 names allowed), as its scrape/scrape.go acceptHeader builds it. */
const PROMETHEUS_3_ACCEPT =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,' +
  'text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2';
/** Prometheus 3 with `metric_name_validation_scheme: legacy`. */
const PROMETHEUS_3_LEGACY = PROMETHEUS_3_ACCEPT.replace(/allow-utf-8/g, 'underscores');
/** Prometheus 3 with protobuf first (native histograms on): answered with protobuf. */
const PROMETHEUS_3_PROTOBUF = `application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,${PROMETHEUS_3_ACCEPT}`;
/** Prometheus 3 with `scrape_protocols: [OpenMetricsText1.0.0, PrometheusText0.0.4]`: Express's negotiation answered text. */
const PROMETHEUS_3_OM_THEN_TEXT =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.3';
/** Prometheus 3 with `scrape_protocols: [PrometheusText1.0.0]`. */
const PROMETHEUS_3_TEXT_ONLY = 'text/plain;version=1.0.0;escaping=allow-utf-8;q=0.6,*/*;q=0.5';

function populate(registry: Registry<RegistryContentType>): void {
  new Counter({ name: 'jobs_total', help: 'Jobs', labelNames: ['kind'], registers: [registry] }).inc({ kind: 'a' }, 3);
  new Counter({ name: 'plain', help: 'A counter named without _total', registers: [registry] }).inc();
  new Gauge({ name: 'queue_depth', help: 'Depth', registers: [registry] }).set(NaN);
  new Histogram({ name: 'work_seconds', help: 'Work', buckets: [1], registers: [registry] }).observe(0.5);
}

function textRegistry(): Registry {
  const registry = new Registry();
  populate(registry);
  return registry;
}

function openMetricsRegistry(): Registry<OpenMetricsContentType> {
  const registry = new Registry<OpenMetricsContentType>();
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  populate(registry);
  return registry;
}

async function serve(registry: Registry<RegistryContentType>, options?: Parameters<typeof createMetricsRouter>[1]): Promise<Listening> {
  const app = express();
  app.use(createMetricsRouter(registry, options));
  return listen(app);
}

describe('format negotiation from Accept', () => {
  let text: Listening;
  let om: Listening;
  beforeAll(async () => {
    text = await serve(textRegistry());
    om = await serve(openMetricsRegistry());
  });
  afterAll(async () => {
    await Promise.all([text.close(), om.close()]);
  });

  // [Accept, what a text registry answers, what an OpenMetrics registry answers]
  const CASES: ReadonlyArray<readonly [string | undefined, string, string]> = [
    [PROMETHEUS_ACCEPT, omType(), omType()],
    [PROMETHEUS_3_ACCEPT, omType('allow-utf-8'), omType('allow-utf-8')],
    [PROMETHEUS_3_LEGACY, omType(), omType()],
    [PROMETHEUS_3_PROTOBUF, protoType(), protoType()],
    // Prometheus 3 with protobuf and UTF-8 names: the escaping its protobuf range asks for.
    [PROMETHEUS_3_PROTOBUF.replace(';q=0.7', ';escaping=allow-utf-8;q=0.7'), protoType('allow-utf-8'), protoType('allow-utf-8')],
    // Protobuf is asked for by name only: both parameters, exactly.
    ['application/vnd.google.protobuf', textType(), omType()],
    ['application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily', textType(), omType()],
    ['application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text', textType(), omType()],
    ['application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0', textType(), omType()],
    [
      'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.1, text/plain;q=0.5',
      textType(),
      textType(),
    ],
    [PROMETHEUS_3_TEXT_ONLY, textType('allow-utf-8'), textType('allow-utf-8')],
    [PROMETHEUS_3_OM_THEN_TEXT, omType('allow-utf-8'), omType('allow-utf-8')],
    [undefined, textType(), omType()],
    ['*/*', textType(), omType()],
    ['*/*;escaping=allow-utf-8', textType('allow-utf-8'), omType('allow-utf-8')],
    ['text/plain;version=0.0.4', textType(), textType()],
    // Text 1.0.0 with legacy names is text 0.0.4: answered with text, labelled 0.0.4.
    ['text/plain;version=1.0.0', textType(), textType()],
    ['text/plain', textType(), textType()],
    ['text/plain; charset=utf-8', textType(), textType()],
    ['text/*', textType(), textType()],
    ['application/openmetrics-text', omType(), omType()],
    ['application/openmetrics-text; version=1.0.0', omType(), omType()],
    ['application/openmetrics-text;version="1.0.0"', omType(), omType()],
    ['application/openmetrics-text;version=0.0.1', omType(), omType()],
    ['Application/OpenMetrics-Text; Version=1.0.0', omType(), omType()],
    // Parameters other than version never disqualify a range; escaping is answered as asked when it can be.
    ['application/openmetrics-text;version=1.0.0;escaping=allow-utf-8', omType('allow-utf-8'), omType('allow-utf-8')],
    ['application/openmetrics-text;version=1.0.0;escaping=values', omType('values'), omType('values')],
    ['application/openmetrics-text;version=1.0.0;escaping=underscores', omType(), omType()],
    // dots would rewrite every `_`; not done, and the answer says what was.
    ['application/openmetrics-text;version=1.0.0;escaping=dots', omType(), omType()],
    ['application/openmetrics-text;version=1.0.0;escaping=bogus', omType(), omType()],
    ['application/openmetrics-text;version=1.0.0;charset=iso-8859-1;foo="a,b;c"', omType(), omType()],
    ['text/plain;version=0.0.4;escaping=allow-utf-8;charset=utf-8', textType('allow-utf-8'), textType('allow-utf-8')],
    ['application/openmetrics-text;version=1.0.0;q=0.2, text/plain;q=0.9', textType(), textType()],
    ['text/plain;q=0.1, application/openmetrics-text;q=0.2', omType(), omType()],
    ['text/plain;q=0, */*', omType(), omType()],
    ['application/openmetrics-text;q=0, */*;q=0.5', textType(), textType()],
    // Equal weights: the more specific range (a version) wins, then the one named first.
    ['text/plain, application/openmetrics-text;version=1.0.0', omType(), omType()],
    ['text/plain, application/openmetrics-text', textType(), textType()],
    ['application/openmetrics-text, text/plain', omType(), omType()],
    // The most specific range decides a format's weight, whatever its order.
    ['application/openmetrics-text;version=1.0.0;q=0.1, application/openmetrics-text;q=1, text/plain;q=0.5', textType(), textType()],
    // A malformed weight drops its element only.
    ['application/openmetrics-text;q=2, text/plain;q=0.1', textType(), textType()],
    ['application/openmetrics-text;q=abc', textType(), omType()],
    // Nothing acceptable: the registry's own format, never a 406.
    ['application/openmetrics-text;version=2.0.0', textType(), omType()],
    ['text/plain;version=2.0.0', textType(), omType()],
    ['application/json', textType(), omType()],
    ['text/plain;q=0, application/openmetrics-text;q=0', textType(), omType()],
    ['garbage;;;,,', textType(), omType()],
    ['', textType(), omType()],
  ];

  it.each(CASES)('Accept %p', async (accept, forText, forOpenMetrics) => {
    const headers = accept === undefined ? {} : { Accept: accept };
    for (const [server, expected] of [
      [text, forText],
      [om, forOpenMetrics],
    ] as const) {
      const res = await request(`${server.origin}/metrics`, { headers });
      expect({ accept, status: res.status, type: res.headers['content-type'] }).toEqual({ accept, status: 200, type: expected });
      expect(res.text.endsWith('# EOF\n')).toBe(expected.startsWith(OPENMETRICS));
    }
  });
});

describe('headers, HEAD and gzip in both formats', () => {
  let server: Listening;
  let plain: Listening;
  let registry: Registry;
  beforeAll(async () => {
    registry = textRegistry();
    server = await serve(registry);
    plain = await serve(registry, { compression: false });
  });
  afterAll(async () => {
    await Promise.all([server.close(), plain.close()]);
  });

  it.each([
    ['text/plain;version=0.0.4', textType(), 'text'],
    [PROMETHEUS_ACCEPT, omType(), 'openmetrics'],
  ] as const)('Accept %p: body, Content-Type, Vary, Cache-Control, Content-Length, gzip and HEAD', async (accept, contentType, format) => {
    const expected = format === 'text' ? await registry.metrics() : await renderExpositionText(registry, 'openmetrics');
    const identity = await request(`${server.origin}/metrics`, { headers: { Accept: accept } });
    expect(identity.text).toBe(expected);
    const gzipped = await request(`${server.origin}/metrics`, { headers: { Accept: accept, 'Accept-Encoding': 'gzip' } });
    expect(gunzipSync(gzipped.body).toString('utf8')).toBe(expected);
    for (const res of [identity, gzipped]) {
      expect(res.headers['content-type']).toBe(contentType);
      expect(res.headers['vary']).toBe('Accept, Accept-Encoding');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['content-length']).toBe(String(res.body.length));
    }
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    for (const headers of [{ Accept: accept }, { Accept: accept, 'Accept-Encoding': 'gzip' }]) {
      const get = await request(`${server.origin}/metrics`, { headers });
      const head = await request(`${server.origin}/metrics`, { method: 'HEAD', headers });
      expect(head.body.length).toBe(0);
      for (const name of ['content-type', 'content-encoding', 'content-length', 'cache-control', 'vary']) {
        expect({ name, value: head.headers[name] }).toEqual({ name, value: get.headers[name] });
      }
    }
    const uncompressed = await request(`${plain.origin}/metrics`, { headers: { Accept: accept, 'Accept-Encoding': 'gzip' } });
    expect(uncompressed.headers['vary']).toBe('Accept');
    expect(uncompressed.text).toBe(expected);
  });
});

describe('the registry is never modified by a scrape', () => {
  it.each([
    ['a text registry', textRegistry],
    ['an OpenMetrics registry', openMetricsRegistry],
  ] as const)('%s: alternating scrapes in both formats leave it as it was', async (_label, create) => {
    const registry = create();
    const server = await serve(registry as Registry<RegistryContentType>);
    try {
      const names = registry.getMetricsAsArray().map((metric) => metric.name);
      const contentType = registry.contentType;
      const values = JSON.stringify(await registry.getMetricsAsJSON());
      // Text is safe to read from prom-client (its OpenMetrics mode would rename counters in place).
      const text = await renderExpositionText(registry, 'text');
      const answers = new Map<string, string>();
      for (let i = 0; i < 6; i += 1) {
        const accept = i % 2 === 0 ? PROMETHEUS_ACCEPT : 'text/plain;version=0.0.4';
        const res = await request(`${server.origin}/metrics`, { headers: { Accept: accept } });
        expect(res.status).toBe(200);
        if (answers.has(accept)) expect(res.text).toBe(answers.get(accept));
        answers.set(accept, res.text);
      }
      expect(answers.get('text/plain;version=0.0.4')).toBe(text);
      expect(registry.getMetricsAsArray().map((metric) => metric.name)).toEqual(names);
      expect(registry.contentType).toBe(contentType);
      expect(JSON.stringify(await registry.getMetricsAsJSON())).toBe(values);
      if (registry.contentType === TEXT) expect(await registry.metrics()).toBe(text);
    } finally {
      await server.close();
    }
  });
});

describe('a registry the renderer cannot read', () => {
  it('is answered by its own metrics(), in its own format, whatever Accept says', async () => {
    class Wrapped extends Registry {
      override async metrics(): Promise<string> {
        return `# wrapped by the host\n${await super.metrics()}`;
      }
    }
    const registry = new Wrapped();
    populate(registry);
    const server = await serve(registry);
    try {
      const res = await request(`${server.origin}/metrics`, { headers: { Accept: PROMETHEUS_ACCEPT } });
      expect(res.headers['content-type']).toBe(TEXT);
      expect(res.text).toBe(await registry.metrics());
    } finally {
      await server.close();
    }
  });
});
