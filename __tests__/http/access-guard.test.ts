import express from 'express';
import { createAccessGuard, type AccessGuardOptions } from '../../lib/http/access-guard';
import { closeAllListening, listen, request } from '../helpers/http';

afterEach(closeAllListening);

const TOKEN = 'a3f1c9e07b2d4e6f8a0b1c2d3e4f5a6b';

/** An app with the guard in front of /debug, on a real socket closed after the test: its origin. */
async function serve(options: AccessGuardOptions): Promise<string> {
  const app = express();
  const guard = createAccessGuard(options);
  if (guard) app.use('/debug', guard);
  app.get('/debug/vars', (_req, res) => void res.json({ vars: [] }));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  return (await listen(app)).origin;
}

describe('access guard', () => {
  it('is absent when no option is set', () => {
    expect(createAccessGuard(undefined)).toBeUndefined();
    expect(createAccessGuard({})).toBeUndefined();
  });

  it('lets allowed addresses through and refuses others with 403 and no detail', async () => {
    expect((await request(`${await serve({ allow: ['127.0.0.0/8', '::1'] })}/debug/vars`)).status).toBe(200);
    const denied = await request(`${await serve({ allow: ['10.0.0.0/8', 'fd00::/8'] })}/debug/vars`);
    expect(denied.status).toBe(403);
    expect(denied.json()).toEqual({ error: 'forbidden' });
    // The health endpoint is not behind the guard.
    expect((await request(`${await serve({ allow: ['10.0.0.0/8'] })}/healthz`)).status).toBe(200);
  });

  it('requires the bearer token when one is set', async () => {
    const origin = await serve({ token: TOKEN });
    const none = await request(`${origin}/debug/vars`);
    expect(none.status).toBe(401);
    expect(none.json()).toEqual({ error: 'unauthorized' });
    expect(none.headers['www-authenticate']).toBe('Bearer realm="debug"');
    expect((await request(`${origin}/debug/vars`, { headers: { Authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    expect((await request(`${origin}/debug/vars`, { headers: { Authorization: `Bearer ${TOKEN.slice(1)}` } })).status).toBe(401);
    expect((await request(`${origin}/debug/vars`, { headers: { Authorization: `Basic ${TOKEN}` } })).status).toBe(401);
    expect((await request(`${origin}/debug/vars`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('needs both when both are set', async () => {
    const origin = await serve({ allow: ['10.0.0.0/8'], token: TOKEN });
    expect((await request(`${origin}/debug/vars`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(403);
  });

  it('checks its options at creation with messages that say how to fix them', () => {
    expect(() => createAccessGuard({ allow: ['10.0.0.0/33'] })).toThrow('invalid prefix length (0-32)');
    expect(() => createAccessGuard({ allow: ['localhost'] })).toThrow('is not an IP address or CIDR block');
    expect(() => createAccessGuard({ token: 'short' })).toThrow('at least 16 characters');
  });
});
