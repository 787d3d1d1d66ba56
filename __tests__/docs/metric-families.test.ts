/**
 * docs/metrics.md lists the metric families a registry gets (tables marked
 * `<!-- metric-families: <case> -->`); this test registers them as the guide says and compares the
 * names, so that a family added or removed in lib/ fails here until the guide says so.
 */
import { Registry } from 'prom-client';
import { createIntrospectionState } from '../../lib';
import { createControllerMetrics } from '../../lib/metrics';
import { tableAfter } from '../helpers/markdown';

const GUIDE = 'docs/metrics.md';

/** The metric names of the first column of the table below `<!-- metric-families: <name> -->`. */
function documentedFamilies(name: string): string[] {
  return tableAfter(GUIDE, `<!-- metric-families: ${name} -->`)
    .flatMap(([names]) => [...names!.matchAll(/`(ctl_[a-z_]+)(?:\{[^}]*\})?`/g)].map((m) => m[1]!))
    .sort();
}

function registered(options: { healthMetrics?: boolean }): string[] {
  const registry = new Registry();
  createControllerMetrics(registry, createIntrospectionState(), options);
  return registry
    .getMetricsAsArray()
    .map((metric) => metric.name)
    .sort();
}

describe(`${GUIDE}: the metric families`, () => {
  it('lists every family a registry gets with the default options and a state', () => {
    expect(documentedFamilies('default')).toEqual(registered({}));
  });

  it('lists the families healthMetrics adds', () => {
    const added = registered({ healthMetrics: true }).filter((name) => !registered({}).includes(name));
    expect(documentedFamilies('healthMetrics')).toEqual(added);
  });
});
