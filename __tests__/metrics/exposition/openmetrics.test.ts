/**
 * OpenMetrics 1.0.0 output against prom-client's own OpenMetrics output, on OpenMetrics registries
 * built the same way. They agree byte for byte once prom-client's output is corrected for the
 * deliberate differences, each of which makes prom-client's output invalid OpenMetrics:
 * - `NaN`, not prom-client's `Nan` (the ABNF spells it `NaN`);
 * - a double quote in HELP is escaped (the ABNF's escaped-string has no bare `"`);
 * - an empty registry is `# EOF` alone (prom-client writes a blank line first, which is not allowed).
 * Plus what prom-client cannot write at all: `# UNIT` for a metric given a unit, and exemplars from
 * an {@link ExemplarSource}.
 */
import { Counter, Gauge, Histogram, Registry, type OpenMetricsContentType, type RegistryContentType } from 'prom-client';
import { renderExposition, renderExpositionText, type ExemplarSource } from '../../../lib/metrics/exposition';
import { parseExposition, family } from '../helpers/exposition-parser';
import { CORPUS, randomCase, type Build } from './corpus';

function openMetricsRegistry(build: Build): Registry<OpenMetricsContentType> {
  const registry = new Registry<OpenMetricsContentType>();
  registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  build(registry as Registry<RegistryContentType>);
  return registry;
}

/** Where a sample line's value starts: after the name and the label set (which may hold quoted spaces and braces). */
function valueStart(line: string): number {
  let i = line.search(/[{ ]/);
  if (line[i] === '{') {
    for (i += 1; line[i] !== '}'; i += 1) {
      if (line[i] === '"') for (i += 1; line[i] !== '"'; i += line[i] === '\\' ? 2 : 1);
    }
    i += 1;
  }
  return i;
}

/** prom-client's OpenMetrics output, corrected for the documented deliberate differences. */
function corrected(promClientText: string): string {
  if (promClientText === '\n# EOF\n') return '# EOF\n';
  return promClientText
    .split('\n')
    .map((line) => {
      if (line.startsWith('# HELP ')) {
        const nameEnd = line.indexOf(' ', '# HELP '.length);
        return `${line.slice(0, nameEnd)}${line.slice(nameEnd).replace(/"/g, '\\"')}`;
      }
      if (line === '' || line.startsWith('#')) return line;
      const start = valueStart(line);
      return `${line.slice(0, start)}${line
        .slice(start)
        .replace(/^ Nan\b/, ' NaN')
        .replace(/ # (\{.*\}) Nan /, ' # $1 NaN ')}`;
    })
    .join('\n');
}

async function expectAgreement(build: Build, label: string): Promise<void> {
  // Through UTF-8 both, as on the wire: a lone surrogate in a label value becomes U+FFFD alike.
  const expected = Buffer.from(corrected(await openMetricsRegistry(build).metrics()), 'utf8').toString('utf8');
  const actual = await renderExpositionText(openMetricsRegistry(build), 'openmetrics');
  expect({ label, text: actual }).toEqual({ label, text: expected });
}

/** prom-client stamps exemplars with Date.now(): frozen, so two registries built alike render alike. */
function frozenClock(build: Build): Build {
  return (registry) => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(1_764_000_000_123);
    try {
      build(registry);
    } finally {
      now.mockRestore();
    }
  };
}

const EXEMPLAR_CASES: ReadonlyArray<readonly [string, Build]> = [
  [
    "prom-client's own exemplars (counter and histogram)",
    frozenClock((registry) => {
      const counter = new Counter<string>({ name: 'ex_total', help: 'c', labelNames: ['a'], enableExemplars: true, registers: [registry] });
      counter.inc({ labels: { a: 'x' }, value: 2, exemplarLabels: { trace_id: 'abc"def' } });
      counter.inc({ labels: { a: 'y' } });
      const histogram = new Histogram<string>({
        name: 'ex_seconds',
        help: 'h',
        buckets: [0.1, 1],
        enableExemplars: true,
        registers: [registry],
      });
      histogram.observe({ value: 0.5, exemplarLabels: { trace_id: 't1' } });
      histogram.observe({ value: 5, exemplarLabels: { trace_id: 't2' } });
      histogram.observe({ value: 0.05 });
    }),
  ],
];

describe('OpenMetrics output agrees with prom-client, but for the documented differences', () => {
  it.each([...CORPUS.map((c) => [c.name, c.build] as const), ...EXEMPLAR_CASES])('%s', async (label, build) => {
    await expectAgreement(build, label);
  });

  it('on 300 seeded random registries', async () => {
    for (let seed = 1; seed <= 300; seed += 1) {
      const { name, build } = randomCase(seed);
      await expectAgreement(build, name);
    }
  });
});

describe('OpenMetrics structure', () => {
  it('names counter families without _total and their samples with it, and ends with # EOF', async () => {
    const registry = new Registry();
    new Counter({ name: 'jobs_total', help: 'Jobs', registers: [registry] }).inc(2);
    new Counter({ name: 'plain', help: 'No suffix', registers: [registry] }).inc();
    const text = await renderExpositionText(registry, 'openmetrics');
    expect(text).toBe(
      '# HELP jobs Jobs\n# TYPE jobs counter\njobs_total 2\n# HELP plain No suffix\n# TYPE plain counter\nplain_total 1\n# EOF\n',
    );
    expect(family(parseExposition(text), 'jobs').samples.map((s) => s.name)).toEqual(['jobs_total']);
    // The registry keeps its names: prom-client's own OpenMetrics rendering would have renamed them.
    expect(registry.getMetricsAsArray().map((m) => m.name)).toEqual(['jobs_total', 'plain']);
  });

  it('writes # UNIT for a unit given in the configuration, only where OpenMetrics allows it', async () => {
    const registry = new Registry();
    const withUnit = <T extends object>(config: T, unit: string) => ({ ...config, unit }) as T;
    new Gauge(withUnit({ name: 'temperature_celsius', help: 't', registers: [registry] }, 'celsius'));
    new Counter(withUnit({ name: 'cpu_seconds_total', help: 'c', registers: [registry] }, 'seconds'));
    new Gauge(withUnit({ name: 'size', help: 'not a suffix', registers: [registry] }, 'bytes'));
    new Gauge(withUnit({ name: 'bad_unit', help: 'invalid unit', registers: [registry] }, 'x y'));
    const text = await renderExpositionText(registry, 'openmetrics');
    expect(text.split('\n').filter((line) => line.startsWith('# UNIT'))).toEqual([
      '# UNIT temperature_celsius celsius',
      '# UNIT cpu_seconds seconds',
    ]);
    expect(await renderExpositionText(registry, 'text')).toBe(await registry.metrics());
  });

  it('writes exemplars from an ExemplarSource on counter and bucket samples, in OpenMetrics only', async () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'cycles_total', help: 'c', labelNames: ['result'], registers: [registry] });
    counter.inc({ result: 'ok' });
    counter.inc({ result: 'error' });
    const histogram = new Histogram({ name: 'cycle_seconds', help: 'h', buckets: [1], registers: [registry] });
    histogram.observe(0.5);
    const gauge = new Gauge({ name: 'workers', help: 'g', registers: [registry] });
    const asked: string[] = [];
    const source: ExemplarSource = {
      forMetric(metric) {
        if (metric === gauge) throw new Error('a gauge has no exemplars: not asked');
        if (metric === counter) {
          return (labels) => {
            asked.push(`counter ${String(labels.result)}`);
            return labels.result === 'ok'
              ? { labels: { correlation_id: 'c-1' }, value: 1, timestamp: 1764000000.5 }
              : { labels: { id: 'x'.repeat(127) }, value: 1 };
          };
        }
        return (_labels, bound) => (bound === Infinity ? { labels: { correlation_id: 'c-2' }, value: 0.5 } : undefined);
      },
    };
    const read = async (format: 'text' | 'openmetrics') => {
      const { body } = await renderExposition(registry, { format, compress: false, exemplars: source });
      return Buffer.concat(body.chunks).toString('utf8');
    };
    const om = await read('openmetrics');
    expect(om).toContain('cycles_total{result="ok"} 1 # {correlation_id="c-1"} 1 1764000000.5\n');
    // 2 + 127 characters: over the 128-character limit, so left out rather than invalid.
    expect(om).toContain('cycles_total{result="error"} 1\n');
    expect(om).toContain('cycle_seconds_bucket{le="1"} 1\n');
    expect(om).toContain('cycle_seconds_bucket{le="+Inf"} 1 # {correlation_id="c-2"} 0.5\n');
    expect(asked).toEqual(['counter ok', 'counter error']);
    expect(await read('text')).toBe(await registry.metrics());
  });
});
