/**
 * The one parser of list headers (`Accept`, `Accept-Encoding`, `If-None-Match`), over a real
 * socket: what it reads, what it leaves out, and its limits (4096 characters, 64 elements), which
 * answer 431 through the router's error path before anything past them is parsed.
 */
import express, { type Request } from 'express';
import { answerErrors, handle } from '../../lib/http/errors';
import {
  MAX_LIST_ENTRIES,
  MAX_LIST_HEADER_CHARS,
  acceptRanges,
  listElements,
  preferredMediaType,
  prefersGzip,
} from '../../lib/http/header-lists';
import { listen, request, type Listening } from '../helpers/http';

/** What each helper makes of the request, as JSON. */
function probe(req: Request): unknown {
  return {
    accept: acceptRanges(req)?.map((r) => ({
      type: r.type,
      subtype: r.subtype,
      q: r.q,
      order: r.order,
      params: Object.fromEntries(r.params),
    })),
    etags: listElements(req, 'if-none-match')?.map((e) => e.value),
    preferred: preferredMediaType(req, ['text/html', 'application/json']) ?? null,
    gzip: prefersGzip(req),
  };
}

describe('list headers', () => {
  let server: Listening;
  beforeAll(async () => {
    const app = express();
    app.get(
      '/probe',
      handle((req, res) => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify(probe(req)));
      }),
    );
    app.use(answerErrors());
    server = await listen(app);
  });
  afterAll(() => server.close());

  const read = async (headers: Record<string, string | string[]>) => {
    const res = await request(`${server.origin}/probe`, { headers });
    return { status: res.status, body: res.json() };
  };

  it('takes media ranges apart: case, parameters, quoted strings (with commas and semicolons), weights, order', async () => {
    const { body } = await read({ Accept: 'Text/HTML;Level="1,2;3";q=0.5, application/*;q=0, */*;charset=utf-8' });
    expect(body['accept']).toEqual([
      { type: 'text', subtype: 'html', q: 0.5, order: 0, params: { level: '1,2;3' } },
      { type: 'application', subtype: '*', q: 0, order: 1, params: {} },
      { type: '*', subtype: '*', q: 1, order: 2, params: { charset: 'utf-8' } },
    ]);
  });

  it('leaves out malformed elements only: a bad weight, a parameter without =, a range that is not type/subtype', async () => {
    const { body } = await read({ Accept: 'text/html;q=2, text/plain;q=0.5000, a;b, */html, text, text/x/y, application/json;q=1.000,,' });
    expect((body['accept'] as Array<{ subtype: string }>).map((r) => r.subtype)).toEqual(['json']);
  });

  it('prefers by weight, then specificity, then header order, then the offer order; q=0 refuses', async () => {
    const cases: Array<[string | undefined, string | null]> = [
      [undefined, 'text/html'],
      ['application/json', 'application/json'],
      ['text/html;q=0.5, application/json', 'application/json'],
      ['*/*', 'text/html'],
      ['application/json, text/html', 'application/json'],
      ['*/*, application/json', 'application/json'],
      ['text/*;q=0.9, */*;q=0.1, application/json;q=0.5', 'text/html'],
      ['text/html;q=0, */*', 'application/json'],
      ['text/html;q=0, application/json;q=0', null],
      ['image/png', null],
      // Parameters never disqualify a range.
      ['application/json;version=7;charset=latin1, text/html;q=0.1', 'application/json'],
    ];
    for (const [accept, expected] of cases) {
      const { body } = await read(accept === undefined ? {} : { Accept: accept });
      expect({ accept, preferred: body['preferred'] }).toEqual({ accept, preferred: expected });
    }
  });

  it('gzips when gzip weighs above zero and no less than no encoding', async () => {
    const cases: Array<[string | undefined, boolean]> = [
      [undefined, false],
      ['', false],
      ['gzip', true],
      ['GZIP', true],
      ['gzip, deflate, br', true],
      ['*', true],
      ['gzip;q=0', false],
      ['*;q=0', false],
      ['identity', false],
      ['br', false],
      ['gzip;q=0.5', true],
      ['gzip;q=0.5, identity', false],
      ['identity;q=0.5, gzip', true],
      ['gzip;q=0.5, identity;q=0.5', true],
      ['*;q=0.2, identity;q=0.5', false],
      ['deflate, *;q=0.9', true],
    ];
    for (const [acceptEncoding, gzip] of cases) {
      const { body } = await read(acceptEncoding === undefined ? {} : { 'Accept-Encoding': acceptEncoding });
      expect({ acceptEncoding, gzip: body['gzip'] }).toEqual({ acceptEncoding, gzip });
    }
  });

  it('keeps entity tags as sent, a comma inside quotes included', async () => {
    const { body } = await read({ 'If-None-Match': 'W/"a,b", "c" ,*' });
    expect(body['etags']).toEqual(['W/"a,b"', '"c"', '*']);
  });

  it(`reads ${MAX_LIST_ENTRIES} elements and ${MAX_LIST_HEADER_CHARS} characters, and answers 431 naming the header past either`, async () => {
    const elements = (n: number) => Array.from({ length: n }, (_, i) => `a/x${i}`).join(',');
    expect((await read({ Accept: elements(MAX_LIST_ENTRIES) })).status).toBe(200);
    const long = `text/html;p=${'x'.repeat(MAX_LIST_HEADER_CHARS - 'text/html;p='.length)}`;
    expect((await read({ Accept: long })).status).toBe(200);

    const tooMany = await read({ Accept: elements(MAX_LIST_ENTRIES + 1) });
    expect(tooMany).toEqual({
      status: 431,
      body: { error: `header Accept has more than ${MAX_LIST_ENTRIES} elements (${MAX_LIST_ENTRIES + 1})` },
    });
    const tooLong = await read({ 'Accept-Encoding': `${'x'.repeat(MAX_LIST_HEADER_CHARS)}y` });
    expect(tooLong).toEqual({
      status: 431,
      body: { error: `header Accept-Encoding is longer than ${MAX_LIST_HEADER_CHARS} characters (${MAX_LIST_HEADER_CHARS + 1})` },
    });
    // Fields repeated are one header, as Node joins them.
    const repeated = await read({ 'If-None-Match': Array.from({ length: MAX_LIST_ENTRIES + 1 }, (_, i) => `"${i}"`) });
    expect(repeated.status).toBe(431);
    expect(repeated.body['error']).toMatch(/^header If-None-Match has more than 64 elements/);
  });
});
