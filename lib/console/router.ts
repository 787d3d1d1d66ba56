import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { sendError } from '../http/errors';
import { listElements, prefersGzip } from '../http/header-lists';
import { CONSOLE_PAGE_PATH } from '../http/unguarded';
import { quoteText } from '../util/cut-text';
import { loadConsoleAssets, type ConsoleAsset } from './assets';

/**
 * The page runs only its own bundled script and style sheet and talks only to the server it came
 * from: no inline script, no `eval`, no third-party origin, no framing (clickjacking), and DOM
 * sinks that parse HTML from strings are closed by Trusted Types (the page builds its DOM with
 * `textContent` and `createElement`).
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
].join('; ');

/** The built files' names; anything else under `/debug/console/` is a 404 without a lookup. */
const FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function setConsoleHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
}

function sendAsset(req: Request, res: Response, asset: ConsoleAsset): void {
  setConsoleHeaders(res);
  // Revalidated on every load (a cheap 304), so a package upgrade is seen at once; never stored
  // by shared caches. The page's data comes from the JSON endpoints, which are no-store.
  res.setHeader('Cache-Control', 'no-cache, private');
  res.setHeader('ETag', asset.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  // Weak comparison (RFC 9110 13.1.2): `W/"x"` matches `"x"`. The header is read within the list limits.
  const tags = listElements(req, 'if-none-match') ?? [];
  if (tags.some(({ value }) => value === '*' || value.replace(/^W\//, '') === asset.etag)) {
    res.status(304).end();
    return;
  }
  const gzip = asset.gzipped !== undefined && prefersGzip(req);
  const body = gzip ? asset.gzipped! : asset.body;
  res.status(200);
  res.setHeader('Content-Type', asset.type);
  if (gzip) res.setHeader('Content-Encoding', 'gzip');
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

/**
 * Serves the debug console: `/debug/` (the page), `/debug` (a redirect to it, relative so that a
 * mount prefix is kept) and `/debug/console/<file>`. The files are read when this is created.
 */
export function createConsoleHandler(dir?: string): RequestHandler {
  const assets = loadConsoleAssets(dir);
  return function serveConsole(req: Request, res: Response, next: NextFunction): void {
    const match = CONSOLE_PAGE_PATH.exec(req.path);
    if (!match || (req.method !== 'GET' && req.method !== 'HEAD')) {
      next();
      return;
    }
    if (!req.path.endsWith('/') && match[1] === undefined) {
      // Relative, so `/ops/debug` goes to `/ops/debug/` whatever prefix the host mounted us under;
      // the page's own links are relative to that trailing slash.
      // Not res.redirect(): it negotiates a body over the whole Accept header. The query goes
      // along as it came (the request target holds no characters a Location may not).
      const query = req.originalUrl.indexOf('?');
      setConsoleHeaders(res);
      res.status(301).setHeader('Location', `debug/${query >= 0 ? req.originalUrl.slice(query) : ''}`);
      res.end();
      return;
    }
    const name = match[1] ?? 'index.html';
    const asset = match[1] === 'index.html' || !FILE_NAME.test(name) ? undefined : assets.get(name);
    if (asset === undefined) {
      sendError(res, 404, `no debug console file ${quoteText(name, 64)}`);
      return;
    }
    sendAsset(req, res, asset);
  };
}
