/**
 * The text format is prom-client's, byte for byte: every corpus registry and a few hundred seeded
 * random ones are rendered by prom-client's `registry.metrics()` and by our renderer (each on a
 * registry of its own, built the same way) and must give the same bytes. A failure names the case
 * or seed; replay it with `randomCase(seed)`.
 */
import { Gauge, Registry, type OpenMetricsContentType } from 'prom-client';
import { renderExposition, renderExpositionText } from '../../../lib/metrics/exposition';
import { CORPUS, randomCase, type Build } from './corpus';

async function ours(build: Build): Promise<Buffer> {
  const registry = new Registry();
  build(registry);
  const { body } = await renderExposition(registry, { format: 'text', compress: false });
  return Buffer.concat(body.chunks);
}

async function promClient(build: Build): Promise<Buffer> {
  const registry = new Registry();
  build(registry);
  return Buffer.from(await registry.metrics(), 'utf8');
}

/** Compares as text for a readable diff, and as bytes (lone surrogates become U+FFFD alike on the wire). */
async function expectIdentical(build: Build, label: string): Promise<void> {
  const [expected, actual] = await Promise.all([promClient(build), ours(build)]);
  expect({ label, text: actual.toString('utf8') }).toEqual({ label, text: expected.toString('utf8') });
  expect(actual.equals(expected)).toBe(true);
}

describe('text format 0.0.4 is byte-identical to prom-client', () => {
  it.each(CORPUS.map((c) => [c.name, c.build] as const))('%s', async (label, build) => {
    await expectIdentical(build, label);
  });

  it('on 300 seeded random registries', async () => {
    for (let seed = 1; seed <= 300; seed += 1) {
      const { name, build } = randomCase(seed);
      await expectIdentical(build, name);
    }
  });

  it('reads a registry created for OpenMetrics as text too, without touching it', async () => {
    const build: Build = (registry) => {
      new Gauge({ name: 'om_gauge', help: 'g', labelNames: ['a'], registers: [registry] }).set({ a: 'x' }, 1);
    };
    const om = new Registry<OpenMetricsContentType>();
    om.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    build(om);
    const text = await renderExpositionText(om, 'text');
    expect(text).toBe((await promClient(build)).toString('utf8'));
    expect(om.contentType).toBe(Registry.OPENMETRICS_CONTENT_TYPE);
  });
});

describe('failing and hanging collect() callbacks', () => {
  /** `before`, optionally the failing gauge, and `after`: the rest of the registry around it. */
  const around = (collect?: () => void | Promise<void>): Build => {
    return (registry) => {
      new Gauge({ name: 'before', help: 'b', registers: [registry] }).set(1);
      if (collect !== undefined) new Gauge({ name: 'failing', help: 'f', registers: [registry], collect });
      new Gauge({ name: 'after', help: 'a', labelNames: ['x'], registers: [registry] }).set({ x: 'y' }, 2);
    };
  };

  it.each([
    [
      'throws',
      () => {
        throw new Error('collect threw');
      },
    ],
    ['rejects', () => Promise.reject(new Error('collect rejected'))],
  ])(
    "a collect() that %s costs its family only: the rest is prom-client's bytes, the failure is answered beside",
    async (label, collect) => {
      const registry = new Registry();
      around(collect)(registry);
      const { body, failures } = await renderExposition(registry, { format: 'text', compress: false });
      expect(Buffer.concat(body.chunks).toString('utf8')).toBe((await promClient(around())).toString('utf8'));
      expect(failures).toEqual([{ family: 'failing', error: new Error(`collect ${label === 'throws' ? 'threw' : 'rejected'}`) }]);
    },
  );

  it('a collect() that never settles leaves the rendering pending, for the router to time out', async () => {
    const build = around(() => new Promise<void>(() => undefined));
    const pending = Symbol('pending');
    const within = <T>(promise: Promise<T>) =>
      Promise.race([promise, new Promise<symbol>((resolve) => setTimeout(() => resolve(pending), 50))]);
    expect(await within(promClient(build))).toBe(pending);
    expect(await within(ours(build))).toBe(pending);
  });

  it('calls every collect() even when an earlier one throws, as prom-client does, and lists each failure in registry order', async () => {
    const called: string[] = [];
    const registry = new Registry();
    for (const name of ['first', 'second', 'third']) {
      new Gauge({
        name,
        help: name,
        registers: [registry],
        async collect() {
          called.push(name);
          if (name !== 'second') {
            // `third` fails before `first` does: the list is in registry order all the same.
            await new Promise((resolve) => setTimeout(resolve, name === 'first' ? 20 : 1));
            throw new Error(`${name} failed`);
          }
        },
      });
    }
    const { failures, body } = await renderExposition(registry, { format: 'openmetrics', compress: false });
    expect(called).toEqual(['first', 'second', 'third']);
    expect(failures.map((f) => f.family)).toEqual(['first', 'third']);
    expect(Buffer.concat(body.chunks).toString('utf8')).toBe('# HELP second second\n# TYPE second gauge\nsecond 0\n# EOF\n');
  });
});
