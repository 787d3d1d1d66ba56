/**
 * Which requests are ours, in every spelling Express routes: with `debug: false` our JSON 404
 * answers exactly the requests that reach the debug data (vars, pprof) when debug is on, and every
 * other request (`/debug`, `/debug/`, `/debug/console/…` included) reaches the host's own routes.
 * Express matches paths case-insensitively and without decoding them; the corpus below spells our
 * paths every way a client might, and each spelling goes over a real socket, verbatim.
 */
import express from 'express';
import { createIntrospectionState } from '../../lib/state/store';
import { closeIntrospectionApps, introspectionApp } from '../helpers/introspection-app';
import { closeAllListening, listen } from '../helpers/http';
import { rawRequest, type RawResponse } from '../helpers/raw-http';
import { prng } from '../helpers/prng';
import type { IntrospectionRouterOptions } from '../../lib/introspection/router';

afterAll(async () => {
  await closeAllListening();
  await closeIntrospectionApps();
});

const DISABLED = { error: 'debug endpoints are disabled (debug: false, the "debug port 0" setting); health endpoints keep answering' };
/** What the host's catch-all answers: a request that fell through to it. */
const HOST_STATUS = 418;

/** An app with our router and, after it, the host's routes: `/debug` pages of its own and a catch-all. */
async function serve(options: IntrospectionRouterOptions): Promise<number> {
  const state = createIntrospectionState();
  state.setConfig({ templates: {}, watched_resources: [] }, '1');
  const app = introspectionApp(state, options);
  app.get('/debug', (_req, res) => void res.status(HOST_STATUS).json({ host: 'debug' }));
  app.use((req: express.Request, res: express.Response) => void res.status(HOST_STATUS).json({ host: req.path }));
  return (await listen(app)).port;
}

function send(port: number, method: string, target: string): Promise<RawResponse> {
  return rawRequest(port, `${method} ${target} HTTP/1.1`, ['Host: localhost']);
}

const DATA_PATHS = [
  '/debug/vars',
  '/debug/vars/',
  '/debug/vars/config',
  '/debug/vars/nope',
  '/debug/pprof',
  '/debug/pprof/',
  '/debug/pprof/heap',
];
const CONSOLE_PATHS = ['/debug', '/debug/', '/debug/console/console.js', '/debug/console/', '/debug/console/nope.js'];
const HOST_PATHS = ['/debug/host-page', '/debug/varsx', '/debug/pprofile', '/debugx/vars', '/vars', '/debug/console', '/debug/Consolex/a'];

/** Every way of writing `path` this test tries: casings, slashes, encodings, separators. */
function spellings(path: string, rand: () => number): string[] {
  const randomCase = (s: string): string => [...s].map((c) => (rand() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');
  const title = path.replace(/\/(\w)/g, (_m, c: string) => `/${c.toUpperCase()}`);
  const firstLetter = path.search(/[a-z]/);
  const encodeAt = (i: number, upperHex: boolean): string => {
    const hex = path.charCodeAt(i).toString(16);
    return `${path.slice(0, i)}%${upperHex ? hex.toUpperCase() : hex}${path.slice(i + 1)}`;
  };
  const slashes = [...path.matchAll(/\//g)].map((m) => m.index);
  const lastSlash = path.lastIndexOf('/');
  // (A target that does not start with `/` never reaches a router: Node answers it with a 400.)
  return [
    path,
    path.toUpperCase(),
    title,
    randomCase(path),
    randomCase(path),
    `${path}/`,
    `${path.toUpperCase()}/`,
    `${path}//`,
    ...slashes.map((i) => `${path.slice(0, i)}/${path.slice(i)}`),
    `/${path}`,
    encodeAt(firstLetter, false),
    encodeAt(path.length - 1, true),
    ...(lastSlash > 0
      ? [`${path.slice(0, lastSlash)}%2f${path.slice(lastSlash + 1)}`, `${path.slice(0, lastSlash)}%2F${path.slice(lastSlash + 1)}`]
      : []),
    path.replace(/(?!^)\//g, '\\'),
    `${path};x`,
    path.replace(/^\/debug/, '/debug;x'),
    `${path}%20`,
    `${path}%00`,
    `${path}.json`,
    `${path}?x=1`,
    `${path.toUpperCase()}?field={.version}`,
    `${path}#frag`,
    `${path}/.`,
    `${path}/..`,
    path.replace(/^\/debug/, '/debug/.'),
    path.replace(/^\/debug/, '/x/../debug'),
    `http://localhost${path}`,
    `HTTP://LOCALHOST${path.toUpperCase()}`,
  ];
}

describe('debug routing in every spelling (Express ' + (process.env.EXPRESS_MAJOR ?? '5') + ')', () => {
  let debugOn: number;
  let debugOff: number;
  let consoleOn: number;
  const rand = prng(25);
  const corpus = [...new Set([...DATA_PATHS, ...CONSOLE_PATHS, ...HOST_PATHS].flatMap((p) => spellings(p, rand)))];

  beforeAll(async () => {
    // Debug on without the console: what is ours is exactly the debug data (and health).
    debugOn = await serve({ debug: true, console: false, pprof: {} });
    debugOff = await serve({ debug: false });
    consoleOn = await serve({ debug: true, pprof: {} });
  });

  it('with debug: false, answers our JSON 404 for exactly the requests that reach the debug data when debug is on', async () => {
    const mismatches: string[] = [];
    let ours = 0;
    for (const target of corpus) {
      const [on, off] = await Promise.all([send(debugOn, 'GET', target), send(debugOff, 'GET', target)]);
      const onOurs = on.status !== HOST_STATUS;
      const offOurs = off.status !== HOST_STATUS;
      if (onOurs) ours++;
      if (onOurs !== offOurs) mismatches.push(`${target}: debug on ${on.status}, debug off ${off.status} ${off.text.slice(0, 80)}`);
      else if (offOurs && (off.status !== 404 || off.text !== JSON.stringify(DISABLED)))
        mismatches.push(`${target}: debug off answered ${off.status} ${off.text.slice(0, 80)}`);
    }
    expect(mismatches).toEqual([]);
    // The corpus holds both kinds in numbers: spellings that are ours and spellings that are not.
    expect(ours).toBeGreaterThan(100);
    expect(corpus.length - ours).toBeGreaterThan(100);
  });

  it('owns the same requests for writes as for reads (405 on every spelling that is ours), with debug on or off', async () => {
    const mismatches: string[] = [];
    for (const target of corpus) {
      for (const port of [debugOn, debugOff]) {
        const [get, post] = await Promise.all([send(port, 'GET', target), send(port, 'POST', target)]);
        const getOurs = get.status !== HOST_STATUS;
        const postOurs = post.status !== HOST_STATUS;
        if (getOurs !== postOurs || (postOurs && post.status !== 405 && post.status !== 400))
          mismatches.push(`${port === debugOn ? 'on' : 'off'} ${target}: GET ${get.status}, POST ${post.status} ${post.text.slice(0, 80)}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it.each([['/DEBUG/vars'], ['/Debug/Vars/config'], ['/debug/VARS/'], ['/DEBUG/PPROF/heap'], ['/debug/pprof']])(
    'with debug: false, %s is our JSON 404, not the host page',
    async (target) => {
      const res = await send(debugOff, 'GET', target);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(res.text)).toEqual(DISABLED);
    },
  );

  it.each([['/debug'], ['/debug/'], ['/DEBUG/'], ['/debug/console/console.js'], ['/Debug/Console/console.js'], ['/debug/console/']])(
    "with debug: false, %s falls through to the host's routes, whatever the method",
    async (target) => {
      for (const method of ['GET', 'HEAD', 'POST', 'DELETE']) {
        const res = await send(debugOff, method, target);
        expect({ method, status: res.status }).toEqual({ method, status: HOST_STATUS });
      }
    },
  );

  it('with debug on, every casing of the console and data paths is ours: the console answers its page, a redirect or a JSON 404', async () => {
    const casings = (p: string): string[] => [p, p.toUpperCase(), p.replace(/\/(\w)/g, (_m, c: string) => `/${c.toUpperCase()}`)];
    const failures: string[] = [];
    for (const target of DATA_PATHS.flatMap(casings)) {
      const res = await send(consoleOn, 'GET', target);
      if (res.status === HOST_STATUS) failures.push(`${target}: the host's`);
    }
    for (const target of CONSOLE_PATHS.flatMap(casings)) {
      const res = await send(consoleOn, 'GET', target);
      const json = res.status === 404 && /^application\/json/.test(res.headers['content-type'] ?? '');
      const page = res.status === 200 && res.headers['content-security-policy'] !== undefined;
      const redirect = res.status === 301 && res.headers['location'] === 'debug/';
      if (!(json || page || redirect)) failures.push(`${target}: ${res.status} ${res.text.slice(0, 60)}`);
    }
    expect(failures).toEqual([]);
    // The page itself in another casing is the page, not a copy with broken relative links.
    expect((await send(consoleOn, 'GET', '/DEBUG')).headers['location']).toBe('debug/');
    expect((await send(consoleOn, 'GET', '/DEBUG/')).headers['content-type']).toMatch(/^text\/html/);
  });
});
