import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commandLine } from '../../lib/pprof/cmdline';
import { createPprofRouter } from '../../lib/pprof';
import { request } from '../helpers/http';
import { prng } from '../helpers/prng';
import { startPprofHost, startPprofServer, transpileLib, type PprofHost, type PprofServer } from './helpers';

const R = '[REDACTED]';

/** `commandLine` with `process.argv` and `process.execArgv` set for the call. */
function withCommandLine(argv: unknown[], execArgv: unknown[], shown: readonly string[] = []): string[] {
  const saved = { argv: process.argv, execArgv: process.execArgv };
  try {
    process.argv = argv as string[];
    process.execArgv = execArgv as string[];
    return commandLine(shown).split('\0');
  } finally {
    process.argv = saved.argv;
    process.execArgv = saved.execArgv;
  }
}

describe('cmdline: Node, its flags and the script; every later argument hidden unless named', () => {
  it.each<[string, string[], string[], string[], string[]]>([
    [
      'a password after a subcommand, a cloud key id as a plain argument',
      ['login', 'S3CRET', 'AKIAIOSFODNN7EXAMPLE', '--port=8080'],
      [],
      [],
      [R, R, R, R],
    ],
    [
      'a named flag with its value attached is shown',
      ['serve', '--port=8080', '--token=S3CRET'],
      [],
      ['serve', '--port'],
      ['serve', '--port=8080', R],
    ],
    ['a value in the next argument stays hidden', ['--port', '8080'], [], ['--port'], ['--port', R]],
    ['...unless named too', ['--port', '8080'], [], ['--port', '8080'], ['--port', '8080']],
    ['a name matches whole, never as a prefix', ['--portal=x', '--port-secret=y', 'serve2'], [], ['--port', 'serve'], [R, R, R]],
    ['a name is not a pattern', ['--x=1'], [], ['--*', '.*'], [R]],
    ['no arguments', [], ['--enable-source-maps'], ['--port'], []],
  ])('%s', (_what, args, execArgv, shown, expected) => {
    const served = withCommandLine(['/usr/bin/node', '/srv/app/main.js', ...args], execArgv, shown);
    expect(served).toEqual([process.execPath, ...execArgv, '/srv/app/main.js', ...expected]);
  });

  it("serves Node's own flags as they are", () => {
    const execArgv = ['--enable-source-maps', '--max-old-space-size=512', '--require', './tracing.js'];
    expect(withCommandLine(['/usr/bin/node', 'main.js', 'x'], execArgv)).toEqual([process.execPath, ...execArgv, 'main.js', R]);
  });

  it.each([['-e'], ['--eval'], ['-p'], ['--print'], ['--eval=1'], ['-i']])(
    "without a script (%s), every argument is the code's, hidden",
    (flag) => {
      const execArgv = flag.includes('=') ? [flag] : [flag, 'code()'];
      expect(withCommandLine(['/usr/bin/node', 'first', 'second'], execArgv)).toEqual([process.execPath, ...execArgv, R, R]);
    },
  );

  it('entries a host replaced with other things: shown as String() gives them when named, else hidden', () => {
    const throwing = {
      toString(): string {
        throw new Error('no');
      },
    };
    const served = withCommandLine(['/usr/bin/node', 'main.js', 8080, throwing, null, 'a\0b'], [], ['8080', 'null']);
    expect(served).toEqual([process.execPath, 'main.js', '8080', R, 'null', R]);
  });

  it('a process.argv or execArgv that is not an array gives what is left', () => {
    expect(withCommandLine('nonsense' as unknown as unknown[], [])).toEqual([process.execPath]);
  });

  it('a random command line: no argument after the script is served unless named, whatever its shape', () => {
    const random = prng(20261127);
    const alphabet = [...'abcXYZ019-=:@./+!~%_ ,;&"\'#?{}\\é😀'];
    for (let run = 0; run < 500; run += 1) {
      const args = Array.from({ length: Math.floor(random() * 8) }, () =>
        Array.from({ length: 1 + Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(''),
      );
      const shown = args.filter(() => random() < 0.3).map((arg) => (random() < 0.5 ? arg : arg.split('=')[0]!));
      const served = withCommandLine(['/usr/bin/node', 'main.js', ...args], [], shown).slice(2);
      expect(served).toHaveLength(args.length);
      args.forEach((arg, i) => {
        const named = shown.includes(arg) || (arg.indexOf('=') > 0 && shown.includes(arg.slice(0, arg.indexOf('='))));
        expect([run, i, served[i]]).toEqual([run, i, named ? arg : R]);
      });
    }
  });

  it.each<[unknown, string]>([
    ['--port', 'createPprofRouter: cmdlineArgs must be an array of non-empty strings (arguments or flag names to show), got "--port"'],
    [[''], 'createPprofRouter: cmdlineArgs must be an array of non-empty strings (arguments or flag names to show); entry 0 is ""'],
    [
      [/--port/],
      'createPprofRouter: cmdlineArgs must be an array of non-empty strings (arguments or flag names to show); entry 0 is an object',
    ],
  ])('option cmdlineArgs %p is refused at creation', (value, message) => {
    expect(() => createPprofRouter(undefined, { cmdlineArgs: value as string[] })).toThrow(message);
  });
});

describe('cmdline and symbol over HTTP', () => {
  let pprof: PprofServer;
  beforeAll(async () => {
    pprof = await startPprofServer({ profiler: 'inspector', heapSamplingIntervalBytes: false, cmdlineArgs: ['marker-one'] });
  });
  afterAll(() => pprof.close());

  it('answers the command line NUL-separated, like Go, read afresh on every request', async () => {
    const res = await request(`${pprof.base}/cmdline`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body.toString('utf8').split('\0')[0]).toBe(process.execPath);
    const saved = process.argv;
    try {
      process.argv = [saved[0]!, '/srv/main.js', 'login', 'S3CRET', 'marker-one'];
      expect((await request(`${pprof.base}/cmdline`)).text.split('\0').slice(-4)).toEqual(['/srv/main.js', R, R, 'marker-one']);
      process.argv = [saved[0]!, '/srv/main.js', 'marker-two'];
      const second = (await request(`${pprof.base}/cmdline`)).text;
      expect(second.split('\0').slice(-2)).toEqual(['/srv/main.js', R]);
      expect(second).not.toMatch(/S3CRET|marker/);
    } finally {
      process.argv = saved;
    }
  });

  it('symbol says why it has no meaning here, and the index lists both', async () => {
    const res = await request(`${pprof.base}/symbol`);
    expect(res.status).toBe(404);
    expect(res.json().error).toMatch(/^no symbol lookup on Node\.js: Go's \/debug\/pprof\/symbol maps program counters/);
    const index = (await request(`${pprof.base}/?format=json`)).json();
    expect((index.other as Array<{ name: string }>).map((o) => o.name)).toEqual(['cmdline', 'symbol']);
    expect((await request(`${pprof.base}/`)).body.toString('utf8')).toContain('/cmdline">cmdline</a>');
  });
});

describe('cmdline over a real socket, from a child process started as an operator would', () => {
  let work: string | undefined;
  let host: PprofHost | undefined;
  afterAll(async () => {
    await host?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('shows Node, its flags, the script and the named arguments; nothing else', async () => {
    work = mkdtempSync(join(tmpdir(), 'pprof-cmdline-'));
    transpileLib(work);
    const execArgv = ['--stack-trace-limit=17', '--title=controller'];
    const script = join(__dirname, 'fixtures', 'cmdline-host.js');
    const args = ['db', 'login', 'S3CRET-positional', 'AKIAIOSFODNN7EXAMPLE', '--password', 'S3CRET-next', '--port=8080', '--verbose'];
    host = await startPprofHost(work, script, args, execArgv, { CMDLINE_ARGS: JSON.stringify(['db', '--port', '--verbose']) });
    const res = await request(`${host.base}/cmdline`);
    expect(res.status).toBe(200);
    const served = res.body.toString('utf8');
    expect(served).not.toMatch(/S3CRET|AKIA|login|--password/);
    expect(served.split('\0')).toEqual([process.execPath, ...execArgv, script, 'db', R, R, R, R, R, '--port=8080', '--verbose']);
    expect(await host.stop()).toBe(0);
  });
});
