/**
 * Whatever the host puts into a metric, the answer stays valid: label values of any type (an
 * `Error` whose message holds a quote and a newline, a symbol, an object whose conversion throws,
 * a getter that throws), names outside the legacy character set (a custom metric's, a default
 * label's, a label added to a label set after `set()`), HELP and TYPE that are not strings, sample
 * values of odd types. Both formats are checked line by line against their grammar (and the text
 * format by promtool when it is installed); where prom-client's own text is valid, ours is
 * byte-identical to it.
 */
import express from 'express';
import { Counter, Gauge, Histogram, Registry, Summary, type RegistryContentType } from 'prom-client';
import { createMetricsRouter } from '../../../lib/metrics';
import { renderExposition, renderExpositionText } from '../../../lib/metrics/exposition';
import { UNPRINTABLE } from '../../../lib/metrics/exposition/dialect';
import { listen, request } from '../../helpers/http';
import { describeWithPeer } from '../../helpers/peers';
import { findBinary, promtoolCheckMetrics } from '../../peer/prometheus-harness';
import { parseExposition, sampleValue } from '../helpers/exposition-parser';
import { grammarProblems } from '../helpers/strict-exposition';

const FORMATS = ['text', 'openmetrics'] as const;

/** Every character a label value must escape, and a few that need none. */
const AWKWARD = 'say "hi",\nthen \\ and \\n and \r and {}=#';

/** An object whose every conversion throws. */
const unconvertible = (): object => ({
  toString(): string {
    throw new Error('no text');
  },
  valueOf(): number {
    throw new Error('no number');
  },
});

/** Converts once (prom-client hashes the label set at set()), then throws on every later conversion. */
function convertsOnce(text: string): object {
  let calls = 0;
  return {
    toString(): string {
      calls += 1;
      if (calls > 1) throw new Error('changed its mind');
      return text;
    },
  };
}

function hostileRegistry(): Registry {
  const registry = new Registry();
  const gauge = new Gauge({ name: 'host_errors', help: 'Errors by reason', labelNames: ['reason', 'kind'], registers: [registry] });
  gauge.set({ reason: new Error(AWKWARD) as unknown as string, kind: 'error' }, 1);
  gauge.set({ reason: 42 as unknown as string, kind: 'number' }, 2);
  gauge.set({ reason: true as unknown as string, kind: 'boolean' }, 3);
  gauge.set({ reason: null as unknown as string, kind: 'null' }, 4);
  gauge.set({ reason: 10n as unknown as string, kind: 'bigint' }, 5);
  gauge.set({ reason: { toString: () => AWKWARD } as unknown as string, kind: 'object' }, 6);
  gauge.set({ reason: convertsOnce('once') as unknown as string, kind: 'stateful' }, 7);
  // The host keeps its label set and changes it after set(): prom-client stores it as it is.
  const mutated: Record<string, unknown> = { reason: 'fine', kind: 'mutated' };
  gauge.set(mutated as Record<string, string>, 8);
  mutated['reason'] = Symbol(AWKWARD);
  mutated['bad name"\n'] = unconvertible();
  Object.defineProperty(mutated, 'kind', {
    enumerable: true,
    get(): string {
      throw new Error('getter');
    },
  });

  const counter = new Counter({
    name: 'host_failures_total',
    help: { toString: () => `HELP with ${AWKWARD}` } as unknown as string,
    labelNames: ['cause'],
    registers: [registry],
  });
  counter.inc({ cause: new TypeError(AWKWARD) as unknown as string });
  new Histogram({ name: 'host_latency_seconds', help: 'h', labelNames: ['route'], buckets: [1], registers: [registry] }).observe(
    { route: new Error('/a "b"\n') as unknown as string },
    0.5,
  );
  new Summary({ name: 'host_size_bytes', help: 's', labelNames: ['kind'], percentiles: [0.5], registers: [registry] }).observe(
    { kind: new Error('"\n') as unknown as string },
    3,
  );

  // A custom metric read through its public get(): names, HELP, TYPE and values are all the host's.
  registry.registerMetric({
    name: 'custom metric"\n',
    help: unconvertible(),
    type: 'not\na type',
    get: async () => ({
      name: 'custom metric"\n',
      help: unconvertible(),
      type: 'not\na type',
      aggregator: 'sum',
      values: [
        { value: Symbol('v'), labels: { 'label with space': new Error(AWKWARD), '0digit': 1 } },
        { value: unconvertible(), labels: { ok: unconvertible() }, metricName: 'custom metric"\n_sum' },
        { value: '5', labels: { kind: 'string value' } },
        { value: -3n, labels: { kind: 'bigint value' } },
        { value: { valueOf: () => -1 }, labels: { kind: 'object value' } },
      ],
    }),
  } as unknown as Parameters<Registry['registerMetric']>[0]);

  registry.setDefaultLabels({ 'default-name': new Error(AWKWARD), pod: Symbol('p"\n') } as unknown as Record<string, string>);
  return registry;
}

describe('host values of any type', () => {
  it.each(FORMATS)('%s: every line of the answer is valid, and nothing the host gave is lost or crashes the scrape', async (format) => {
    const body = await renderExpositionText(hostileRegistry(), format);
    expect(grammarProblems(body, format)).toEqual([]);
    // The test parser reads the values back as the host's texts.
    const exposition = parseExposition(body);
    const errors = exposition.families.get('host_errors')!.samples;
    expect(errors.find((s) => s.labels['kind'] === 'error')!.labels['reason']).toBe(String(new Error(AWKWARD)));
    expect(errors.find((s) => s.labels['kind'] === 'object')!.labels['reason']).toBe(AWKWARD);
    expect(errors.find((s) => s.labels['kind'] === 'bigint')!.labels['reason']).toBe('10');
    expect(errors.find((s) => s.labels['kind'] === 'stateful')!.labels['reason']).toBe(UNPRINTABLE);
    // The mutated set: a symbol written as String() does, a throwing getter and conversion as unprintable, a bad name rewritten.
    const mutated = errors.find((s) => s.labels['bad_name__'] !== undefined)!;
    expect(mutated.labels).toMatchObject({ reason: `Symbol(${AWKWARD})`, kind: UNPRINTABLE, bad_name__: UNPRINTABLE });
    expect(body).toContain('custom_metric__');
    expect(body).toContain('custom_metric___sum{');
    expect(body).toContain('label_with_space="Error: say \\"hi\\",\\nthen');
    expect(body).toContain('_digit="1"');
    expect(body).toContain('default_name="Error: say \\"hi\\"');
  });

  it.each(FORMATS)(
    '%s: sample values that are not numbers are written as prom-client writes them, or NaN when that throws',
    async (format) => {
      const body = await renderExpositionText(hostileRegistry(), format);
      const exposition = parseExposition(body);
      const value = (kind: string) =>
        sampleValue(exposition, 'custom_metric__', { kind, default_name: String(new Error(AWKWARD)), pod: 'Symbol(p"\n)' });
      expect(value('string value')).toBe(Infinity);
      expect(value('bigint value')).toBe(-Infinity);
      expect(value('object value')).toBe(-Infinity);
      const unreadable = exposition.families
        .get('custom_metric__')!
        .samples.filter((s) => s.name !== 'custom_metric__' || s.labels['label_with_space']);
      expect(unreadable.map((s) => s.value)).toEqual([NaN, NaN]);
    },
  );

  it('HELP and TYPE that are not strings are converted; a type the format has no word for is its untyped', async () => {
    const text = await renderExpositionText(hostileRegistry(), 'text');
    expect(text).toContain(`# HELP host_failures_total HELP with say "hi",\\nthen \\\\ and \\\\n and \r and {}=#\n`);
    expect(text).toContain(`# HELP custom_metric__ ${UNPRINTABLE}\n# TYPE custom_metric__ untyped\n`);
    const om = await renderExpositionText(hostileRegistry(), 'openmetrics');
    expect(om).toContain(`# HELP host_failures HELP with say \\"hi\\",\\nthen \\\\ and \\\\n and \r and {}=#\n`);
    expect(om).toContain(`# TYPE custom_metric__ unknown\n`);
  });

  it('stays byte-identical to prom-client wherever prom-client writes valid text: errors without quotes or newlines, numbers, booleans', async () => {
    const build = (registry: Registry<RegistryContentType>): void => {
      const gauge = new Gauge({ name: 'plain_errors', help: 'e', labelNames: ['reason'], registers: [registry] });
      gauge.set({ reason: new Error('connection refused') as unknown as string }, 1);
      gauge.set({ reason: new RangeError('out of range: 7') as unknown as string }, 2);
      gauge.set({ reason: 0.1 as unknown as string }, 3);
      gauge.set({ reason: false as unknown as string }, 4);
      gauge.set({ reason: undefined as unknown as string }, 5);
      gauge.set({ reason: 12n as unknown as string }, 6);
    };
    const ours = new Registry();
    const theirs = new Registry();
    build(ours);
    build(theirs);
    const body = await renderExpositionText(ours, 'text');
    expect(body).toBe(await theirs.metrics());
    expect(grammarProblems(body, 'text')).toEqual([]);
  });

  it("prom-client's own text for the same registry is what the check refuses (the check can fail)", async () => {
    const registry = new Registry();
    new Gauge({ name: 'host_errors', help: 'e', labelNames: ['reason'], registers: [registry] }).set(
      { reason: new Error(AWKWARD) as unknown as string },
      1,
    );
    expect(grammarProblems(await registry.metrics(), 'text')).not.toEqual([]);
    expect(grammarProblems(await renderExpositionText(registry, 'text'), 'text')).toEqual([]);
  });
});

describe('names outside the legacy character set, over the router', () => {
  it('are written with underscores, and the Content-Type says underscores even when the scraper allowed UTF-8', async () => {
    const app = express();
    app.use(createMetricsRouter(hostileRegistry()));
    const server = await listen(app);
    try {
      const accept = 'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,text/plain;version=0.0.4;q=0.3';
      const res = await request(`${server.origin}/metrics`, { headers: { Accept: accept } });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=underscores');
      expect(grammarProblems(res.text, 'openmetrics')).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('leave the escaping the scraper asked for when every name was valid', async () => {
    const registry = new Registry();
    new Gauge({ name: 'valid_names', help: 'v', labelNames: ['reason'], registers: [registry] }).set(
      { reason: new Error('"\n') as unknown as string },
      1,
    );
    const { contentType, escaping } = await renderExposition(registry, { format: 'openmetrics', escaping: 'allow-utf-8', compress: false });
    expect({ contentType, escaping }).toEqual({
      contentType: 'application/openmetrics-text; version=1.0.0; charset=utf-8; escaping=allow-utf-8',
      escaping: 'allow-utf-8',
    });
  });
});

const promtool = findBinary('promtool');

describeWithPeer(promtool === undefined ? 'promtool not on PATH: apt-get install -y --no-install-recommends prometheus' : undefined)(
  'promtool check metrics',
  () => {
    it('parses the text answer of the hostile registry (lint findings only, no parse error)', async () => {
      const result = await promtoolCheckMetrics(promtool!, await renderExpositionText(hostileRegistry(), 'text'));
      // Exit code 1 is a parse error; 3 is lint findings (names, missing units), which are the host's names.
      expect({ exitCode: result.exitCode, lines: result.lines }).toEqual({ exitCode: result.exitCode === 0 ? 0 : 3, lines: result.lines });
      expect(result.lines.join('\n')).not.toMatch(/error while linting|text format parsing error/i);
    });
  },
);
