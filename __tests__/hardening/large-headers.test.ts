/**
 * A host that raises Node's `maxHeaderSize` (here to 16 MiB) and lifts `maxHeadersCount` lets
 * headers of millions of characters reach the routers. Every header this package parses is
 * bounded before it is parsed, over real sockets: list headers (`Accept`, `Accept-Encoding`,
 * `If-None-Match`) past 4096 characters or 64 elements answer 431 naming the header, values that
 * cannot be valid past a fixed length (`Host`, `Authorization`, `Last-Event-ID`) get the answer an
 * invalid one gets, a query string past its limit answers 413, and the headers nobody here needs
 * (`If-None-Match` on the health endpoints) are not read at all. Each answer is asserted, not
 * timed: before these bounds, the same requests were answered 200 after 0.3 s to 3 s of one turn.
 */
import crypto from 'node:crypto';
import express from 'express';
import { Registry, Gauge } from 'prom-client';
import { createAccessGuard } from '../../lib/http/access-guard';
import { createMetricsRouter } from '../../lib/metrics';
import { createIntrospectionState } from '../../lib/state/store';
import { request, type HttpResponse } from '../helpers/http';
import { startServer, type HardeningServer } from './helpers';

const MAX_HEADER_SIZE = 16 * 1024 * 1024;
const TOKEN = '3c6e0b8a4f3c1d2e5f6a7b8c9d0e1f2a';

/** An `Accept` of `n` distinct media ranges, each with a weight: what made `req.accepts()` compare n × offers. */
const manyRanges = (n: number): string => Array.from({ length: n }, (_, i) => `application/x-${i};q=0.${(i % 9) + 1}`).join(',');
const ACCEPT_100K = manyRanges(100_000);
const CODINGS_100K = Array.from({ length: 100_000 }, (_, i) => `x-${i};q=0.5`).join(',');
const ETAGS_1M = Array.from({ length: 1_000_000 }, (_, i) => `"e${i}"`).join(',');
const HUGE = 'a'.repeat(MAX_HEADER_SIZE - 64 * 1024);

function registry(): Registry {
  const reg = new Registry();
  new Gauge({ name: 'up_gauge', help: 'g', registers: [reg] }).set(1);
  return reg;
}

const errorOf = (res: HttpResponse): unknown => res.json()['error'];

describe('headers of millions of characters, with maxHeaderSize raised to 16 MiB', () => {
  let server: HardeningServer;
  beforeAll(async () => {
    const state = createIntrospectionState();
    state.setConfig({ templates: {}, watched_resources: [] }, 'v1');
    state.publishEvent('config.validated');
    server = await startServer(state, {
      maxHeaderSize: MAX_HEADER_SIZE,
      extra: (app: express.Express) => {
        app.use(createMetricsRouter(registry()));
        app.get('/host/route', (_req, res) => void res.end('the host'));
      },
    });
    server.server.maxHeadersCount = 0;
  });
  afterAll(() => server.close());

  const get = (path: string, headers: Record<string, string | string[]>): Promise<HttpResponse> =>
    request(`${server.base}${path}`, { headers, timeoutMs: 30_000 });

  it('/metrics: an Accept or Accept-Encoding of 100 000 elements, or 2000 Accept fields, is 431 naming the header', async () => {
    const accept = await get('/metrics', { Accept: ACCEPT_100K });
    expect({ status: accept.status, error: errorOf(accept) }).toEqual({
      status: 431,
      error: `header Accept is longer than 4096 characters (${ACCEPT_100K.length})`,
    });
    const fields = await get('/metrics', { Accept: Array.from({ length: 2000 }, () => 'text/plain') });
    expect(fields.status).toBe(431);
    expect(errorOf(fields)).toMatch(/^header Accept is longer than 4096 characters/);
    const encoding = await get('/metrics', { 'Accept-Encoding': CODINGS_100K });
    expect(encoding.status).toBe(431);
    expect(errorOf(encoding)).toMatch(/^header Accept-Encoding is longer than 4096 characters/);
    // Within the limits the same endpoint answers as asked.
    const ok = await get('/metrics', { Accept: `${manyRanges(63)},application/openmetrics-text;version=1.0.0` });
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^application\/openmetrics-text; version=1\.0\.0/);
  });

  it('/debug/pprof/ and an event watch: an Accept of 100 000 elements is 431, and no watch is left open', async () => {
    const pprof = await get('/debug/pprof/', { Accept: ACCEPT_100K });
    expect(pprof.status).toBe(431);
    expect(errorOf(pprof)).toMatch(/^header Accept is longer than 4096 characters/);
    const watch = await get('/debug/vars/events?watch=1', { Accept: ACCEPT_100K });
    expect(watch.status).toBe(431);
    const events = await get('/debug/vars/events', {});
    expect(events.status).toBe(200);
  });

  it('the console: an If-None-Match of a million tags or a long Accept-Encoding is 431; its redirect negotiates nothing', async () => {
    const tags = await get('/debug/', { 'If-None-Match': ETAGS_1M });
    expect(tags.status).toBe(431);
    expect(errorOf(tags)).toMatch(/^header If-None-Match is longer than 4096 characters/);
    const encoding = await get('/debug/', { 'Accept-Encoding': CODINGS_100K });
    expect(encoding.status).toBe(431);
    const redirect = await get('/debug', { Accept: ACCEPT_100K });
    expect({ status: redirect.status, location: redirect.headers['location'] }).toEqual({ status: 301, location: 'debug/' });
  });

  it('health endpoints do not read If-None-Match at all: 200, no ETag', async () => {
    for (const path of ['/healthz', '/livez', '/readyz?verbose']) {
      const res = await get(path, { 'If-None-Match': ETAGS_1M });
      expect({ path, status: res.status, etag: res.headers['etag'] }).toEqual({ path, status: 200, etag: undefined });
    }
  });

  it('Host, Last-Event-ID and the query string past what a valid one can be get the answer an invalid one gets', async () => {
    const host = await get('/debug/vars', { Host: HUGE });
    expect(host.status).toBe(400);
    expect(errorOf(host)).toMatch(/: a host and port are at most 260 characters$/);
    const lastEventId = await get('/debug/vars/events?watch=1', { 'Last-Event-ID': '1'.repeat(HUGE.length) });
    expect(lastEventId.status).toBe(400);
    expect(errorOf(lastEventId)).toMatch(/^header Last-Event-ID must be an event seq/);
    const query = `?field=${'x'.repeat(10 * 1024 * 1024)}`;
    const field = await get(`/debug/vars/config${query}`, {});
    expect({ status: field.status, error: errorOf(field) }).toEqual({
      status: 413,
      error: `the query string is longer than ${64 * 1024} characters (${query.length - 1}); a ?field= template is at most 4096 characters (limits.jsonPath.maxTemplateLength)`,
    });
    expect((await get(`/healthz${query}`, {})).status).toBe(413);
    // The host's own routes are the host's: the limit is not applied to them.
    const hosts = await get(`/host/route${query}`, {});
    expect({ status: hosts.status, text: hosts.text }).toEqual({ status: 200, text: 'the host' });
  });

  it('more header fields than Node lets through by default are refused on /debug (431), health stays open', async () => {
    const fields = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`x-field-${i}`, '1']));
    const debug = await get('/debug/vars', fields);
    expect(debug.status).toBe(431);
    expect(errorOf(debug)).toBe('a request to the debug endpoints carries at most 2000 header fields');
    expect((await get('/healthz', fields)).status).toBe(200);
  });
});

describe('an Authorization header of 16 MiB', () => {
  let server: HardeningServer;
  beforeAll(async () => {
    server = await startServer(createIntrospectionState(), { maxHeaderSize: MAX_HEADER_SIZE, guard: createAccessGuard({ token: TOKEN }) });
  });
  afterAll(() => server.close());

  it('is refused as a wrong token, without being matched or hashed', async () => {
    // The guard hashes the token it is given with SHA-256 (to compare digests in constant time):
    // counted here (Express's ETags of the error bodies are SHA-1).
    const spy = jest.spyOn(crypto, 'createHash');
    const tokenHashes = () => spy.mock.calls.filter(([algorithm]) => algorithm === 'sha256').length;
    try {
      for (const authorization of [`Bearer ${HUGE}`, `Bearer ${TOKEN}${HUGE}`, `Bearer ${HUGE} x`]) {
        const res = await request(`${server.base}/debug/vars`, { headers: { Authorization: authorization }, timeoutMs: 30_000 });
        expect({ status: res.status, body: res.json() }).toEqual({ status: 401, body: { error: 'unauthorized' } });
      }
      expect(tokenHashes()).toBe(0);
      const wrong = await request(`${server.base}/debug/vars`, { headers: { Authorization: `Bearer ${TOKEN.slice(1)}x` } });
      expect(wrong.status).toBe(401);
      expect(tokenHashes()).toBe(1);
    } finally {
      spy.mockRestore();
    }
    const ok = await request(`${server.base}/debug/vars`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
  });
});
