import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_READ_ARGUMENT, redactedArgs } from '../../lib/pprof/cmdline';
import { request } from '../helpers/http';
import { startPprofHost, startPprofServer, transpileLib, type PprofHost, type PprofServer } from './helpers';

const R = '[REDACTED]';

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

  it('reads the command line on every request: a change to process.argv shows, and nothing earlier is kept', async () => {
    const saved = process.argv;
    try {
      process.argv = [...saved, '--api-token', '-first-S3CRET', 'marker-one'];
      const first = (await request(`${pprof.base}/cmdline`)).text;
      expect(first).toContain('\0--api-token\0[REDACTED]\0marker-one');
      expect(first).not.toContain('first-S3CRET');

      process.argv = [...saved, 'DATABASE_URL=postgres://app:second-S3CRET@db.internal/app', 'marker-two'];
      const second = (await request(`${pprof.base}/cmdline`)).text;
      expect(second).toContain('\0DATABASE_URL=postgres://[REDACTED]@db.internal/app\0marker-two');
      expect(second).not.toMatch(/S3CRET|marker-one|--api-token/);
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

describe('redactedArgs', () => {
  // Every example of issue 25 item 4, each of which came back in clear before.
  it.each<[string[], string[]]>([
    [
      ['--token', '-S3CRET2', '--port', '8080'],
      ['--token', R, '--port', '8080'],
    ],
    [['--db:password=hunter2'], [`--db:password=${R}`]],
    [['--set=password=hunter2'], [`--set=password=${R}`]],
    [['--access-key=AKIA-S3CRET'], [`--access-key=${R}`]],
    [['MYSQL_PWD=hunter2'], [`MYSQL_PWD=${R}`]],
    [
      ['--jwt', 'eyJhbGciOi.eyJzdWIi.sig'],
      ['--jwt', R],
    ],
    [['--session-cookie=s%3Aabc.def'], [`--session-cookie=${R}`]],
    [
      ['-p', 'hunter2'],
      ['-p', R],
    ],
    [
      ['--header', 'Authorization: Bearer abc.def.ghi'],
      ['--header', `Authorization: ${R}`],
    ],
    [['--db-url=postgres://user:pw@h/db'], [`--db-url=postgres://${R}@h/db`]],
    [['DATABASE_URL=postgres://user:pw@h:5432/db?sslmode=require'], [`DATABASE_URL=postgres://${R}@h:5432/db?sslmode=require`]],
  ])('the issue: %j', (args, expected) => {
    expect(redactedArgs(args)).toEqual(expected);
  });

  it.each<[string, string[], string[]]>([
    ['a flag without = hides the next argument, whatever it looks like', ['--password', '--x=y', 'next'], ['--password', R, 'next']],
    [
      'a hidden argument that is itself a secret flag hides the one after',
      ['--token', '--password', 'pw', 'next'],
      ['--token', R, R, 'next'],
    ],
    ['single-dash Go-style flags (-password reads as -p too)', ['-password', 'pw', '-token=t'], [`-p${R}`, R, `-token=${R}`]],
    [
      'Java system properties',
      ['-Dpassword=x', '-Ddb.pwd=y', '-Dspark.auth.secret=z'],
      [`-Dpassword=${R}`, `-Ddb.pwd=${R}`, `-Dspark.auth.secret=${R}`],
    ],
    [
      'any case and separator style',
      ['--PASSWORD=a', '--dbPassword=b', '--db_pass=c', '--X-API-KEY=d', '--client.secret=e'],
      [`--PASSWORD=${R}`, `--dbPassword=${R}`, `--db_pass=${R}`, `--X-API-KEY=${R}`, `--client.secret=${R}`],
    ],
    [
      'env-style pairs',
      ['AWS_SECRET_ACCESS_KEY=a', 'GITHUB_TOKEN=b', 'PGPASSWORD=c', 'ConnectionStrings__Default=d'],
      [`AWS_SECRET_ACCESS_KEY=${R}`, `GITHUB_TOKEN=${R}`, `PGPASSWORD=${R}`, `ConnectionStrings__Default=${R}`],
    ],
    ['the whole value after the first =, = and , included', ['--token=a=b,c d'], [`--token=${R}`]],
    [
      'pairs set through another flag',
      ['--set', 'password=x', '--conf', 'spark.hadoop.fs.s3a.secret.key=y'],
      ['--set', `password=${R}`, '--conf', `spark.hadoop.fs.s3a.secret.key=${R}`],
    ],
    ['a nested pair ends where the next pair starts', ['--set=password=x,replicas=3'], [`--set=password=${R},replicas=3`]],
    ['libpq keyword/value strings', ['--conninfo', 'host=db password=x dbname=app'], ['--conninfo', `host=db password=${R} dbname=app`]],
    ['-p attached', ['-pS3CRET', '-p-S3CRET'], [`-p${R}`, `-p${R}`]],
    [
      '-u and --user keep the user',
      ['-u', 'alice:pw', '--user=bob:pw2', '-ucarol:pw3'],
      ['-u', `alice:${R}`, `--user=bob:${R}`, `-ucarol:${R}`],
    ],
    [
      'Basic credentials and other headers',
      ['-H', 'Proxy-Authorization: Basic dXNlcjpwYXNz', '-H', 'Cookie: a=1; sid=2', '-H', 'X-Api-Key: k'],
      ['-H', `Proxy-Authorization: ${R}`, '-H', `Cookie: ${R}`, '-H', `X-Api-Key: ${R}`],
    ],
    [
      'Bearer under any header name',
      ['--header=X-Custom: Bearer abc', '--msg=Basic dXNl'],
      [`--header=X-Custom: Bearer ${R}`, `--msg=Basic ${R}`],
    ],
    ['a header split over arguments', ['-H', 'Authorization:', 'Bearer', 'tok'], ['-H', 'Authorization:', R, R]],
    [
      'URL userinfo anywhere, user included',
      ['--upstream=https://TOKEN@github.com/org/repo', 'redis://:pw@cache:6379', '--peers=https://a:x@h1,https://b:y@h2'],
      [`--upstream=https://${R}@github.com/org/repo`, `redis://${R}@cache:6379`, `--peers=https://${R}@h1,https://${R}@h2`],
    ],
    ['a password holding @, : or /', ['--db=postgres://u:p@ss:w/rd@db.internal/app'], [`--db=postgres://${R}@db.internal/app`]],
    ['userinfo without a scheme', ['--mysql=root:pw@tcp(127.0.0.1:3306)/app'], [`--mysql=${R}@tcp(127.0.0.1:3306)/app`]],
    [
      'secret query parameters',
      ['--callback=https://h/cb?token=abc&page=2&X-Amz-Signature=f00&sig=b4r'],
      [`--callback=https://h/cb?token=${R}&page=2&X-Amz-Signature=${R}&sig=${R}`],
    ],
    [
      'JSON inside an argument',
      ['--config={"password":"x \\"y","user":"bob","nested":{"token":["a","b"]},"pin":1234,"n":1}'],
      [`--config={"password":"${R}","user":"bob","nested":{"token":${R}},"pin":${R},"n":1}`],
    ],
    ['code given to -e', ['-e', "const apiKey = 'k'; run()"], ['-e', `const apiKey = '${R}'; run()`]],
    [
      'command lines inside an argument',
      ['--node-options=--token abc --port 1', '--opts="--auth-token x"', '--cmd=mysql -p pw db'],
      [`--node-options=--token ${R} --port 1`, `--opts="--auth-token ${R}"`, `--cmd=mysql -p ${R} db`],
    ],
    [
      'full-width letters and invisible characters',
      ['--ｐａｓｓｗｏｒｄ=x', '--pass\u200bword=y'],
      [`--ｐａｓｓｗｏｒｄ=${R}`, `--pass\u200bword=${R}`],
    ],
    ['a NUL inside an argument splits it where Go would', ['a\0--token\0S3CRET'], ['a', '--token', R]],
  ])('%s', (_what, args, expected) => {
    expect(redactedArgs(args)).toEqual(expected);
  });

  it('keeps ordinary arguments', () => {
    const args = [
      '/usr/bin/node',
      '--enable-source-maps',
      '--max-old-space-size=512',
      '--require',
      './tracing.js',
      '--env-file=.env',
      'dist/main.js',
      '--port=8080',
      '--verbose',
      '--passes=3',
      '--keyboard=us',
      '--author=Ada',
      '--authority=ca.internal',
      '--tokenizer=bpe',
      '--bypass-cache',
      'replicas=3',
      '--no-auth',
      'positional',
      '--url=https://auth.example.com:8443/path?page=2',
      'git@github.com:org/repo.git',
      '--perf-basic-prof',
      '--kubeconfig=/etc/kube/config',
    ];
    expect(redactedArgs(args)).toEqual(args);
  });

  it('serves an argument longer than it reads, and the one after, as [REDACTED]', () => {
    const long = `--x=${'a'.repeat(MAX_READ_ARGUMENT)}`;
    expect(redactedArgs(['node', long, 'after', 'kept', '--token', 't'])).toEqual(['node', R, R, 'kept', '--token', R]);
    // The argument after a long one is still read for what it says about the next.
    expect(redactedArgs([long, '--token', 'S3CRET', 'kept'])).toEqual([R, R, R, 'kept']);
  });
});

describe('cmdline over a real socket, from a child process', () => {
  const SECRETS = [
    'exec-Bearer-S3CRET',
    '-S3CRET-dash',
    'S3CRET=eq:colon@at',
    'pässwörd-S3CRET-ü',
    'url-S3CRET',
    'jwt.S3CRET.sig',
    'set-S3CRET',
    'hdr-S3CRET',
    'json-S3CRET',
    'q-S3CRET',
    'p-S3CRET',
  ];
  let work: string | undefined;
  let host: PprofHost | undefined;
  afterAll(async () => {
    await host?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('answers without any of the secrets, one entry per argument, ordinary ones intact', async () => {
    work = mkdtempSync(join(tmpdir(), 'pprof-cmdline-'));
    transpileLib(work);
    const execArgv = [`--title=Authorization: Bearer ${SECRETS[0]}`, '--stack-trace-limit=17'];
    const script = join(__dirname, 'fixtures', 'cmdline-host.js');
    const args = [
      '--token',
      SECRETS[1]!,
      `--db:password=${SECRETS[2]}`,
      '--session-cookie',
      SECRETS[3]!,
      `--db-url=postgres://app:${SECRETS[4]}@db.internal:5432/app`,
      '--jwt',
      SECRETS[5]!,
      '--set',
      `password=${SECRETS[6]},replicas=3`,
      '--header',
      `Authorization: Basic ${SECRETS[7]}`,
      `--config={"password":"${SECRETS[8]}","user":"bob"}`,
      `--callback=https://hooks.internal/cb?token=${SECRETS[9]}&page=2`,
      `-p${SECRETS[10]}`,
      '--port=8080',
      '--verbose',
    ];
    host = await startPprofHost(work, script, args, execArgv);

    const res = await request(`${host.base}/cmdline`);
    expect(res.status).toBe(200);
    const served = res.body.toString('utf8');
    for (const secret of SECRETS) expect(served).not.toContain(secret);
    expect(served).not.toContain('S3CRET');
    const entries = served.split('\0');
    expect(entries).toHaveLength(1 + execArgv.length + 1 + args.length);
    expect(entries.slice(1)).toEqual([
      `--title=Authorization: ${R}`,
      '--stack-trace-limit=17',
      script,
      '--token',
      R,
      `--db:password=${R}`,
      '--session-cookie',
      R,
      `--db-url=postgres://${R}@db.internal:5432/app`,
      '--jwt',
      R,
      '--set',
      `password=${R}`,
      '--header',
      `Authorization: ${R}`,
      `--config={"password":"${R}","user":"bob"}`,
      `--callback=https://hooks.internal/cb?token=${R}&page=2`,
      `-p${R}`,
      '--port=8080',
      '--verbose',
    ]);
    expect(await host.stop()).toBe(0);
  });
});
