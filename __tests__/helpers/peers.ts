/**
 * Real peers (Prometheus, go tool pprof, Chromium) are installed by `.ci/run`. On a developer
 * machine without one, its tests skip with a warning; in CI a missing peer is a failure.
 */

import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The environment of a `go tool pprof` run with its own `home` (profiles it saves land there), but
 * the machine's build cache: since Go 1.25 `go tool pprof` is built on first use, and a fresh cache
 * rebuilds it in every test (over a minute on a loaded 2-core machine). `.ci/run` builds it once.
 */
export function goToolEnv(go: string, home: string): NodeJS.ProcessEnv {
  let cache: string;
  try {
    cache = execFileSync(go, ['env', 'GOCACHE'], { encoding: 'utf8' }).trim();
  } catch {
    cache = join(home, 'cache');
  }
  return { PATH: process.env.PATH, HOME: home, GOCACHE: cache, PPROF_TMPDIR: join(home, 'pprof'), GOTOOLCHAIN: 'local', GOPROXY: 'off' };
}

/** The `go` command the peer tests run `go tool pprof` with (`GO_BIN`, else `go` on the PATH). */
export const GO = process.env.GO_BIN ?? 'go';

/** Whether {@link GO} runs (`go version`). */
export async function goAvailable(): Promise<boolean> {
  try {
    await promisify(execFile)(GO, ['version']);
    return true;
  } catch {
    return false;
  }
}

/** A fresh home for `go tool pprof` ({@link goToolEnv}'s `home`), with the `pprof` folder it saves profiles in. */
export function goPprofHome(prefix: string): string {
  const home = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(home, 'pprof'));
  return home;
}

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
