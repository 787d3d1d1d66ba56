/**
 * What a guard lets through without a credential: one rule for both guards, `createAccessGuard`
 * and `createKubeAuth`. Pure: nothing here knows of Express.
 *
 * - The **probes** (`alwaysAllow`, by default `/healthz`, `/livez`, `/readyz` and what is below
 *   them): the kubelet sends no token and comes from the node's address.
 * - The **console's page** (`GET /debug/`, `/debug/console/<file>`): static files that hold no data;
 *   a browser loads them before the page can ask for a token and send it on every data request.
 *
 * A path is matched in every spelling the routers may serve it as (`reviewedPath`): a target that is
 * not canonical, or one with a percent-escape, is never exempt, so it is guarded.
 */
import { reviewedPath } from './request-path';

/** The paths of the probes, which every guard lets through unless told otherwise. */
export const PROBE_PATHS: readonly string[] = Object.freeze(['/healthz', '/healthz/*', '/livez', '/livez/*', '/readyz', '/readyz/*']);

/** What an `alwaysAllow` entry must be: a path starting with `/`, with at most a trailing `*`. */
export const PATH_PATTERN_RULE = 'paths starting with "/", optionally ending in "*"';

/** Whether `entry` is a path pattern: an absolute path, optionally ending in `*` (a prefix). */
export function isPathPattern(entry: unknown): entry is string {
  return typeof entry === 'string' && entry.startsWith('/') && !entry.slice(0, -1).includes('*');
}

/** Whether every spelling matches one of `patterns` (a trailing `*` matches any rest). */
export function matchesEvery(patterns: readonly string[], spellings: readonly string[]): boolean {
  return spellings.every((path) => patterns.some((p) => (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : path === p)));
}

/**
 * The paths the console answers, relative to where the introspection router is mounted: all of
 * `/debug/console/`, in any case, as Express matches the routes beside it; the file's name is
 * group 1.
 */
export const CONSOLE_PAGE_PATH = /^\/debug(?:\/|\/console\/(.*))?$/is;

/** True for the console's own paths (relative to the introspection router): the page, its redirect and its files. */
export function isConsolePagePath(path: string): boolean {
  return CONSOLE_PAGE_PATH.test(path);
}

/** The path of a request target (`originalUrl`), without its query. */
export function pathOfTarget(target: string): string {
  const queryAt = target.indexOf('?');
  return queryAt < 0 ? target : target.slice(0, queryAt);
}

/**
 * Why a request passes a guard without a credential: `probe` (it matches `alwaysAllow` in every
 * spelling), `page` (a GET or HEAD of the console's page, whose path `pagePath` gives relative to
 * the router), or `undefined`: it is guarded.
 */
export function unguardedBy(
  method: string,
  target: string,
  alwaysAllow: readonly string[],
  pagePath: string | undefined,
): 'probe' | 'page' | undefined {
  const raw = pathOfTarget(target);
  if (raw.includes('%')) return undefined;
  const reviewed = reviewedPath(target);
  if ('refused' in reviewed) return undefined;
  if (matchesEvery(alwaysAllow, reviewed.spellings)) return 'probe';
  if ((method === 'GET' || method === 'HEAD') && pagePath !== undefined && isConsolePagePath(pagePath)) return 'page';
  return undefined;
}
