import { isIPv6 } from 'node:net';
import os from 'node:os';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { quoteText } from '../util/cut-text';
import { sendError } from './errors';

/**
 * Suffixes of names a DNS-rebinding page cannot use: the attacker needs a name whose answers they
 * control, and public DNS never answers these. `.local` is not one of them, `.cluster.local`
 * included: on the developer's laptop (where the browser under attack runs) those names go to
 * multicast DNS, which any device on the same network may answer.
 */
const SAFE_SUFFIXES = ['.localhost', '.svc', '.internal'];
const MDNS_SUFFIX = '.local';

const IPV4_PART = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
/** The one spelling of an IPv4 address a browser sends: four decimal parts, no leading zeros. */
const IPV4 = new RegExp(`^${IPV4_PART}(?:\\.${IPV4_PART}){3}$`);
/** A DNS label (letters, digits, hyphens inside; `_` as in Docker Compose service names), lower case. */
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
/** A last label a URL parser reads as a number (decimal, octal or hex): such a host is an IPv4 address. */
const NUMERIC_LABEL = /^(?:[0-9]+|0x[0-9a-f]*)$/;
const PORT = /^[0-9]{1,5}$/;
const IPV6_IN_BRACKETS = 'an IPv6 address must be written in brackets, as [::1]';

/** A `Host` value taken apart: an IP literal or a DNS name (lower case, without port or trailing dot), or why it is neither. */
type ParsedHost = { readonly kind: 'ip' | 'name'; readonly host: string } | { readonly kind: 'invalid'; readonly why: string };

/** `host` (no port) as an IP literal or a name, lower case, one trailing dot removed. */
function parseHostName(text: string): ParsedHost {
  const host = text.toLowerCase();
  if (host.startsWith('[')) {
    // Exactly `[address]`: no zone (`%25eth0`, which browsers do not send), no IPvFuture.
    const address = host.slice(1, -1);
    if (!host.endsWith(']') || !/^[0-9a-f:.]+$/.test(address) || !isIPv6(address)) {
      return { kind: 'invalid', why: IPV6_IN_BRACKETS };
    }
    return { kind: 'ip', host: address };
  }
  if (IPV4.test(host)) return { kind: 'ip', host };
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  const labels = name.split('.');
  if (name.length > 253 || !labels.every((label) => LABEL.test(label))) {
    return { kind: 'invalid', why: 'a host name is dot-separated labels of letters, digits and hyphens' };
  }
  if (NUMERIC_LABEL.test(labels[labels.length - 1]!)) {
    return { kind: 'invalid', why: 'an IPv4 address must be written as four decimal numbers, as 127.0.0.1' };
  }
  return { kind: 'name', host: name };
}

/** The host of a `Host` header value: `host` or `host:port`, nothing else (RFC 9110 §7.2). */
function parseHostHeader(header: string): ParsedHost {
  // Where a port could start: after the brackets of an IPv6 literal, else at the only colon.
  const close = header.startsWith('[') ? header.indexOf(']') : -1;
  const colon = header.indexOf(':', close + 1);
  if (colon < 0) return parseHostName(header);
  if (close < 0 && header.includes(':', colon + 1)) return { kind: 'invalid', why: IPV6_IN_BRACKETS };
  const port = header.slice(colon + 1);
  if (!PORT.test(port) || Number(port) > 65535) return { kind: 'invalid', why: 'the port must be a number from 0 to 65535' };
  return parseHostName(header.slice(0, colon));
}

/** The names every guard allows, whatever `allowedHosts` adds. */
function safeByDefault(parsed: Extract<ParsedHost, { kind: 'ip' | 'name' }>, ownName: string): boolean {
  if (parsed.kind === 'ip') return true;
  const { host } = parsed;
  if (host === 'localhost' || !host.includes('.')) return true;
  if (host.endsWith(MDNS_SUFFIX)) return false;
  return host === ownName || SAFE_SUFFIXES.some((suffix) => host.endsWith(suffix));
}

/**
 * The longest `Host` value that can be valid: a 253-character name, its trailing dot, and `:65535`.
 * A longer one is refused before it is taken apart (a 16 MB one of dots, which a host's raised
 * `maxHeaderSize` lets through, was split into 8 million labels: 1 s in one turn).
 */
const MAX_HOST_CHARS = 253 + 1 + 6;

/**
 * The most header fields looked through for a second `Host`: Node's default `maxHeadersCount`. A
 * host that lifts that limit could otherwise make the look cover millions of fields.
 */
const MAX_HEADER_FIELDS = 2000;

/** How many `Host` fields the request carried (a browser sends one); call only within {@link MAX_HEADER_FIELDS}. */
function hostFieldCount(req: Request): number {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') count++;
  }
  return count;
}

/** The host of a `Host` value, or why it is invalid, without looking past what a valid one can be. */
function checkHost(req: Request, header: string): ParsedHost {
  if (hostFieldCount(req) > 1) return { kind: 'invalid', why: 'a request carries one Host header' };
  if (header.length > MAX_HOST_CHARS) return { kind: 'invalid', why: `a host and port are at most ${MAX_HOST_CHARS} characters` };
  return parseHostHeader(header);
}

const WHERE = 'createIntrospectionRouter: allowedHosts';

/** One `allowedHosts` entry as a name or `*.suffix` (as `.suffix`), lower case; throws with the fix. */
function allowedEntry(entry: unknown, index: number): { exact?: string; suffix?: string } {
  if (typeof entry !== 'string' || entry === '') {
    throw new TypeError(
      `${WHERE} must be an array of host names (e.g. ["debug.example.com", "*.corp.example"]) or false; entry ${index} is ${typeof entry === 'string' ? 'empty' : typeof entry}`,
    );
  }
  const wildcard = entry.startsWith('*.');
  const parsed = parseHostName(wildcard ? entry.slice(2) : entry);
  if (parsed.kind !== 'invalid' && !(wildcard && parsed.kind === 'ip')) {
    return wildcard ? { suffix: `.${parsed.host}` } : { exact: parsed.host };
  }
  let hint = '';
  try {
    // A URL or host:port where a name belongs: suggest the name.
    const text = entry.trim();
    const { hostname } = new URL(text.includes('://') ? text : `http://${text}`);
    if (hostname !== '' && parseHostName(hostname).kind === 'name') hint = `; did you mean ${JSON.stringify(hostname)}?`;
  } catch {
    // Not even a URL: no suggestion.
  }
  throw new TypeError(
    `${WHERE}[${index}] must be a host name, an IP address or a "*.suffix" pattern, without port, got ${quoteText(entry, 64)}${hint}`,
  );
}

/**
 * Refuses `/debug/*` requests whose `Host` header names a host that is not allowed, so that a web
 * page on an attacker's domain, rebound to 127.0.0.1 (a developer's `kubectl port-forward`), cannot
 * read the debug surface from the developer's browser.
 *
 * The header is parsed strictly: `host` or `host:port` with a port up to 65535; the host is an IPv6
 * literal in brackets (`[::1]`, no zone), an IPv4 dotted quad (`127.0.0.1`, no leading zeros), or a
 * DNS name (labels of letters, digits, `-` and `_`; one trailing dot is ignored, so `localhost.` is
 * `localhost`). Anything else (`[::1]evil.com`, `user@host`, `%6cocalhost`, `host:`, an empty value,
 * two `Host` fields, a numeric form a browser would have rewritten such as `0x7f.1` or `2130706433`)
 * is a `400`: browsers never send it. A value longer than 260 characters is refused as invalid
 * before it is taken apart, and a request of more than 2000 header fields (Node's default limit,
 * which a host may lift) answers `431` before they are looked through.
 *
 * Allowed by default: IP literals, `localhost` and `*.localhost`, names without a dot (the pod's
 * hostname, service short names), `*.svc`, `*.internal` and this machine's hostname. No `*.local`
 * name is (`*.cluster.local` included, and this machine's own name when it ends in `.local`): on a
 * developer's laptop multicast DNS resolves them, and any device on the same network may answer,
 * so a neighbour could rebind them. `allowedHosts` adds exact names (or `*.suffix` patterns), which
 * is how a `.local` name is allowed deliberately. Refusals are `403` and echo nothing but a short
 * cut of the name. A request without `Host` (HTTP/1.0, never a browser) passes.
 *
 * @param allowedHosts - Extra names, or `false` to turn the check off.
 * @throws TypeError on an invalid list, naming the entry (and the name meant, for a URL or a port).
 */
export function createHostGuard(allowedHosts: readonly string[] | false | undefined): RequestHandler | undefined {
  if (allowedHosts === false) return undefined;
  const extra: unknown = allowedHosts ?? [];
  if (!Array.isArray(extra)) {
    throw new TypeError(`${WHERE} must be an array of host names (e.g. ["debug.example.com", "*.corp.example"]) or false`);
  }
  const entries = extra.map(allowedEntry);
  const exact = new Set(entries.flatMap((e) => (e.exact === undefined ? [] : [e.exact])));
  const suffixes = entries.flatMap((e) => (e.suffix === undefined ? [] : [e.suffix]));
  const own = parseHostName(os.hostname());
  const ownName = own.kind === 'name' ? own.host : '';
  return function guardHostHeader(req: Request, res: Response, next: NextFunction): void {
    const header = req.headers.host;
    // HTTP/1.0 clients may send no Host: they are not browsers, so there is nothing to rebind.
    if (header === undefined) {
      next();
      return;
    }
    if (req.rawHeaders.length > 2 * MAX_HEADER_FIELDS) {
      sendError(res, 431, `a request to the debug endpoints carries at most ${MAX_HEADER_FIELDS} header fields`);
      return;
    }
    const parsed = checkHost(req, header);
    if (parsed.kind === 'invalid') {
      sendError(res, 400, `invalid Host header ${quoteText(header, 64)}: ${parsed.why}`);
      return;
    }
    const { host } = parsed;
    if (safeByDefault(parsed, ownName) || exact.has(host) || suffixes.some((s) => host.endsWith(s))) {
      next();
      return;
    }
    sendError(
      res,
      403,
      `host ${quoteText(host, 64)} is not allowed for /debug (DNS rebinding protection); add it to the router option allowedHosts`,
    );
  };
}
