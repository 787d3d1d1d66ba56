import { isIP } from 'node:net';
import os from 'node:os';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { sendError } from './errors';

/**
 * Host names a DNS-rebinding page cannot use: it needs a name that public DNS resolves for the
 * victim's browser, and these are either IP literals (no name to rebind), loopback names, names
 * without a dot (the pod's hostname, a service's short name), or cluster-internal suffixes that
 * public DNS never answers.
 */
const SAFE_SUFFIXES = ['.localhost', '.svc', '.cluster.local', '.internal'];

/** The host name of a `Host` header: lower case, without port, brackets or a trailing dot. */
function hostName(header: string): string {
  let host = header.trim().toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end < 0 ? host : host.slice(1, end);
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && host.indexOf(':') === colon) host = host.slice(0, colon);
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

function safeByDefault(host: string, ownName: string): boolean {
  if (isIP(host) !== 0) return true;
  if (host === 'localhost' || host === ownName || !host.includes('.')) return true;
  return SAFE_SUFFIXES.some((suffix) => host.endsWith(suffix));
}

/**
 * Refuses `/debug/*` requests whose `Host` header names a host that is not allowed, so that a web
 * page on an attacker's domain, rebound to 127.0.0.1 (a developer's `kubectl port-forward`), cannot
 * read the debug surface from the developer's browser. Allowed by default: IP literals, `localhost`
 * and `*.localhost`, names without a dot (the pod's hostname, service short names), `*.svc`,
 * `*.cluster.local`, `*.internal` and this machine's hostname; `allowedHosts` adds exact names (or
 * `*.suffix` patterns). Refusals are `403` and echo nothing but a short cut of the name.
 *
 * @param allowedHosts - Extra names, or `false` to turn the check off.
 * @throws TypeError on an invalid list.
 */
export function createHostGuard(allowedHosts: readonly string[] | false | undefined): RequestHandler | undefined {
  if (allowedHosts === false) return undefined;
  const extra = allowedHosts ?? [];
  if (!Array.isArray(extra) || !extra.every((h) => typeof h === 'string' && h.trim() !== '')) {
    throw new TypeError(
      'createIntrospectionRouter: allowedHosts must be an array of host names (e.g. ["debug.example.com", "*.corp.example"]) or false',
    );
  }
  const exact = new Set(extra.filter((h) => !h.startsWith('*.')).map((h) => hostName(h)));
  const suffixes = extra.filter((h) => h.startsWith('*.')).map((h) => h.slice(1).toLowerCase());
  const ownName = os.hostname().toLowerCase();
  return function guardHostHeader(req: Request, res: Response, next: NextFunction): void {
    const header = req.headers.host;
    // HTTP/1.0 clients may send no Host: they are not browsers, so there is nothing to rebind.
    if (header === undefined) {
      next();
      return;
    }
    const host = hostName(header);
    if (safeByDefault(host, ownName) || exact.has(host) || suffixes.some((s) => host.endsWith(s))) {
      next();
      return;
    }
    sendError(
      res,
      403,
      `host ${JSON.stringify(host.slice(0, 64))} is not allowed for /debug (DNS rebinding protection); add it to the router option allowedHosts`,
    );
  };
}
