import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { arrayOption, checkOptionObject, stringOption } from '../options';
import { MAX_TOKEN_LENGTH, readBearerToken, TOKEN_CHARACTERS } from './bearer';
import { sendError } from './errors';

/**
 * An optional guard for the debug surface. The endpoints require no authentication by default (restrict access by
 * network policy or debug port 0); this is defence in depth for clusters without network policy.
 */
export interface AccessGuardOptions {
  /**
   * Client addresses or CIDR blocks allowed to reach `/debug/*`, e.g. `['127.0.0.1', '10.0.0.0/8',
   * '::1']`. IPv4 clients seen as IPv4-mapped IPv6 (`::ffff:10.1.2.3`) match their IPv4 blocks.
   */
  allow?: readonly string[];
  /** A bearer token required in `Authorization: Bearer <token>`; at least 16 characters. */
  token?: string;
}

const MIN_TOKEN_LENGTH = 16;

function compileAllowList(where: string, entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefixText, extra] = entry.trim().split('/');
    const family = isIP(address ?? '');
    if (family === 0 || extra !== undefined) {
      throw new TypeError(
        `${where}: access.allow: ${JSON.stringify(entry)} is not an IP address or CIDR block (examples: "127.0.0.1", "10.0.0.0/8", "fd00::/8")`,
      );
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefixText === undefined) {
      list.addAddress(address!, type);
      continue;
    }
    const prefix = Number(prefixText);
    if (!/^\d+$/.test(prefixText) || prefix > (family === 4 ? 32 : 128)) {
      throw new TypeError(`${where}: access.allow: ${JSON.stringify(entry)} has an invalid prefix length (0-${family === 4 ? 32 : 128})`);
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

/**
 * Builds the guard middleware, or `undefined` when no option is set. Options are checked here,
 * once, so a typo fails at start-up rather than opening or closing the surface by surprise.
 * Refusals carry no detail: `403 {"error":"forbidden"}` for an address outside the allow-list,
 * `401 {"error":"unauthorized"}` for a missing or wrong token. Requests for which `tokenNotNeeded`
 * is true skip the token (not the address check): the debug console's static page, which a browser
 * must load before the page can ask for the token and send it as a header on every data request.
 */
export function createAccessGuard(
  options: AccessGuardOptions | undefined,
  tokenNotNeeded: (req: Request) => boolean = () => false,
): RequestHandler | undefined {
  return accessGuardFor('createAccessGuard', options, tokenNotNeeded);
}

function isString(entry: unknown): entry is string {
  return typeof entry === 'string';
}

/**
 * {@link createAccessGuard} for a factory that takes the guard's options as its `access` option:
 * messages name that factory (`where`).
 */
export function accessGuardFor(
  where: string,
  options: AccessGuardOptions | undefined,
  tokenNotNeeded: (req: Request) => boolean,
): RequestHandler | undefined {
  if (options === undefined) return undefined;
  const given = checkOptionObject(where, 'access', options, ['allow', 'token']);
  // An empty list is not the same as none: it lets no client in.
  const allowed = arrayOption(
    where,
    'access.allow',
    given['allow'],
    undefined,
    isString,
    'IP addresses or CIDR blocks such as "10.0.0.0/8"',
  );
  const allow = allowed === undefined ? undefined : compileAllowList(where, allowed);
  const token = stringOption(
    where,
    'access.token',
    given['token'],
    undefined,
    MIN_TOKEN_LENGTH,
    'use a random token, e.g. `openssl rand -hex 32`',
    MAX_TOKEN_LENGTH,
  );
  if (token !== undefined && !TOKEN_CHARACTERS.test(token)) {
    throw new TypeError(`${where}: access.token must be visible ASCII characters only (no spaces), as a bearer token is sent`);
  }
  const expected = token === undefined ? undefined : digest(token);
  if (!allow && !expected) return undefined;

  return function guardDebugAccess(req: Request, res: Response, next: NextFunction): void {
    if (allow && !clientAllowed(allow, req.socket.remoteAddress)) {
      sendError(res, 403, 'forbidden');
      return;
    }
    if (expected && !tokenNotNeeded(req)) {
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
