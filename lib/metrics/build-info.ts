/**
 * `<prefix>build_info`: one series, always 1, whose labels say what runs, as Go programs expose
 * theirs. Dashboards join on it (`* on (instance) group_left (version) ctl_build_info`) to show
 * which version each replica runs, and a rollout shows as the version label changing.
 */
import { clientFor } from './client';
import type { GaugeLike as Gauge, MetricsRegistry } from './shapes';

/** The family name after the prefix. */
export const BUILD_INFO_SUFFIX = 'build_info';

/** The labels of the series, after validation. */
export interface BuildInfoLabels {
  /** The host's version. */
  readonly version: string;
  /** The host's source revision (a commit). */
  readonly revision: string;
}

let ownVersion: string | undefined;

/** This package's version, read once from its package.json (beside dist/ and lib/ alike). */
export function packageVersion(): string {
  if (ownVersion === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the package's own manifest, outside the compiled tree
      const { version } = require('../../package.json') as { version?: unknown };
      ownVersion = typeof version === 'string' ? version : 'unknown';
    } catch {
      ownVersion = 'unknown';
    }
  }
  return ownVersion;
}

/**
 * Registers `<prefix>build_info{version, revision, node_version, package_version} 1`: the host's
 * version and revision as given, the Node.js version running it, and this package's version.
 */
export function createBuildInfoGauge(registry: MetricsRegistry, prefix: string, labels: BuildInfoLabels): readonly [string, Gauge] {
  const name = prefix + BUILD_INFO_SUFFIX;
  const gauge = new (clientFor(registry, 'createControllerMetrics').Gauge)({
    name,
    help: 'Always 1; the labels say which build runs: version and revision of the controller, Node.js version, controller-introspection version',
    labelNames: ['version', 'revision', 'node_version', 'package_version'],
    registers: [registry],
  });
  gauge.set({ version: labels.version, revision: labels.revision, node_version: process.version, package_version: packageVersion() }, 1);
  return [name, gauge];
}
