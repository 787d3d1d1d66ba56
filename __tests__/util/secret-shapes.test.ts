import { endsBeforeSecret, isSecretName, maskSpans, secretNameMemo, secretSpans } from '../../lib/util/secret-shapes';

const R = '[REDACTED]';
const mask = (text: string): string => maskSpans(text, secretSpans(text), R);

describe('isSecretName', () => {
  it.each([
    'password',
    '--db-password',
    '--db:password',
    'MYSQL_PWD',
    'PGPASSWORD',
    'dbPassword',
    'DBPassword',
    '--PASSWORD',
    'pass',
    '--pass-word',
    'passw0rd',
    'passphrase',
    'secret',
    'client_secret',
    'spark.hadoop.fs.s3a.secret.key',
    'token',
    'GITHUB_TOKEN',
    'x-auth-token',
    'jwt',
    'bearer',
    'auth',
    'oauth2',
    'basicAuth',
    'authorization',
    'Proxy-Authorization',
    'credential',
    'credentials',
    'creds',
    'cookie',
    'Set-Cookie',
    'session',
    'sessionId',
    'api-key',
    'apiKey',
    'X-API-KEY',
    'access_key',
    'AWS_SECRET_ACCESS_KEY',
    'private-key',
    'masterkey',
    'X-Amz-Signature',
    'sig',
    'sentry-dsn',
    'ConnectionStrings__Default',
    'conn_str',
    'otp',
    'pin',
    'sid',
    'Passwort',
    'contraseña',
    'пароль',
    '密码',
    'ｐａｓｓｗｏｒｄ',
    'pass\u200bword',
    'sec\u00adret',
    'pa\u0301ssword',
  ])('%j is secret', (name) => {
    expect(isSecretName(name)).toBe(true);
  });

  it.each([
    '',
    '--',
    'port',
    '--max-old-space-size',
    'passes',
    'bypass',
    'compass',
    'keyboard',
    'author',
    'authority',
    'tokenizer',
    'monkey',
    'path',
    'signal',
    'sigterm',
    'verbose',
    'kubeconfig',
    'user',
    'host',
    'database_url',
  ])('%j is not', (name) => {
    expect(isSecretName(name)).toBe(false);
  });

  it('a memo answers as isSecretName does, also past its size', () => {
    const memo = secretNameMemo();
    const names = [
      'password',
      'port',
      'x-api-key',
      'keyboard',
      ...Array.from({ length: 5000 }, (_, i) => `name${i}${i % 7 ? '' : 'token'}`),
    ];
    for (const name of [...names, ...names]) expect(memo(name)).toBe(isSecretName(name));
  });
});

describe('secretSpans', () => {
  it.each([
    ['password=x', `password=${R}`],
    ['a=1&token=x&b=2', `a=1&token=${R}&b=2`],
    ['password=x,replicas=3', `password=${R},replicas=3`],
    ['password=a,b', `password=${R}`],
    ['host=h password=x y dbname=d', `host=h password=${R} dbname=d`],
    ['Authorization: Bearer x, y\nAccept: */*', `Authorization: ${R}\nAccept: */*`],
    ['Cookie: a=1; sid=2', `Cookie: ${R}`],
    ['X-Auth-Token:abc', `X-Auth-Token:${R}`],
    ['{"password":"a\\"b","user":"u"}', `{"password":"${R}","user":"u"}`],
    ["{'secret': 'x'}", `{'secret': '${R}'}`],
    ['{"token":{"a":["}"]},"n":1}', `{"token":${R},"n":1}`],
    ['{"pin":1234,"n":1}', `{"pin":${R},"n":1}`],
    ['password => "x"', `password => "${R}"`],
    ['token := x', `token := ${R}`],
    ['session:id=x', `session:id=${R}`],
    ['/token:x', `/token:${R}`],
    ['spark.auth.secret:1234', `spark.auth.secret:${R}`],
    ['https://u:p@h/db', `https://${R}@h/db`],
    ['https://TOKEN@github.com', `https://${R}@github.com`],
    ['postgres://u:p@ss/w:rd@h:5432/db', `postgres://${R}@h:5432/db`],
    ['a https://u:p@h1, https://h2/x', `a https://${R}@h1, https://h2/x`],
    ['root:pw@tcp(h:3306)/db', `${R}@tcp(h:3306)/db`],
    ['URL=u:p=q@h', `URL=${R}@h`],
    ['Basic dXNlcjpwYXNz', `Basic ${R}`],
    ['"Bearer abc" and more', `"Bearer ${R}" and more`],
  ])('%j', (text, expected) => {
    expect(mask(text)).toBe(expected);
  });

  it.each([
    'https://auth.example.com:8443/token',
    'git@github.com:org/repo.git',
    'me@example.com',
    'Bearer',
    'basic',
    'host:8080',
    'port=8080&page=2',
    '{"user":"bob","n":1}',
    '--perf-basic-prof',
  ])('leaves %j alone', (text) => {
    expect(mask(text)).toBe(text);
  });

  // A quadratic scan of any of these runs for minutes, past Jest's timeout; a linear one for milliseconds.
  it.each<[string, (text: string) => string]>([
    ['a=', (text) => text],
    ['://', (text) => text],
    [' ', (text) => text],
    ['"', (text) => text],
    ['{[', (text) => text],
    ['x:1 ', (text) => text],
    ['password=', () => `password=${R}`],
    ['bearer ', () => `bearer ${R}`],
    ['a:b@', () => `${R}@`],
    // The last value runs to the text's end, its trailing space included.
    ['пароль=ü ', (text) => `пароль=${R} `.repeat(text.length / 'пароль=ü '.length).slice(0, -1)],
  ])('reads 256 KiB of %j in one pass', (unit, expected) => {
    const text = unit.repeat(Math.floor((256 * 1024) / unit.length));
    // Compared as a boolean: a failing diff of 256 KiB helps nobody.
    expect(mask(text) === expected(text)).toBe(true);
  });
});

describe('endsBeforeSecret', () => {
  it.each([
    ['Authorization:', true],
    ['Authorization: ', true],
    ['-H "X-Api-Key":', true],
    ['Bearer', true],
    ['Authorization: Basic  ', true],
    ['Accept:', false],
    ['x-bearer', false],
    ['--token', false],
    ['', false],
  ])('%j: %s', (text, expected) => {
    expect(endsBeforeSecret(text)).toBe(expected);
  });
});

describe('maskSpans', () => {
  it('joins overlapping and touching spans and ignores empty ones', () => {
    const spans = [
      { start: 6, end: 8 },
      { start: 1, end: 3 },
      { start: 2, end: 4 },
      { start: 4, end: 5 },
      { start: 7, end: 7 },
    ];
    expect(maskSpans('0123456789', spans, '*')).toBe('0*5*89');
  });
});
