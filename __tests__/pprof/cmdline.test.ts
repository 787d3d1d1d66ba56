import { redactedArgs } from '../../lib/pprof/cmdline';
import { request } from '../helpers/http';
import { startPprofServer, type PprofServer } from './helpers';

describe('cmdline and symbol', () => {
  let pprof: PprofServer;
  beforeAll(async () => {
    pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: false });
  });
  afterAll(() => pprof.close());

  it('cmdline answers the command line NUL-separated, like Go', async () => {
    const res = await request(`${pprof.base}/cmdline`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    const args = res.body.toString('utf8').split('\0');
    expect(args[0]).toBe(process.execPath);
    expect(args).toEqual(redactedArgs([process.execPath, ...process.execArgv, ...process.argv.slice(1)]));
  });

  it('symbol says why it has no meaning here, and the index lists both', async () => {
    const res = await request(`${pprof.base}/symbol`);
    expect(res.status).toBe(404);
    expect(res.json().error).toMatch(/^no symbol lookup on Node\.js: Go's \/debug\/pprof\/symbol maps program counters/);
    const index = (await request(`${pprof.base}/?format=json`)).json();
    expect((index.other as Array<{ name: string }>).map((o) => o.name)).toEqual(['cmdline', 'symbol']);
    expect((await request(`${pprof.base}/`)).body.toString('utf8')).toContain('/cmdline">cmdline</a>');
  });

  it.each([
    [
      ['node', '--token=abc123', 'app.js'],
      ['node', '--token=[REDACTED]', 'app.js'],
    ],
    [
      ['node', 'app.js', '--db-password', 'hunter2', '--port', '8080'],
      ['node', 'app.js', '--db-password', '[REDACTED]', '--port', '8080'],
    ],
    [
      ['node', 'app.js', 'API_KEY=xyz', '--verbose'],
      ['node', 'app.js', 'API_KEY=[REDACTED]', '--verbose'],
    ],
    [
      ['node', '--max-old-space-size=512', 'app.js', '--auth-token', '--debug'],
      ['node', '--max-old-space-size=512', 'app.js', '--auth-token', '--debug'],
    ],
    [
      ['node', 'app.js', '--keyboard=us'],
      ['node', 'app.js', '--keyboard=us'],
    ],
  ])('redacts secret-looking values: %j', (args, expected) => {
    expect(redactedArgs(args)).toEqual(expected);
  });
});
