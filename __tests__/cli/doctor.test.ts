/**
 * `controller-introspection doctor <url>` over real sockets: an Express server answers
 * `/debug/fleet` with reports (healthy, with findings, garbage, hung, refused, 401/403), or mounts
 * no fleet view and the real introspection router instead (the single-replica fallback); HTTPS with
 * a test CA. The doctor runs in-process ({@link runCli}), and once as the built command.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { parseRequestTimeout } from '../../lib/cli/arguments';
import { runCli, type CliIo } from '../../lib/cli/doctor';
import { FINDING_BOUNDS } from '../../lib/fleet/findings';
import { FLEET_VIEW_DEFAULTS } from '../../lib/fleet/view';
import type { FleetReport, ReplicaReport } from '../../lib/fleet/report';
import { createIntrospectionState } from '../../lib/state/store';
import { testCertificates } from '../helpers/certificates';
import { requireFreshDist } from '../helpers/dist';
import { blocksRunBy, shellCommands } from '../helpers/markdown';
import { listen, type Listening } from '../helpers/http';
import { closeIntrospectionApps, introspectionApp } from '../helpers/introspection-app';
import { closeServer, freePort } from '../helpers/ports';

const REPO = path.resolve(__dirname, '..', '..');
const TOKEN = 'sekret-token-0123456789abcdef';
/** The name the HTTPS replica's certificate holds besides 127.0.0.1, as docs/fleet.md's command names it. */
const SERVICE_NAME = 'my-controller.ingress.svc';

/** What one run of the doctor did. */
interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `controller-introspection <argv>` in-process, collecting its output. */
async function cli(argv: readonly string[], options: { tty?: boolean; env?: Record<string, string> } = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    env: options.env ?? {},
    stdout: { write: (text: string) => (stdout += text), isTTY: options.tty ?? false },
    stderr: { write: (text: string) => (stderr += text) },
  };
  const code = await runCli(argv, io);
  return { code, stdout, stderr };
}

function replica(pod: string, fields: Partial<ReplicaReport> = {}): ReplicaReport {
  return {
    pod,
    address: `http://10.0.0.${pod.length}:8080`,
    phase: 'Running',
    reachable: true,
    error: null,
    ready: true,
    failing_checks: [],
    leading: pod === 'lb-0',
    holder: 'lb-0',
    config_version: '7',
    last_cycle: {
      outcome: 'succeeded',
      started: new Date(Date.now() - 12_000).toISOString(),
      ended: new Date(Date.now() - 11_900).toISOString(),
      took_ms: 100,
      correlation_id: 'c-1',
      failed_phase: null,
    },
    cycles: { total: 40, succeeded: 40, failed: 0 },
    uptime_seconds: 7200,
    event_subscribers: 2,
    caches_fresh: true,
    certificate_not_after: null,
    read_ms: 3,
    ...fields,
  };
}

const HEALTHY: FleetReport = {
  kind: 'FleetReport',
  version: 1,
  gathered: new Date().toISOString(),
  took_ms: 42,
  observer: 'lb-1',
  source: { namespace: 'ingress', selector: 'app=lb' },
  status: 'healthy',
  findings: [],
  replicas: [replica('lb-0'), replica('lb-1'), replica('lb-2')],
};

const DEGRADED: FleetReport = {
  ...HEALTHY,
  status: 'failing',
  findings: [
    { kind: 'no_leader', severity: 'critical', message: 'no readable replica leads', replicas: [] },
    { kind: 'unreachable', severity: 'warning', message: 'lb-2 could not be read: timeout after 2s', replicas: ['lb-2'] },
    { kind: 'config_skew', severity: 'info', message: 'two versions', replicas: ['lb-0', 'lb-1'] },
  ],
  replicas: [
    replica('lb-0', { leading: false, ready: false, failing_checks: [{ name: 'caches-synced', reason: 'ingresses not synced' }] }),
    replica('lb-1', { leading: false }),
    replica('lb-2', { reachable: false, error: 'timeout after 2s', ready: null, leading: null, last_cycle: null, cycles: null }),
  ],
};

/** How the test server answers `/debug/fleet` now. */
let answer: (req: express.Request, res: express.Response) => void = (_req, res) => void res.json(HEALTHY);
let server: Listening;
let base: string;

/** An HTTPS replica with a certificate for 127.0.0.1 signed by a test CA; a token, when sent, must be {@link TOKEN}. */
const certificates = testCertificates('ci-doctor-tls-');
let tlsServer: https.Server;
let origin: string;

beforeAll(async () => {
  const app = express();
  app.get(['/debug/fleet', '/base/debug/fleet'], (req, res) => answer(req, res));
  server = await listen(app);
  base = server.origin;
  const leaf = certificates.leaf('replica', `IP:127.0.0.1,DNS:${SERVICE_NAME}`);
  const tlsApp = express();
  tlsApp.get('/debug/fleet', (req, res) => {
    if (req.headers.authorization !== undefined && req.headers.authorization !== `Bearer ${TOKEN}`)
      res.status(401).json({ error: 'bad token' });
    else res.json(HEALTHY);
  });
  tlsServer = https.createServer({ cert: fs.readFileSync(leaf.cert), key: fs.readFileSync(leaf.key) }, tlsApp);
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(tlsServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await server.close();
  await closeServer(tlsServer);
  certificates.remove();
  await closeIntrospectionApps();
});

describe('doctor: a fleet view', () => {
  it('prints a healthy report and exits 0', async () => {
    answer = (_req, res) => void res.json(HEALTHY);
    const run = await cli(['doctor', base]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout).toMatch(
      /^HEALTHY: 3 replicas \(namespace ingress, selector app=lb, seen from lb-1\), gathered [\d.]+m?s ago in 42ms from http:\/\/127\.0\.0\.1:\d+\/\n/,
    );
    expect(run.stdout).toContain('Findings\n  none\n');
    const table = run.stdout.slice(run.stdout.indexOf('Replicas\n'));
    expect(table.split('\n')[1]).toMatch(
      /^ {2}POD +READY +LEADING +HOLDER +CONFIG +LAST CYCLE +FAILED +UPTIME +SUBSCRIBERS +CERT EXPIRES$/,
    );
    expect(table).toMatch(/ {2}lb-0 +yes +yes +lb-0 +7 +succeeded [\d.]+s ago \(100ms\) +0\/40 +2h0m +2 +-\n/);
  });

  it('prints the findings first, most severe first, and exits 1', async () => {
    answer = (_req, res) => void res.json(DEGRADED);
    const run = await cli(['doctor', base]);
    expect(run).toMatchObject({ code: 1, stderr: '' });
    const lines = run.stdout.split('\n');
    expect(lines[0]).toMatch(/^FAILING: 3 replicas/);
    expect(lines.slice(2, 6)).toEqual([
      'Findings',
      '  CRITICAL  no_leader: no readable replica leads',
      '  WARNING   unreachable: lb-2 could not be read: timeout after 2s [lb-2]',
      '  INFO      config_skew: two versions [lb-0, lb-1]',
    ]);
    expect(run.stdout).toMatch(/ {2}lb-0 +no \(caches-synced\) +no +lb-0/);
    expect(run.stdout).toMatch(/ {2}lb-2 +unreachable: timeout after 2s\n/);
    expect(run.stdout).toMatch(/Failing checks\n {2}lb-0: caches-synced: ingresses not synced\n$/);
  });

  it('exits 0 with info findings only', async () => {
    answer = (_req, res) => void res.json({ ...HEALTHY, findings: [DEGRADED.findings[2]] });
    expect((await cli(['doctor', base])).code).toBe(0);
  });

  it('prints the report as JSON with --json, which parses to the report', async () => {
    answer = (_req, res) => void res.json(DEGRADED);
    const run = await cli(['doctor', base, '--json']);
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual(DEGRADED);
  });

  it('reads a URL without a scheme, with a base path, or ending in /debug/fleet', async () => {
    answer = (_req, res) => void res.json(HEALTHY);
    const hostPort = base.replace('http://', '');
    for (const url of [hostPort, `${hostPort}/base`, `${base}/base/`, `${base}/debug/fleet`]) {
      expect(await cli(['doctor', url, '--json'])).toMatchObject({ code: 0, stderr: '' });
    }
  });

  it('colours only a terminal without NO_COLOR', async () => {
    answer = (_req, res) => void res.json(DEGRADED);
    expect((await cli(['doctor', base], { tty: true })).stdout).toContain('\x1b[31mCRITICAL');
    expect((await cli(['doctor', base], { tty: true, env: { NO_COLOR: '1' } })).stdout).not.toContain('\x1b');
    expect((await cli(['doctor', base], { tty: false })).stdout).not.toContain('\x1b');
  });
});

describe('doctor: untrusted text', () => {
  const EVIL = 'lb-\x1b[2J\x1b]0;owned\x07\r\u009b31m\u202eevil\n';
  const evilReport: FleetReport = {
    ...DEGRADED,
    observer: EVIL,
    findings: [{ kind: 'not_ready', severity: 'warning', message: `replica ${EVIL} is not ready`, replicas: [EVIL] }],
    replicas: [replica(EVIL, { holder: EVIL, failing_checks: [{ name: EVIL, reason: EVIL }], config_version: 'x'.repeat(5000) })],
  };

  it('escapes control characters and bidirectional overrides in the terminal output and bounds lengths', async () => {
    answer = (_req, res) => void res.json(evilReport);
    const run = await cli(['doctor', base], { tty: true });
    expect(run.code).toBe(1);
    // The only escapes are the doctor's own colours.
    const withoutColours = run.stdout.replace(/\x1b\[(?:\d+)?m/g, '');
    expect(withoutColours).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]/);
    expect(withoutColours).toContain('lb-\\x1b[2J\\x1b]0;owned\\x07\\x0d\\x9b31m\\u202eevil\\x0a');
    expect(Math.max(...withoutColours.split('\n').map((l) => l.length))).toBeLessThan(1000);
    expect(withoutColours).not.toContain('x'.repeat(100));
  });

  it('escapes them in --json too, as \\u escapes that parse back to the (bounded) text', async () => {
    answer = (_req, res) => void res.json(evilReport);
    const run = await cli(['doctor', base, '--json']);
    expect(run.stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]/);
    const parsed = JSON.parse(run.stdout) as FleetReport;
    expect(parsed.replicas[0]!.pod).toBe(EVIL);
    expect(parsed.replicas[0]!.config_version!.length).toBeLessThan(300);
  });

  it('reads a report with wrong types field by field, without throwing', async () => {
    answer = (_req, res) =>
      void res.json({
        kind: 'FleetReport',
        version: 1,
        findings: [{ kind: 'from_the_future', severity: 'apocalyptic', message: 5, replicas: 'lb-0' }, 'nonsense'],
        replicas: [{ pod: { nested: true }, reachable: 'yes', uptime_seconds: -5, cycles: { total: 'many' } }, null],
      });
    const run = await cli(['doctor', base]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^DEGRADED: 1 replica \(no fleet view: the replica alone\), read in 0s from /);
    expect(run.stdout).toContain('  WARNING   from_the_future: \n');
    expect(run.stdout).toContain('  (unnamed)  unreachable: the report gives no reason');
  });
});

describe('doctor: what cannot be read exits 2', () => {
  it.each([
    [
      'not JSON',
      (_req: express.Request, res: express.Response) => void res.type('html').send('<html>hello</html>'),
      /the answer is not JSON \(Content-Type: text\/html/,
    ],
    [
      'JSON of another kind',
      (_req: express.Request, res: express.Response) => void res.json({ status: 'ok' }),
      /the answer is JSON but not a FleetReport/,
    ],
    [
      'a later version',
      (_req: express.Request, res: express.Response) => void res.json({ ...HEALTHY, version: 2 }),
      /a FleetReport of version 2; this doctor reads version 1/,
    ],
    [
      'a 500',
      (_req: express.Request, res: express.Response) => void res.status(500).json({ error: 'boom\x1b[2J' }),
      /answered 500: boom\\x1b\[2J\n$/,
    ],
    ['a redirect', (_req: express.Request, res: express.Response) => void res.redirect('/elsewhere'), /answered 302/],
    [
      'over 8 MiB',
      (_req: express.Request, res: express.Response) => void res.type('json').send(' '.repeat(9 << 20)),
      /over the bound of 8388608/,
    ],
  ])('%s', async (_name, handler, message) => {
    answer = handler;
    const run = await cli(['doctor', base]);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(/^doctor: cannot read http:\/\/127\.0\.0\.1:\d+\/debug\/fleet: /);
    expect(run.stderr).toMatch(message);
  });

  it('a body that grows past 8 MiB without a Content-Length', async () => {
    answer = (_req, res) => {
      res.type('json');
      const chunk = ' '.repeat(1 << 20);
      for (let i = 0; i < 9; i++) res.write(chunk);
      res.end();
    };
    const run = await cli(['doctor', base]);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toContain('the answer is over the bound of 8388608 bytes');
  });

  it('a server that does not answer, within --request-timeout', async () => {
    answer = () => undefined;
    const started = Date.now();
    const run = await cli(['doctor', base, '--request-timeout=300ms']);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(/no answer within 300ms \(--request-timeout\)\n$/);
  });

  it('a refused connection', async () => {
    const port = await freePort();
    const run = await cli(['doctor', `localhost:${port}`]);
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: expect.stringMatching(/connection refused by localhost:\d+: is the replica \(or kubectl port-forward\) running\?\n$/),
    });
  });

  it('a 401 says to pass a token, or that the token was refused, and never prints the token', async () => {
    answer = (req, res) => void res.status(401).json({ error: `refused ${req.headers.authorization ?? 'nothing'}` });
    const without = await cli(['doctor', base]);
    expect(without).toMatchObject({ code: 2, stdout: '' });
    expect(without.stderr).toContain('401 Unauthorized: the server wants a bearer token: pass --token-file <file> (or --token)');
    const withToken = await cli(['doctor', base, '--token', TOKEN]);
    expect(withToken.stderr).toContain('401 Unauthorized: the token was refused');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-doctor-token-'));
    fs.writeFileSync(path.join(dir, 'token'), `${TOKEN}\n`);
    const fromFile = await cli(['doctor', base, '--token-file', path.join(dir, 'token')]);
    fs.rmSync(dir, { recursive: true, force: true });
    expect(fromFile.stderr).toContain('401 Unauthorized: the token was refused');
    for (const run of [withToken, fromFile]) expect(run.stdout + run.stderr).not.toContain(TOKEN);
  });

  it('a token the peer echoes into a report is not printed either', async () => {
    answer = (req, res) => void res.json({ ...HEALTHY, observer: String(req.headers.authorization) });
    for (const flags of [[], ['--json']]) {
      const run = await cli(['doctor', base, '--token', TOKEN, ...flags]);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('Bearer [token]');
      expect(run.stdout + run.stderr).not.toContain(TOKEN);
    }
  });

  it('a 403 names the RBAC rule', async () => {
    answer = (_req, res) => void res.status(403).json({ error: 'forbidden' });
    const run = await cli(['doctor', base, '--token', TOKEN]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("403 Forbidden: the token's identity may not read it: grant get on nonResourceURLs ['/debug/*']");
    expect(run.stderr).not.toContain(TOKEN);
  });
});

describe('doctor: the command line', () => {
  it.each([
    [['doctor', 'http://x', '--tokn', 't'], /^doctor: unknown flag "--tokn" \(did you mean "--token"\?\); see --help\n$/],
    [['doctor', 'http://x', '--insecure-skip-tls'], /did you mean "--insecure-skip-tls-verify"/],
    [['doctor'], /the URL of a replica is missing/],
    [['doctor', 'a', 'b'], /one URL only/],
    [['doctor', 'x', '--token', 'a', '--token-file', 'f'], /--token and --token-file are mutually exclusive/],
    [['doctor', 'x', '--certificate-authority', 'ca', '--insecure-skip-tls-verify'], /mutually exclusive/],
    [['doctor', 'x', '--request-timeout', 'soon'], /--request-timeout must be a duration/],
    [['doctor', 'x', '--token'], /--token needs a value/],
    [['doctor', 'ftp://x'], /must be http:\/\/ or https:\/\//],
    [['doctor', 'http://u:p@x'], /must not carry credentials/],
    [['doctor', 'http://x/?a=1'], /must not carry a query/],
    [['doctor', 'x', '--token', 'has space'], /--token is not a bearer token/],
    [['doctor', 'x', '--token-file', '/nonexistent/token'], /ENOENT/],
    [['doctor', 'x', '--token-file', '/'], /EISDIR/],
    [['doctr', 'x'], /^controller-introspection: unknown command "doctr" \(did you mean "doctor"\?\)/],
    [[], /a command is missing/],
  ])('%j exits 2', async (argv, message) => {
    const run = await cli(argv);
    expect(run).toMatchObject({ code: 2 });
    expect(run.stderr).toMatch(message);
  });

  it('prints help and the version', async () => {
    const help = await cli(['doctor', '--help']);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: controller-introspection doctor <url> \[flags\]/);
    expect((await cli(['doctor', '-h'])).stdout).toBe(help.stdout);
    expect((await cli(['--help'])).stdout).toMatch(/doctor <url> +report on a controller's fleet/);
    const { version } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string };
    expect(await cli(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(await cli(['doctor', '--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('reads --request-timeout as kubectl does', () => {
    expect(['30', '30s', '1m', '1m30s', '500ms', '1.5s', '0', '2h'].map(parseRequestTimeout)).toEqual([
      30_000, 30_000, 60_000, 90_000, 500, 1500, 0, 7_200_000,
    ]);
    expect(['', 's', '-1s', '1d', '10 s', '1e3s', '9999999h'].map(parseRequestTimeout)).toEqual(Array(7).fill(undefined));
  });

  it('warns when the token would go over plain HTTP to another machine', async () => {
    // 192.0.2.0/24 is TEST-NET-1: the connection never completes within the timeout.
    const run = await cli(['doctor', 'http://192.0.2.1:8080', '--token', TOKEN, '--request-timeout', '200ms']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^doctor: warning: the bearer token goes to 192\.0\.2\.1:8080 over plain HTTP\n/);
  });
});

describe('doctor: HTTPS', () => {
  it('trusts the CA of --certificate-authority', async () => {
    expect(await cli(['doctor', origin, '--certificate-authority', certificates.caFile, '--json'])).toMatchObject({ code: 0, stderr: '' });
  });

  it('refuses an unknown CA, saying what to pass', async () => {
    const run = await cli(['doctor', origin]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/TLS: .*\(UNABLE_TO_VERIFY_LEAF_SIGNATURE\): pass --certificate-authority <ca.crt> to trust its CA/);
  });

  it('checks the certificate against the name of --tls-server-name', async () => {
    const args = ['doctor', origin, '--certificate-authority', certificates.caFile, '--json'];
    expect(await cli([...args, '--tls-server-name', SERVICE_NAME])).toMatchObject({ code: 0, stderr: '' });
  });

  it('refuses a certificate that does not hold the name of --tls-server-name', async () => {
    const run = await cli(['doctor', origin, '--certificate-authority', certificates.caFile, '--tls-server-name', 'other.example']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID\): the certificate names another host: pass --tls-server-name/);
  });

  it('skips the check with --insecure-skip-tls-verify', async () => {
    expect(await cli(['doctor', origin, '--insecure-skip-tls-verify', '--json'])).toMatchObject({ code: 0, stderr: '' });
  });

  it('says which scheme to try when the other one is served', async () => {
    const plain = await cli(['doctor', origin.replace('https:', 'http:')]);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toMatch(/does it serve HTTPS\? try https:\/\/127\.0\.0\.1:\d+\/debug\/fleet\n$/);
    const secure = await cli(['doctor', base.replace('http:', 'https:')]);
    expect(secure.code).toBe(2);
    expect(secure.stderr).toMatch(/is it plain HTTP\? try http:\/\/127\.0\.0\.1:\d+\/debug\/fleet\n$/);
  });
});

describe('doctor: a replica without a fleet view', () => {
  it('reads the replica itself (the real introspection router) and reports on it alone', async () => {
    const state = createIntrospectionState();
    state.setConfig({ templates: {}, watched_resources: [] }, '7');
    const replicaServer = await listen(introspectionApp(state));
    try {
      const run = await cli(['doctor', replicaServer.origin]);
      expect(run.stderr).toBe('');
      expect(run.stdout).toMatch(
        /^[A-Z]+: 1 replica \(no fleet view: the replica alone\), read in [\d.]+m?s from http:\/\/127\.0\.0\.1:\d+\/\n/,
      );
      expect(run.stdout).toMatch(/ {2}127\.0\.0\.1:\d+ +yes +/);
      const json = await cli(['doctor', replicaServer.origin, '--json']);
      const report = JSON.parse(json.stdout) as FleetReport;
      expect(report).toMatchObject({
        kind: 'FleetReport',
        version: 1,
        source: null,
        replicas: [{ reachable: true, ready: true, config_version: '7' }],
      });
      expect(json.code).toBe(report.findings.some((f) => f.severity !== 'info') ? 1 : 0);
    } finally {
      await replicaServer.close();
    }
  });

  it('reports a replica whose readiness fails (no configuration yet) with its check, and exits 1', async () => {
    const replicaServer = await listen(introspectionApp(createIntrospectionState()));
    try {
      const run = await cli(['doctor', replicaServer.origin]);
      expect(run).toMatchObject({ code: 1, stderr: '' });
      expect(run.stdout).toMatch(/^DEGRADED: 1 replica/);
      expect(run.stdout).toMatch(/\n {2}WARNING {3}not_ready: 127\.0\.0\.1:\d+ is not ready: "config-loaded"/);
      expect(run.stdout).toMatch(/ {2}127\.0\.0\.1:\d+ +no \(config-loaded\) +/);
    } finally {
      await replicaServer.close();
    }
  });

  it("judges it by the fleet view's default bounds", () => {
    const { staleCycleMs, certificateWarningMs } = FLEET_VIEW_DEFAULTS;
    expect(FINDING_BOUNDS).toEqual({ staleCycleMs, certificateWarningMs });
  });

  it('exits 2 when the replica cannot be read either', async () => {
    const app = express();
    const bare = await listen(app);
    try {
      const run = await cli(['doctor', bare.origin]);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^doctor: no fleet view at http:\/\/127\.0\.0\.1:\d+\/debug\/fleet, and the replica could not be read: /);
    } finally {
      await bare.close();
    }
  });
});

/** Runs the built command (`node dist/cli/main.js`) through bash, as a user's shell would. */
function shell(command: string, cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', command], { cwd, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : Number((err as { code?: unknown }).code), stdout, stderr });
    });
  });
}

describe('doctor: the built command', () => {
  const main = path.join(REPO, 'dist', 'cli', 'main.js');
  beforeAll(() => requireFreshDist());

  it('runs as node dist/cli/main.js, with its exit status and output', async () => {
    answer = (_req, res) => void res.json(DEGRADED);
    expect(fs.readFileSync(main, 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
    const run = await shell(`${JSON.stringify(process.execPath)} ${JSON.stringify(main)} doctor ${base}`, REPO);
    expect(run).toMatchObject({ code: 1, stderr: '' });
    expect(run.stdout).toMatch(/^FAILING: 3 replicas/);
    const refused = await shell(`${JSON.stringify(process.execPath)} ${JSON.stringify(main)} doctor localhost:${await freePort()}`, REPO);
    expect(refused).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/connection refused/) });
  });

  /*
   * The commands of docs/fleet.md (`<!-- run: doctor -->`), as written but for what a test cannot
   * have: `kubectl port-forward` is not run (the test's servers stand where it would forward, and
   * its ports are put in for 8080 and 8443), and `npx controller-introspection` is the built
   * command; `token` and `ca.crt` are files of a scratch folder.
   */
  const commands = blocksRunBy('doctor').flatMap(shellCommands);
  it("has the guide's commands", () => {
    expect(commands.filter((c) => c.startsWith('npx controller-introspection doctor ')).length).toBeGreaterThanOrEqual(3);
  });

  it.each(commands.map((c) => [c]))('%s', async (command) => {
    const forward = /^kubectl port-forward .* (\d+):\d+$/.exec(command);
    if (forward !== null) {
      expect(['8080', '8443']).toContain(forward[1]);
      return;
    }
    expect(command).toMatch(/^npx controller-introspection doctor /);
    answer = (_req, res) => void res.json(DEGRADED);
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-doctor-guide-'));
    try {
      fs.writeFileSync(path.join(scratch, 'token'), `${TOKEN}\n`);
      fs.copyFileSync(certificates.caFile, path.join(scratch, 'ca.crt'));
      const run = await shell(
        command
          .replace(/^npx controller-introspection /, `${JSON.stringify(process.execPath)} ${JSON.stringify(main)} `)
          .replaceAll('localhost:8080', new URL(base).host)
          .replaceAll('localhost:8443', new URL(origin).host),
        scratch,
      );
      expect(run.stderr).toBe('');
      const tls = command.includes('8443');
      expect(run.code).toBe(tls ? 0 : 1);
      if (command.includes('--json')) expect(JSON.parse(run.stdout)).toEqual(tls ? HEALTHY : DEGRADED);
      else expect(run.stdout).toMatch(tls ? /^HEALTHY: 3 replicas/ : /^FAILING: 3 replicas/);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});
