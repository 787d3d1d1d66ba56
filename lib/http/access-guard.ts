import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { arrayOption, stringOption } from '../options';
import * as option from '../options/spec';
import { optionSpec } from '../options/spec';
import { MAX_TOKEN_LENGTH, readBearerToken, TOKEN_CHARACTERS } from './bearer';
import { sendError } from './errors';
import { isPathPattern, PATH_PATTERN_RULE, PROBE_PATHS, unguardedBy } from './unguarded';

/**
 * The options of {@link createAccessGuard}: a guard by client address and static bearer token. The
 * endpoints require no authentication by default (restrict access by network policy or debug
 * port 0); this is defence in depth for clusters without network policy.
 */
export interface AccessGuardOptions {
  /**
   * Client addresses or CIDR blocks allowed to reach `/debug/*`, e.g. `['127.0.0.1', '10.0.0.0/8',
   * '::1']`. IPv4 clients seen as IPv4-mapped IPv6 (`::ffff:10.1.2.3`) match their IPv4 blocks.
   */
  allow?: readonly string[];
  /** A bearer token required in `Authorization: Bearer <token>`; at least 16 characters. */
  token?: string;
  /**
   * Paths let through with neither check: absolute paths, a trailing `*` matching any rest.
   * Default the probes (`/healthz`, `/livez`, `/readyz` and below, {@link ACCESS_GUARD_DEFAULTS}), for the kubelet.
   */
  alwaysAllow?: readonly string[];
}

const MIN_TOKEN_LENGTH = 16;

function compileAllowList(where: string, entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefixText, extra] = entry.trim().split('/');
    const family = isIP(address ?? '');
    if (family === 0 || extra !== undefined) {
      throw new TypeError(
        `${where}: allow: ${JSON.stringify(entry)} is not an IP address or CIDR block (examples: "127.0.0.1", "10.0.0.0/8", "fd00::/8")`,
      );
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefixText === undefined) {
      list.addAddress(address!, type);
      continue;
    }
    const prefix = Number(prefixText);
    if (!/^\d+$/.test(prefixText) || prefix > (family === 4 ? 32 : 128)) {
      throw new TypeError(`${where}: allow: ${JSON.stringify(entry)} has an invalid prefix length (0-${family === 4 ? 32 : 128})`);
    }
    list.addSubnet(address!, prefix, type);
  }
  return list;
}

function clientAllowed(list: BlockList, remote: string | undefined): boolean {
  if (!remote) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(remote);
  if (mapped) return list.check(mapped[1]!, 'ipv4') || list.check(remote, 'ipv6');
  return list.check(remote, isIP(remote) === 6 ? 'ipv6' : 'ipv4');
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function isString(entry: unknown): entry is string {
  return typeof entry === 'string';
}

const WHERE = 'createAccessGuard';

/** The options of {@link createAccessGuard}, declared once. */
const ACCESS_GUARD_SPEC = optionSpec(WHERE, {
  /** No address check. An empty list is not the same: it lets no client in. */
  allow: option.custom(undefined, ({ where, path, value }) => {
    const given = arrayOption(where, path, value, undefined, isString, 'IP addresses or CIDR blocks such as "10.0.0.0/8"');
    return given === undefined ? undefined : { entries: given, list: compileAllowList(where, given) };
  }),
  /** No token check. */
  token: option.custom(undefined, ({ where, path, value }) => {
    const token = stringOption(
      where,
      path,
      value,
      undefined,
      MIN_TOKEN_LENGTH,
      'use a random token, e.g. `openssl rand -hex 32`',
      MAX_TOKEN_LENGTH,
    );
    if (token !== undefined && !TOKEN_CHARACTERS.test(token)) {
      throw new TypeError(`${where}: ${path} must be visible ASCII characters only (no spaces), as a bearer token is sent`);
    }
    return token;
  }),
  /** The probes: `/healthz`, `/livez`, `/readyz` and what is below them. */
  alwaysAllow: option.array(PROBE_PATHS, isPathPattern, PATH_PATTERN_RULE),
});

/** What the options of {@link createAccessGuard} resolve to when omitted. Frozen. */
export const ACCESS_GUARD_DEFAULTS = ACCESS_GUARD_SPEC.defaults;

/**
 * Builds the guard middleware, or `undefined` when neither `allow` nor `token` is set (so that
 * `createAccessGuard({ token: process.env.DEBUG_TOKEN })` guards nothing when the variable is
 * unset: check it yourself if it must be set). Options are checked here, once, so a typo fails at
 * start-up rather than opening or closing the surface by surprise.
 *
 * Mount it in front of the routers it guards, where they are mounted:
 * `app.use(createAccessGuard({ allow, token }), createIntrospectionRouter(state))`. It lets through,
 * with neither check, the paths of `alwaysAllow` (the probes, for the kubelet), matched in every
 * spelling the routers serve; and without the token (the address is still checked), a GET of the
 * console's page, which holds no data. The same rule is `createKubeAuth`'s.
 *
 * Refusals carry no detail: `403 {"error":"forbidden"}` for an address outside the allow-list,
 * `401 {"error":"unauthorized"}` for a missing or wrong token.
 */
export function createAccessGuard(options?: AccessGuardOptions, ...rest: never[]): RequestHandler | undefined {
  if (rest.length > 0) {
    throw new TypeError(
      `${WHERE}: takes one argument, its options; the second (which requests need no token) is gone: ` +
        "the console's page is let through by the guards' rule, and other paths by the option alwaysAllow",
    );
  }
  const resolved = ACCESS_GUARD_SPEC.resolve(options ?? {});
  const allow = resolved.allow?.list;
  const expected = resolved.token === undefined ? undefined : digest(resolved.token);
  if (!allow && !expected) return undefined;
  const { alwaysAllow } = resolved;

  return function guardAccess(req: Request, res: Response, next: NextFunction): void {
    const exempt = unguardedBy(req.method, req.originalUrl ?? req.url, alwaysAllow, req.path);
    if (exempt === 'probe') {
      next();
      return;
    }
    if (allow && !clientAllowed(allow, req.socket.remoteAddress)) {
      sendError(res, 403, 'forbidden');
      return;
    }
    if (expected && exempt !== 'page') {
      const bearer = readBearerToken(req.headers.authorization);
      // Comparing fixed-length digests keeps the comparison constant-time whatever the input length.
      if (!('token' in bearer) || !timingSafeEqual(digest(bearer.token), expected)) {
        sendError(res, 401, 'unauthorized', { 'WWW-Authenticate': 'Bearer realm="debug"' });
        return;
      }
    }
    next();
  };
}
