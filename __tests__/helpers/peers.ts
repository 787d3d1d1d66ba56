/**
 * Real peers (Prometheus, go tool pprof, Chromium) are installed by `.ci/run`. On a developer
 * machine without one, its tests skip with a warning; in CI a missing peer is a failure.
 */

/** CI systems set `CI=true` (or `1`); an explicit `false`/`0` means a developer machine. */
export const inCI = !['', '0', 'false'].includes((process.env.CI ?? '').toLowerCase());

/**
 * `describe` when the peer is there (or in CI, where its absence must fail the tests), else
 * `describe.skip` after saying what to install.
 */
export function describeWithPeer(missing: string | undefined): jest.Describe {
  if (missing === undefined || inCI) return describe;
  console.warn(`skipping: ${missing} (set CI to make this a failure)`);
  return describe.skip;
}
