/**
 * Every text a host or a client controls comes back cut when an answer echoes it: a provider's
 * error message, whatever was thrown, a health check's reason, a name in the URL, a query value,
 * a `Host` header. The cut is marked with `…`, the body stays small, and what lay past the cut
 * (here a secret-looking tail) is never served. Over real sockets.
 */
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';
import { request, type HttpResponse } from '../helpers/http';
import { startServer, type HardeningServer } from './helpers';

/** 20 000 characters whose tail looks like a secret: it must never be echoed. */
const HUGE = `${'provider failed: '.padEnd(5000, 'x')}TAIL-SECRET-${'s'.repeat(15_000 - 12)}`;
const MESSAGE_CUT = 1024;

function errorOf(res: HttpResponse): string {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.text).not.toContain('TAIL-SECRET');
  expect(res.body.length).toBeLessThan(2048);
  return res.json<{ error: string }>().error;
}

describe('echoed text is cut', () => {
  let state: IntrospectionState;
  let server: HardeningServer;
  let ownState: HardeningServer;

  beforeAll(async () => {
    state = createIntrospectionState({ waitForConfig: false });
    state.setConfig({ templates: {}, watched_resources: [] }, '1');
    state.publishVar('throws', () => {
      throw new Error(HUGE);
    });
    state.publishVar('rejects-string', () => Promise.reject(HUGE));
    state.publishVar('throws-object', () => {
      throw { toString: () => HUGE };
    });
    state.publishVar('throws-unprintable', () => {
      throw {
        toString(): string {
          throw new Error('no');
        },
      };
    });
    state.publishVar('throws-null-prototype', () => {
      throw Object.create(null);
    });
    state.publishVar('throws-status-getter', () => {
      throw Object.defineProperty(new Error('x'), 'status', {
        get(): never {
          throw new Error('getter');
        },
      });
    });
    state.publishVar('tojson-throws', () => ({
      x: {
        toJSON(): never {
          throw new Error(HUGE);
        },
      },
    }));
    state.addHealthCheck('huge-failure', () => {
      throw new Error(HUGE);
    });
    server = await startServer(state, { router: { pprof: false, console: false } });
    // A host's own state implementation, whose unavailable reading carries its own message.
    const own = new Proxy(state, {
      get(target, key) {
        if (key === 'readVar') return async () => ({ ok: false, reason: 'unavailable', message: HUGE });
        const value: unknown = Reflect.get(target, key);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    ownState = await startServer(own, { router: { pprof: false, console: false } });
  });
  afterAll(async () => {
    await server.close();
    await ownState.close();
  });

  it.each([['throws'], ['rejects-string'], ['throws-object']])(
    'a provider that %s with 20 000 characters: 500 with the first 1024 and a marker',
    async (name) => {
      for (const query of ['', '?field={.a}', '?field={.a}&output=text', '?size=1']) {
        const res = await request(`${server.base}/debug/vars/${name}${query}`);
        expect(res.status).toBe(500);
        expect(errorOf(res)).toBe(`${HUGE.slice(0, MESSAGE_CUT)}…`);
      }
    },
  );

  it('a provider whose thrown value cannot even be read: a JSON 500, never the host HTML error page', async () => {
    for (const name of ['throws-unprintable', 'throws-null-prototype']) {
      const res = await request(`${server.base}/debug/vars/${name}`);
      expect(res.status).toBe(500);
      expect(errorOf(res)).toBe('the thrown value could not be read');
    }
    const getter = await request(`${server.base}/debug/vars/throws-status-getter`);
    expect(getter.status).toBe(500);
    expect(errorOf(getter)).toBe('internal error (the thrown value could not be read)');
  });

  it('the state dump cuts the failing slot the same way, and a toJSON() that throws is cut in its 500', async () => {
    // (The whole dump is a 500 here: it holds tojson-throws. The slot is read on its own.)
    const slot = await request(`${server.base}/debug/vars/state?field={.throws}`);
    expect(slot.status).toBe(200);
    expect(slot.text).not.toContain('TAIL-SECRET');
    expect(slot.json()).toEqual({ error: `${HUGE.slice(0, MESSAGE_CUT)}…` });
    const viaToJson = await request(`${server.base}/debug/vars/tojson-throws`);
    expect(viaToJson.status).toBe(500);
    const message = errorOf(viaToJson);
    expect(message).toMatch(/^\$\.x: serializing threw: provider failed: x+…$/);
    expect(message).toHaveLength(MESSAGE_CUT + 1);
  });

  it("a host state's own unavailable message: 503, cut", async () => {
    const res = await request(`${ownState.base}/debug/vars/config`);
    expect(res.status).toBe(503);
    expect(errorOf(res)).toBe(`${HUGE.slice(0, MESSAGE_CUT)}…`);
  });

  it("a health check's failure: cut to 256 characters, marked, in JSON and in the text probes", async () => {
    const healthz = await request(`${server.base}/healthz?verbose`);
    expect(healthz.status).toBe(503);
    expect(healthz.text).not.toContain('TAIL-SECRET');
    expect(healthz.json<{ checks: Record<string, { error: string }> }>().checks['huge-failure']!.error).toBe(`${HUGE.slice(0, 256)}…`);
    const readyz = await request(`${server.base}/readyz?verbose`);
    expect(readyz.text).toContain(`[-]huge-failure failed: ${HUGE.slice(0, 256)}…\n`);
    expect(readyz.text).not.toContain('TAIL-SECRET');
  });

  it('client text: names, query values, paths, Host headers and undecodable paths', async () => {
    const long = 'n'.repeat(10_000);
    const cases: Array<[string, Record<string, string>, number, RegExp]> = [
      [`/debug/vars/${long}`, {}, 404, /^unknown variable "n{64}…"; known variables: /],
      [`/debug/vars/events?limit=${'9'.repeat(10_000)}`, {}, 400, /got "9{32}…"$/],
      [`/debug/vars/config?output=${long}`, {}, 400, /got "n{64}…"$/],
      [`/readyz/${long}`, {}, 404, /^no readyz check named "n{64}…"/],
      [`/debug/vars/%zz${long}`, {}, 400, /^bad request: .{1,200}…$/],
      [`/debug/vars/config`, { Host: `${'n'.repeat(63)}.${'n'.repeat(63)}.example.com` }, 403, /^host "n{63}\.…" is not allowed/],
      [`/debug/vars/config`, { Host: `${long}!` }, 400, /^invalid Host header "n{64}…"/],
    ];
    for (const [path, headers, status, message] of cases) {
      const res = await request(`${server.base}${path}`, { headers });
      expect({ path: path.slice(0, 40), status: res.status }).toEqual({ path: path.slice(0, 40), status });
      expect(errorOf(res)).toMatch(message);
    }
    const post = await request(`${server.base}/debug/vars/${long}`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(errorOf(post)).toMatch(/^method POST not allowed on \/debug\/vars\/n{116}…; /);
  });
});
