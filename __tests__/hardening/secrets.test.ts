import { generateKeyPairSync } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import express from 'express';
import { Registry } from 'prom-client';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createControllerMetrics, createMetricsRouter } from '../../lib/metrics';
import { createIntrospectionState } from '../../lib/state/store';
import { listen, request, type HttpResponse } from '../helpers/http';
import { mapConcurrent, q, startServer, type HardeningServer } from './helpers';

/*
 * Canary secrets go in through every door a host has (credentials, auxiliary file contents, a
 * config and a custom variable with redactKeys) and must come out of no response of any endpoint,
 * in clear, base64 or hex.
 */

const PASSWORD = 'canaryPw-7f3a9c1e5b2d';
const TOKEN = 'canaryTok-0d9e8f7a6b5c4d3e2f1a';
const KEY_PEM = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
// The PEM body: its base64 lines are what a leak would show (the armour lines are not secret).
const PEM_LINES = KEY_PEM.split('\n').filter((line) => line.length > 20 && !line.startsWith('-----'));

/** Every form in which a canary could leak: clear, base64 (at each of the three alignments) and hex. */
function forbiddenForms(secret: string): string[] {
  const forms = [secret, Buffer.from(secret).toString('hex'), Buffer.from(secret).toString('hex').toUpperCase()];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), Buffer.from(secret)]).toString('base64');
    // Drop the characters that depend on the unknown bytes before and after the secret.
    const start = Math.ceil((shift * 4) / 3) + (shift === 0 ? 0 : 1);
    const core = encoded.slice(start, encoded.length - 4);
    forms.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms.filter((f) => f.length >= 8);
}

const FORBIDDEN = [
  ...forbiddenForms(PASSWORD),
  ...forbiddenForms(TOKEN),
  ...PEM_LINES,
  ...PEM_LINES.flatMap((line) => forbiddenForms(line).slice(1)),
];

/** The readable forms of a body: as sent, gunzipped when compressed. */
function bodyTexts(res: HttpResponse): string[] {
  const texts = [res.body.toString('utf8'), res.body.toString('latin1')];
  if (res.body[0] === 0x1f && res.body[1] === 0x8b) {
    const plain = gunzipSync(res.body);
    texts.push(plain.toString('utf8'), plain.toString('latin1'));
  }
  return texts;
}

function leaksIn(label: string, res: HttpResponse): string[] {
  const texts = [...bodyTexts(res), JSON.stringify(res.headers)];
  const found = FORBIDDEN.filter((form) => texts.some((t) => t.includes(form)));
  return found.length > 0 ? [`${label} (${res.status}) contains ${found.map((f) => JSON.stringify(f.slice(0, 24))).join(', ')}`] : [];
}

const VARIABLES = ['config', 'credentials', 'rendered', 'auxfiles', 'resources', 'events', 'state', 'uptime', 'vault', 'creds-copy'];
const FIELDS = [
  '{..}',
  '{..*}',
  '{$}',
  '{@}',
  '{..password}',
  '{..token}',
  '{..apiToken}',
  '{..auth_token}',
  '{..private_key}',
  '{..key}',
  '{..content}',
  '{..secret}',
  '{..set}',
  '{..fields_set}',
  '{range ..}{@}{end}',
  '{range ..*}{@}{"\\n"}{end}',
  '{..[*]}',
  '{.config}',
  '{.credentials}',
  '{.files..}',
  '{.vault}',
  '{.config.backend}',
  '{.config.backend.password}',
  '{..[?(@.password)]}',
  '{..[?(@.password=="x")]}',
  '{..nested[*]}',
  '{.events[*].summary}',
  '{..username}',
  '{..tls}',
];

function createSecretState(): ReturnType<typeof createIntrospectionState> {
  const state = createIntrospectionState({ redactKeys: ['password', /token$/i, 'private_key'] });
  state.setCredentials(
    {
      haproxy: { username: 'admin', password: PASSWORD },
      dataplane: { token: TOKEN },
      tls: { key: KEY_PEM, cert: '' },
      registry_token: TOKEN,
      raw: Buffer.from(PASSWORD),
    },
    'creds-v3',
  );
  state.setAuxFiles({
    ssl_certificates: [
      {
        name: 'site.pem',
        path: '/etc/haproxy/ssl/site.pem',
        content: `${KEY_PEM}\n-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n`,
      },
    ],
    map_files: [{ name: 'auth.map', path: '/etc/haproxy/maps/auth.map', content: Buffer.from(`admin ${PASSWORD}\n`) }],
    general_files: [
      { name: 'userlist', path: '/etc/haproxy/userlist.cfg', content: `user admin insecure-password ${PASSWORD}\ntoken ${TOKEN}\n` },
    ],
  });
  state.setConfig(
    {
      templates: { 'haproxy.cfg': 'userlist users\n  user admin insecure-password {{ .password }}\n' },
      watched_resources: [{ kind: 'Secret', name: 'haproxy-credentials' }],
      backend: { url: 'https://dataplane:5555', password: PASSWORD, auth_token: TOKEN, nested: [{ private_key: KEY_PEM, PASSWORD }] },
    },
    'cfg-v7',
  );
  state.setRendered('global\n  maxconn 100\n');
  state.setResourceCounts({ ingresses: 1, secrets: 2 });
  state.publishEvent('credentials.updated', 'haproxy credentials rotated to creds-v3');
  state.publishEvent('reconciliation.completed');
  // A custom variable with its own redactKeys on top of the store's.
  state.publishVar(
    'vault',
    () => ({ addr: 'https://vault:8200', secret: PASSWORD, deep: { apiToken: TOKEN, list: [{ secret: KEY_PEM }] } }),
    {
      redactKeys: ['secret', /token/i],
    },
  );
  // A host that publishes its config object again under another name still gets the store's redaction.
  state.publishVar('creds-copy', () => ({ password: PASSWORD, inner: { registry_token: TOKEN, private_key: KEY_PEM } }));
  return state;
}

/** The parts of the state dump the test looks at. */
interface StateDump {
  config: { config: { backend: unknown } };
  vault: unknown;
  'creds-copy': unknown;
  credentials: { credentials: Record<string, unknown> };
  auxfiles: { files: { general_files: unknown[] } };
}

describe('secrets never leave the process', () => {
  let server: HardeningServer;
  const registry = new Registry();

  beforeAll(async () => {
    const state = createSecretState();
    createControllerMetrics(registry, state, { prefix: 'ctl_' });
    server = await startServer(state, {
      // An at-once budget of 0: every variable and selection goes through the streaming writer.
      router: { limits: { atOnceBudgetMs: 0 }, pprof: { defaultProfileSeconds: 1 } },
      extra: (app) => app.use(createMetricsRouter(registry)),
    });
  });
  afterAll(() => server.close());

  async function collectLeaks(
    paths: readonly string[],
    headers?: Record<string, string>,
  ): Promise<{ leaks: string[]; statuses: Map<string, number> }> {
    const leaks: string[] = [];
    const statuses = new Map<string, number>();
    await mapConcurrent(paths, 8, async (path) => {
      const res = await request(`${server.base}${path}`, { agent: server.agent, headers });
      statuses.set(path, res.status);
      leaks.push(...leaksIn(path, res));
    });
    return { leaks, statuses };
  }

  it('serves every variable whole, as JSON and through many field selections, without a canary', async () => {
    const paths = ['/debug/vars'];
    for (const name of VARIABLES) {
      paths.push(`/debug/vars/${name}`, `/debug/vars/${name}?limit=1000`);
      for (const field of FIELDS) paths.push(`/debug/vars/${name}?field=${q(field)}`, `/debug/vars/${name}?field=${q(field)}&output=text`);
    }
    const { leaks, statuses } = await collectLeaks(paths);
    expect(leaks).toEqual([]);
    // The selections really reached the data: the dumps answered, and what was redacted says so.
    expect(statuses.get('/debug/vars/state')).toBe(200);
    const state = (await request(`${server.base}/debug/vars/state`)).json<StateDump>();
    expect(state.config.config.backend).toMatchObject({
      password: '[REDACTED]',
      auth_token: '[REDACTED]',
      nested: [{ private_key: '[REDACTED]', PASSWORD: '[REDACTED]' }],
    });
    expect(state.vault).toEqual({
      addr: 'https://vault:8200',
      secret: '[REDACTED]',
      deep: { apiToken: '[REDACTED]', list: [{ secret: '[REDACTED]' }] },
    });
    expect(state['creds-copy']).toEqual({ password: '[REDACTED]', inner: { registry_token: '[REDACTED]', private_key: '[REDACTED]' } });
    expect(state.credentials.credentials.haproxy).toEqual({ set: true, fields_set: ['password', 'username'], fields_empty: [] });
    expect(state.credentials.credentials.tls).toEqual({ set: true, fields_set: ['key'], fields_empty: ['cert'] });
    expect(state.auxfiles.files.general_files[0]).toEqual({
      name: 'userlist',
      path: '/etc/haproxy/userlist.cfg',
      size: expect.any(Number),
    });
    const selected = await request(`${server.base}/debug/vars/config?field=${q('{..password}')}`);
    expect(selected.json()).toEqual(['[REDACTED]']);
    // Filters see the redacted data too, so they cannot be used as an oracle to guess a secret.
    for (const guess of [PASSWORD, 'wrong-guess']) {
      const filtered = await request(
        `${server.base}/debug/vars/config?field=${q(`{.config.backend.nested[?(@.private_key=="${guess}")]}`)}`,
      );
      expect(filtered.json()).toEqual([]);
      const byPassword = await request(`${server.base}/debug/vars/vault?field=${q(`{.deep.list[?(@.secret=="${guess}")]}`)}`);
      expect(byPassword.json()).toEqual([]);
    }
  });

  it('keeps canaries out of events, metrics, pprof and every error message', async () => {
    const paths = [
      '/debug/vars/events',
      '/debug/vars/events?limit=1000&field=' + q('{range .}{.summary}{end}') + '&output=text',
      '/metrics',
      '/debug/pprof/',
      '/debug/pprof/?format=json',
      '/debug/pprof/goroutine?debug=1',
      '/debug/pprof/goroutine?debug=2',
      '/debug/pprof/goroutine',
      '/debug/pprof/heap?debug=1',
      '/debug/pprof/heap',
      '/debug/pprof/heap?format=heapprofile',
      '/debug/pprof/block?debug=1',
      '/debug/pprof/mutex?debug=1',
      '/debug/pprof/profile?seconds=1',
      // Errors: unknown names list what exists, never values.
      '/debug/vars/nope',
      '/debug/nothing-here',
      '/debug/pprof/nothing',
      '/livez/nothing',
      '/readyz/nothing',
      `/debug/vars/config?field=${q('{.backend.password.x}')}`,
      `/debug/vars/config?field=${q('{.config.backend.password[0]}')}`,
      `/debug/vars/config?field=${q('{.config.backend[?(@.password > 3)]}')}`,
      `/debug/vars/config?field=${q('{.config.backend.nested[0].private_key.x}')}`,
      `/debug/vars/vault?field=${q('{.secret[?(@.x)]}')}`,
      `/debug/vars/vault?field=${q('{.deep.list[5]}')}`,
      `/debug/vars/credentials?field=${q('{.credentials.haproxy.password}')}`,
      `/debug/vars/auxfiles?field=${q('{.files.general_files[0].content}')}`,
      `/debug/vars/creds-copy?field=${q('{.password.length}')}`,
      '/debug/vars/state?limit=abc',
      '/debug/vars/config?output=text',
    ];
    const { leaks, statuses } = await collectLeaks(paths, { 'Accept-Encoding': 'gzip' });
    expect(leaks).toEqual([]);
    expect(statuses.get('/metrics')).toBe(200);
    expect(statuses.get('/debug/pprof/goroutine?debug=2')).toBe(200);
    expect(statuses.get('/debug/pprof/profile?seconds=1')).toBe(200);
    expect(statuses.get(`/debug/vars/credentials?field=${q('{.credentials.haproxy.password}')}`)).toBe(404);
    expect(statuses.get(`/debug/vars/auxfiles?field=${q('{.files.general_files[0].content}')}`)).toBe(404);
    // HEAD and refused methods say nothing either.
    for (const method of ['HEAD', 'POST', 'OPTIONS']) {
      for (const path of ['/debug/vars/state', '/debug/vars/credentials', '/metrics']) {
        expect(leaksIn(`${method} ${path}`, await request(`${server.base}${path}`, { method }))).toEqual([]);
      }
    }
  });

  it('detects a leak when one is planted (the check itself works)', () => {
    const planted = (text: string): HttpResponse => ({
      status: 200,
      headers: {},
      body: Buffer.from(text),
      text,
      json: <T>() => JSON.parse(text) as T,
    });
    expect(leaksIn('clear', planted(`{"p":"${PASSWORD}"}`))).toHaveLength(1);
    for (const prefix of ['', 'a', 'ab']) {
      expect(leaksIn('base64', planted(Buffer.from(`${prefix}${TOKEN}!`).toString('base64')))).toHaveLength(1);
    }
    expect(leaksIn('hex', planted(Buffer.from(PASSWORD).toString('hex')))).toHaveLength(1);
    expect(leaksIn('pem', planted(JSON.stringify({ key: KEY_PEM })))).toHaveLength(1);
    expect(leaksIn('clean', planted('{"password":"[REDACTED]"}'))).toEqual([]);
  });
});

describe('echoed client input is cut as the README promises', () => {
  it('cuts a 4 000-character missing key in the 404', async () => {
    const state = createIntrospectionState();
    state.setConfig({ templates: {}, watched_resources: [] }, '1');
    const router = createIntrospectionRouter(state, { pprof: false });
    const app = express();
    app.use(router);
    const served = await listen(app);
    try {
      const key = 'k'.repeat(4000);
      const res = await request(`${served.origin}/debug/vars/config?field={.${key}}`);
      expect(res.status).toBe(404);
      const body = res.json<{ error: string }>();
      expect(body.error.length).toBeLessThan(700);
      expect(body.error).toContain(`${'k'.repeat(200)}… is not found`);
    } finally {
      await router.close();
      await served.close();
    }
  });
});
