import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import express from 'express';
import { CONSOLE_ASSET_DIR, loadConsoleAssets } from '../../lib/console/assets';
import { CONSOLE_CSP } from '../../lib/console/router';
import { createAccessGuard } from '../../lib/http/access-guard';
import { isConsolePagePath as isConsolePath } from '../../lib/http/unguarded';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';
import { requestApp } from '../helpers/http';
import { closeIntrospectionApps, introspectionApp } from '../helpers/introspection-app';

const TOKEN = 'console-test-token-0123456789abcdef';

const routers: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  await closeIntrospectionApps();
  await Promise.all(routers.map((r) => r.close()));
});

function mounted(prefix: string, options: Parameters<typeof introspectionApp>[1] = {}, guard?: express.RequestHandler): express.Express {
  const router = createIntrospectionRouter(createIntrospectionState(), { pprof: false, ...options });
  const app = express();
  if (guard) app.use(prefix, guard);
  app.use(prefix, router);
  app.use((_req, res) => void res.status(418).send('host'));
  routers.push(router);
  return app;
}

describe('debug console files', () => {
  it('serves the page at /debug/ with a strict CSP and the headers a browser needs', async () => {
    const app = introspectionApp(createIntrospectionState());
    const res = await requestApp(app, '/debug/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    for (const directive of ["default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "require-trusted-types-for 'script'"])
      expect(res.headers['content-security-policy']).toContain(directive);
    expect(res.headers['content-security-policy']).not.toMatch(/unsafe-(inline|eval)/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.text).toContain('<script type="module" src="console/console.js"></script>');
    // Nothing inline that the CSP would refuse, and nothing from another origin.
    expect(res.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|\sstyle=|\son[a-z]+=/i);
    expect(res.text).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('redirects /debug to /debug/ relatively, so a mount prefix survives', async () => {
    const res = await requestApp(mounted('/ops'), '/ops/debug?x=1');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('debug/?x=1');
    expect(new URL(res.headers.location!, 'http://h/ops/debug?x=1').pathname).toBe('/ops/debug/');
  });

  it('serves every built file, gzipped when asked, with a validator that answers 304', async () => {
    const app = introspectionApp(createIntrospectionState());
    for (const name of fs.readdirSync(CONSOLE_ASSET_DIR).filter((n) => n !== 'index.html')) {
      const plain = await requestApp(app, `/debug/console/${name}`, { headers: { 'Accept-Encoding': 'identity' } });
      expect(plain.status).toBe(200);
      const body = plain.body;
      expect(body.equals(fs.readFileSync(path.join(CONSOLE_ASSET_DIR, name)))).toBe(true);
      const zipped = await requestApp(app, `/debug/console/${name}`, { headers: { 'Accept-Encoding': 'gzip' } });
      const asset = loadConsoleAssets().get(name)!;
      expect(zipped.headers['content-encoding']).toBe(asset.gzipped ? 'gzip' : undefined);
      expect(Number(zipped.headers['content-length'])).toBe((asset.gzipped ?? asset.body).length);
      if (asset.gzipped) expect(gunzipSync(asset.gzipped).equals(body)).toBe(true);
      expect(zipped.headers.vary).toBe('Accept-Encoding');
      const again = await requestApp(app, `/debug/console/${name}`, { headers: { 'If-None-Match': plain.headers.etag! } });
      expect(again.status).toBe(304);
    }
  });

  it('keeps the page light: its own files are at most 100 KB gzipped, the flame graph loads only with the profiles view', () => {
    const assets = loadConsoleAssets();
    const size = (name: string): number => (assets.get(name)!.gzipped ?? assets.get(name)!.body).length;
    const always = ['index.html', 'console.js', 'console.css', ...[...assets.keys()].filter((n) => /^chunk-.*\.js$/.test(n))];
    expect(always.reduce((sum, name) => sum + size(name), 0)).toBeLessThanOrEqual(100 * 1024);
    const main = assets.get('console.js')!.body.toString();
    expect(main).not.toContain('d3-flame-graph');
    const profiles = [...assets.keys()].find((n) => /^profiles-.*\.js$/.test(n));
    expect(profiles).toBeDefined();
    expect(main).toContain(`./${profiles}`);
    expect(assets.has('THIRD_PARTY_LICENSES.txt')).toBe(true);
    expect(assets.get('THIRD_PARTY_LICENSES.txt')!.body.toString()).toContain('d3-flame-graph@');
  });

  it('answers unknown files and traversal attempts with a JSON 404, and write methods with 405', async () => {
    const app = introspectionApp(createIntrospectionState());
    for (const p of [
      '/debug/console/nope.js',
      '/debug/console/index.html',
      '/debug/console/..%2fpackage.json',
      '/debug/console/',
      '/debug/console/a/b',
      `/debug/console/${'x'.repeat(5000)}`,
    ]) {
      const res = await requestApp(app, p);
      expect([404]).toContain(res.status);
      expect(res.headers['content-type']).toMatch(/application\/json/);
    }
    expect((await requestApp(app, `/debug/console/${'x'.repeat(5000)}`)).json().error).toBe(`no debug console file "${'x'.repeat(64)}…"`);
    expect(isConsolePath('/debug/console/../x')).toBe(true);
    expect(isConsolePath('/DEBUG/Console/x')).toBe(true);
    expect(isConsolePath('/debugger')).toBe(false);
    const post = await requestApp(app, '/debug/', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('needs no token for the page itself, but every data request does; the address allow-list covers the page too', async () => {
    const guarded = mounted('/ops', {}, createAccessGuard({ token: TOKEN }));
    expect((await requestApp(guarded, '/ops/debug/')).status).toBe(200);
    expect((await requestApp(guarded, '/ops/debug/console/console.js')).status).toBe(200);
    expect((await requestApp(guarded, '/ops/debug/vars')).status).toBe(401);
    expect((await requestApp(guarded, '/ops/debug/vars', { headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    const closed = mounted('/ops', {}, createAccessGuard({ allow: ['10.0.0.0/8'] }));
    expect((await requestApp(closed, '/ops/debug/')).status).toBe(403);
  });

  it('is behind the DNS-rebinding Host check, like the data it reads', async () => {
    const app = introspectionApp(createIntrospectionState());
    expect((await requestApp(app, '/debug/', { headers: { Host: 'attacker.example.com' } })).status).toBe(403);
    expect((await requestApp(app, '/debug/console/console.js', { headers: { Host: 'attacker.example.com:8080' } })).status).toBe(403);
    expect((await requestApp(app, '/debug/', { headers: { Host: 'localhost:8080' } })).status).toBe(200);
  });

  it("does not exist with debug: false or console: false: its paths, in any casing, are the host's", async () => {
    const off = mounted('/ops', { debug: false });
    for (const p of ['/ops/debug/', '/ops/debug', '/ops/debug/console/console.js', '/ops/DEBUG/', '/ops/Debug/Console/console.js']) {
      for (const method of ['GET', 'POST']) {
        const res = await requestApp(off, p, { method });
        expect({ p, method, status: res.status, text: res.text }).toEqual({ p, method, status: 418, text: 'host' });
      }
    }
    const noConsole = mounted('', { console: false });
    expect((await requestApp(noConsole, '/debug/')).status).toBe(418);
    expect((await requestApp(noConsole, '/debug/vars')).status).toBe(200);
  });

  it('fails at creation, with the fix in the message, when the page was not built', () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'console-empty-'));
    expect(() => loadConsoleAssets(path.join(empty, 'missing'))).toThrow(/npm run build.*console: false/);
    expect(() => loadConsoleAssets(empty)).toThrow(/index.html is missing/);
    expect(() => createIntrospectionRouter(createIntrospectionState(), { console: 'yes' as never })).toThrow(/console/);
    expect(() => createIntrospectionRouter(createIntrospectionState(), { consol: true } as never)).toThrow(/did you mean "console"/);
  });
});
