/**
 * One view of the data everywhere: what a selection sees, what a dump serves and what redaction
 * walks are the value JSON.stringify would serialise — toJSON() applied at any depth — so that a
 * field a host's toJSON() hides stays hidden and a key it adds is redacted.
 */
import express from 'express';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createIntrospectionState, type IntrospectionStateOptions } from '../../lib/state/store';
import type { ControllerConfig, IntrospectionState } from '../../lib/state/types';
import { listen, request } from '../helpers/http';
import { prng } from '../helpers/prng';

class Connection {
  constructor(
    readonly host: string,
    readonly user: string,
    readonly password: string,
  ) {}
  toJSON(): object {
    return { host: this.host, user: this.user };
  }
}

class LeakyCredentials {
  toJSON(): object {
    return { user: 'admin', password: 'CANARY-toJSON-password', nested: { api_token: 'CANARY-token' } };
  }
}

async function serve(stateOptions: IntrospectionStateOptions, fill: (state: IntrospectionState) => void) {
  const state = createIntrospectionState(stateOptions);
  fill(state);
  const router = createIntrospectionRouter(state, { pprof: false });
  const app = express();
  app.use(router);
  const served = await listen(app);
  return { origin: served.origin, close: async () => (await router.close(), await served.close()) };
}

describe('the JSON view: selections, dumps and redaction see what JSON.stringify serialises', () => {
  it('a field hidden by toJSON is never served, by any template or output', async () => {
    const s = await serve({}, (state) =>
      state.setConfig({ templates: {}, watched_resources: [], conn: new Connection('db', 'app', 'CANARY-hidden') }, '1'),
    );
    try {
      const paths = ['{.config.conn.password}', '{..password}', '{.config.conn.*}', '{.config.conn}', '{.config}', '{..*}'];
      for (const field of paths) {
        for (const output of ['json', 'text']) {
          const res = await request(`${s.origin}/debug/vars/config?field=${encodeURIComponent(field)}&output=${output}`);
          expect({ field, output, leaked: res.text.includes('CANARY') }).toEqual({ field, output, leaked: false });
        }
      }
      expect((await request(`${s.origin}/debug/vars/config?field={.config.conn.password}`)).status).toBe(404);
      expect(JSON.parse((await request(`${s.origin}/debug/vars/config?field={.config.conn}`)).text)).toEqual({ host: 'db', user: 'app' });
      expect((await request(`${s.origin}/debug/vars/state`)).text).not.toContain('CANARY');
    } finally {
      await s.close();
    }
  });

  it('a secret key added by toJSON is redacted in dumps and selections, at any depth', async () => {
    const s = await serve({ redactKeys: ['password', /token$/i] }, (state) => {
      state.setConfig(
        { templates: {}, watched_resources: [], creds: new LeakyCredentials(), deep: { a: { b: [new LeakyCredentials()] } } },
        '1',
      );
      state.publishVar('custom', () => ({ inner: new LeakyCredentials() }));
    });
    try {
      for (const path of [
        '/debug/vars/config',
        '/debug/vars/custom',
        '/debug/vars/state',
        '/debug/vars/config?field={..password}',
        '/debug/vars/config?field={.config.creds}&output=text',
        '/debug/vars/custom?field={..api_token}',
      ]) {
        const res = await request(`${s.origin}${path}`);
        expect({ path, status: res.status, leaked: res.text.includes('CANARY') }).toEqual({ path, status: 200, leaked: false });
      }
      expect(JSON.parse((await request(`${s.origin}/debug/vars/config?field={.config.deep.a.b[0]}`)).text)).toEqual({
        user: 'admin',
        password: '[REDACTED]',
        nested: { api_token: '[REDACTED]' },
      });
    } finally {
      await s.close();
    }
  });

  it('fuzzed objects with toJSON at random depths: hidden fields never served, added secrets always redacted', async () => {
    const SEED = 20261124;
    const rand = prng(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
    /** A random value; some objects hide a canary behind toJSON, some add a secret key from it. */
    function generate(depth: number): unknown {
      const roll = rand();
      if (depth > 5 || roll < 0.25) return pick([1, 'text', true, null, -0, 2.5]);
      const children = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => generate(depth + 1));
      if (roll < 0.4) return children;
      const plain: Record<string, unknown> = {};
      children.forEach((child, i) => (plain[`k${i}`] = child));
      if (roll < 0.6) return { ...plain, toJSON: () => ({ ...plain, shown: 'yes' }), hidden: 'CANARY-hidden' };
      if (roll < 0.75) return { ...plain, toJSON: () => ({ ...plain, password: 'CANARY-added', inner: { api_token: 'CANARY-token' } }) };
      if (roll < 0.85) return { toJSON: () => pick(['scalar', 42, [plain], { wrapped: plain }]) };
      return plain;
    }
    const value = { root: generate(0) };
    const s = await serve({ redactKeys: ['password', /token$/i] }, (state) => state.publishVar('fuzzed', () => value));
    try {
      const dump = await request(`${s.origin}/debug/vars/fuzzed`);
      expect({ seed: SEED, status: dump.status, leaked: dump.text.includes('CANARY') }).toEqual({ seed: SEED, status: 200, leaked: false });
      const templates = [
        '{..}',
        '{..hidden}',
        '{..password}',
        '{..api_token}',
        '{..k0}',
        '{.root.*}',
        '{..k1.hidden}',
        '{..inner}',
        '{..shown}',
      ];
      for (const template of templates) {
        for (const output of ['', '&output=text']) {
          const res = await request(`${s.origin}/debug/vars/fuzzed?field=${encodeURIComponent(template)}${output}`);
          expect({ seed: SEED, template, output, ok: [200, 404].includes(res.status), leaked: res.text.includes('CANARY') }).toEqual({
            seed: SEED,
            template,
            output,
            ok: true,
            leaked: false,
          });
        }
      }
      // The selection sees the dump's value: the root selected alone equals the dump's root.
      expect(JSON.parse((await request(`${s.origin}/debug/vars/fuzzed?field={.root}`)).text)).toEqual(JSON.parse(dump.text).root);
    } finally {
      await s.close();
    }
  });

  it('a cyclic value answers the same 500 naming the cycle with or without redaction', async () => {
    const cyclic = (): unknown => {
      const node: Record<string, unknown> = { name: 'loop' };
      node['self'] = { back: node };
      return node;
    };
    const plain = await serve({}, (state) => state.publishVar('graph', cyclic));
    const redacted = await serve({ redactKeys: ['password'] }, (state) => state.publishVar('graph', cyclic));
    try {
      const a = await request(`${plain.origin}/debug/vars/graph`);
      const b = await request(`${redacted.origin}/debug/vars/graph`);
      expect(a.status).toBe(500);
      expect(b.status).toBe(500);
      expect(JSON.parse(a.text).error).toMatch(/cycle \(the value is its own ancestor at \$\)/);
      expect(JSON.parse(b.text).error).toMatch(/cycle \(the value is its own ancestor at \$\)/);
    } finally {
      await plain.close();
      await redacted.close();
    }
  });

  it('deep data past the redaction depth is an explicit error, never silently cut', async () => {
    const deep = (): unknown => {
      let value: Record<string, unknown> = { leaf: 'bottom' };
      for (let i = 0; i < 2500; i++) value = { child: value };
      return value;
    };
    const s = await serve({ redactKeys: ['password'] }, (state) => state.publishVar('deep', deep));
    try {
      const res = await request(`${s.origin}/debug/vars/deep`);
      expect(res.status).toBe(500);
      expect(JSON.parse(res.text).error).toMatch(/nested deeper than 2000 levels, more than redaction \(redactKeys\) walks/);
      expect(res.text).not.toContain('[REDACTED]');
    } finally {
      await s.close();
    }
  });

  it('a secret key added in place after setConfig is served until the next setConfig, as the README warns', async () => {
    const config: ControllerConfig = { templates: {}, watched_resources: [], backend: { url: 'https://dataplane:5555' } };
    let state!: IntrospectionState;
    const s = await serve({ redactKeys: ['password'] }, (st) => {
      state = st;
      st.setConfig(config, 'v1');
    });
    try {
      expect((await request(`${s.origin}/debug/vars/config`)).status).toBe(200);
      // Redaction copied nothing here (no secret yet): the served subtree is the host's own object.
      (config['backend'] as Record<string, unknown>)['password'] = 'CANARY-in-place';
      expect((await request(`${s.origin}/debug/vars/config?field={.config.backend.password}`)).text).toBe('"CANARY-in-place"');
      // Handing the value over again through the setter redacts it everywhere.
      state.setConfig(config, 'v2');
      for (const path of ['/debug/vars/config', '/debug/vars/state', '/debug/vars/config?field={..password}']) {
        const res = await request(`${s.origin}${path}`);
        expect({ path, leaked: res.text.includes('CANARY') }).toEqual({ path, leaked: false });
      }
    } finally {
      await s.close();
    }
  });

  it('Buffers, typed arrays and Dates look the same in a selection as in the dump', async () => {
    const data = { buf: Buffer.from([1, 2, 3]), floats: new Float64Array([1.5, Number.NaN]), when: new Date(0) };
    for (const redactKeys of [[], ['password']]) {
      const s = await serve({ redactKeys }, (state) => state.publishVar('binary', () => data));
      try {
        const dump = JSON.parse((await request(`${s.origin}/debug/vars/binary`)).text) as Record<string, unknown>;
        expect(dump).toEqual(JSON.parse(JSON.stringify(data)));
        for (const key of ['buf', 'floats', 'when'])
          expect(JSON.parse((await request(`${s.origin}/debug/vars/binary?field={.${key}}`)).text)).toEqual(dump[key]);
        expect(JSON.parse((await request(`${s.origin}/debug/vars/binary?field={.buf.data}`)).text)).toEqual([1, 2, 3]);
      } finally {
        await s.close();
      }
    }
  });
});
