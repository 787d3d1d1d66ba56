/// <reference lib="dom" />
/**
 * The console's fleet page in a real browser (Debian's Chromium, driven by playwright-core, as in
 * browser.test.ts): the real introspection router serves the built page, and a host route answers
 * `GET /debug/fleet` with prepared FleetReports, as a fleet view would. The page must draw the
 * findings and the replicas, link each replica's own console only through an http(s) address,
 * render everything from the report as text, and explain a 404 and other errors.
 *
 * Without Chromium (`apt-get install -y chromium`) this file skips, unless `CI` is set, where it
 * fails. `CHROMIUM_PATH` points at another binary.
 */
import fs from 'node:fs';
import path from 'node:path';
import express from 'express';
import { chromium, type Browser, type Page, type Request as PwRequest } from 'playwright-core';
import type { Finding, FleetReport, ReplicaReport } from '../../lib/fleet/report';
import { unreadableReplica } from '../../lib/fleet/replica';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';
import { listen, type Listening } from '../helpers/http';
import { replicaReport } from '../helpers/fleet-report';
import { describeWithPeer } from '../helpers/peers';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'console');
const describeBrowser = describeWithPeer(fs.existsSync(CHROMIUM) ? undefined : `${CHROMIUM} not found (apt-get install -y chromium)`);

jest.setTimeout(120_000);

// Markup that sets a page-level flag if it ever runs, as an element, an attribute or a URL.
const XSS_POD = '<img src=x onerror="window.__pwned=1">';
const XSS_MESSAGE = 'leader <script>window.__pwned=2</script><b>bold</b>';
const JS_ADDRESS = 'javascript:window.__pwned=3//';

function replica(pod: string, address: string | null, overrides: Partial<ReplicaReport> = {}): ReplicaReport {
  return replicaReport(pod, {
    address,
    holder: 'lb-0',
    config_version: 'v42',
    last_cycle: {
      outcome: 'succeeded',
      started: '2024-05-01T10:00:00.000Z',
      ended: '2024-05-01T10:00:00.250Z',
      took_ms: 250,
      correlation_id: `cid-${pod}`,
      failed_phase: null,
    },
    cycles: { total: 120, succeeded: 118, failed: 2 },
    uptime_seconds: 93_784,
    event_subscribers: 3,
    read_ms: 12,
    ...overrides,
  });
}

function report(findings: Finding[], replicas: ReplicaReport[]): FleetReport {
  const severe = findings.some((f) => f.severity === 'critical')
    ? 'failing'
    : findings.some((f) => f.severity === 'warning')
      ? 'degraded'
      : 'healthy';
  return {
    kind: 'FleetReport',
    version: 1,
    gathered: '2024-05-01T10:00:05.000Z',
    took_ms: 87,
    observer: 'lb-0',
    source: { namespace: 'lb-system', selector: 'app=lb' },
    status: severe,
    findings,
    replicas,
  };
}

const HEALTHY = report(
  [],
  [
    replica('lb-0', 'http://127.0.0.2:8080', { leading: true }),
    replica('lb-1', 'http://127.0.0.3:8080'),
    replica('lb-2', 'https://127.0.0.4:9443', { certificate_not_after: '2099-01-01T00:00:00.000Z' }),
  ],
);

const FINDINGS = report(
  [
    { kind: 'several_leaders', severity: 'critical', message: 'lb-0 and lb-1 both say they lead', replicas: ['lb-0', 'lb-1'] },
    { kind: 'unreachable', severity: 'critical', message: 'lb-2 could not be read: timeout after 2000 ms', replicas: ['lb-2'] },
    { kind: 'config_skew', severity: 'warning', message: 'lb-1 runs v41, the others v42', replicas: ['lb-1'] },
  ],
  [
    replica('lb-0', 'http://127.0.0.2:8080', { leading: true }),
    replica('lb-1', 'http://127.0.0.3:8080', {
      leading: true,
      holder: 'lb-1',
      config_version: 'v41',
      ready: false,
      failing_checks: [{ name: 'config-loaded', reason: 'parse error at line 3' }],
      last_cycle: {
        outcome: 'failed',
        started: '2024-05-01T10:00:00.000Z',
        ended: '2024-05-01T10:00:01.000Z',
        took_ms: 1000,
        correlation_id: 'cid-failed',
        failed_phase: 'deploy',
      },
    }),
    {
      ...unreadableReplica('lb-2', 'http://127.0.0.5:8080', 'Running', 'timeout after 2000 ms', 2000),
    },
  ],
);

const HOSTILE = report(
  [{ kind: 'not_ready', severity: 'warning', message: XSS_MESSAGE, replicas: [XSS_POD] }],
  [
    replica(XSS_POD, JS_ADDRESS, {
      holder: XSS_MESSAGE,
      config_version: `<svg onload="window.__pwned=4">`,
      failing_checks: [{ name: XSS_POD, reason: XSS_MESSAGE }],
      last_cycle: { outcome: XSS_POD, started: null, ended: XSS_POD, took_ms: 1, correlation_id: XSS_POD, failed_phase: XSS_POD },
    }),
    replica("lb-'quoted' $(touch /tmp/x)", 'data:text/html,<script>window.__pwned=5</script>'),
    replica('lb-creds', 'http://user:secret@127.0.0.6:8080'),
    replica('lb-vbscript', 'vbscript:msgbox(1)'),
  ],
);

let browser: Browser;

interface Watched {
  page: Page;
  problems: string[];
  requests: PwRequest[];
}

async function open(url: string, allowStatus: number[] = [], width = 1280): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  const requests: PwRequest[] = [];
  await page.addInitScript(() => {
    const w = window as unknown as { violations: string[] };
    w.violations = [];
    document.addEventListener('securitypolicyviolation', (e) => w.violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  page.on('console', (m) => {
    if (m.type() === 'error' && !allowStatus.some((s) => m.text().includes(`status of ${s}`))) problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => requests.push(r));
  page.on('requestfailed', (r) => {
    if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !allowStatus.includes(r.status())) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  await page.goto(url);
  return { page, problems, requests };
}

async function violations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { violations: string[] }).violations);
}

async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Every card: its pod (as text), its console link and its port-forward command. */
async function cards(page: Page): Promise<Array<{ pod: string; link: string | null; command: string | null; text: string }>> {
  return page.$$eval('#fleet-replicas section.card', (sections) =>
    sections.map((s) => ({
      pod: s.querySelector('.pod')?.textContent ?? '',
      link: s.querySelector('a.console-link')?.getAttribute('href') ?? null,
      command: s.querySelector('.command code')?.textContent ?? null,
      text: (s as HTMLElement).innerText,
    })),
  );
}

describeBrowser('the console fleet page', () => {
  /** What /debug/fleet answers next; undefined leaves the path to Express (an HTML 404, as with no fleet view). */
  let answer: { status: number; body: unknown } | undefined;
  let served: Listening;
  let router: ReturnType<typeof createIntrospectionRouter>;
  let base: string;

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const state = createIntrospectionState();
    // Ready, as a host is once its configuration is loaded (the header's badge asks /readyz).
    state.setConfig({ templates: {}, watched_resources: [] }, '');
    router = createIntrospectionRouter(state, { pprof: false });
    const fleet: express.RequestHandler = (_req, res, next) => {
      if (answer === undefined) next();
      else res.status(answer.status).set('Cache-Control', 'no-store').json(answer.body);
    };
    const app = express();
    app.get('/debug/fleet', fleet);
    app.use(router);
    // The same under a mount prefix, as a host that mounts the introspection router at /ops.
    app.get('/ops/debug/fleet', fleet);
    app.use('/ops', router);
    served = await listen(app);
    base = `${served.origin}/debug/`;
  });

  afterAll(async () => {
    await browser?.close();
    await router?.close();
    await served?.close();
  });

  it('a healthy fleet of three: the status, no findings, one card per replica with its console link and port-forward', async () => {
    answer = { status: 200, body: HEALTHY };
    const w = await open(`${base}#/fleet`);
    await w.page.waitForSelector('#fleet-replicas section.card');
    expect(await w.page.locator('nav a[aria-current="page"]').innerText()).toBe('Fleet');
    expect(await w.page.locator('#fleet-summary .badge').innerText()).toBe('healthy');
    expect(await w.page.locator('#fleet-summary').innerText()).toContain('3 replicas, 0 findings');
    expect(await w.page.locator('#fleet-findings').innerText()).toBe('No findings.');
    const drawn = await cards(w.page);
    expect(drawn.map((c) => [c.pod, c.link, c.command])).toEqual([
      ['lb-0', 'http://127.0.0.2:8080/debug/', 'kubectl port-forward -n lb-system pod/lb-0 8080'],
      ['lb-1', 'http://127.0.0.3:8080/debug/', 'kubectl port-forward -n lb-system pod/lb-1 8080'],
      ['lb-2', 'https://127.0.0.4:9443/debug/', 'kubectl port-forward -n lb-system pod/lb-2 8080:9443'],
    ]);
    const [lb0, , lb2] = drawn;
    for (const expected of [
      'http://127.0.0.2:8080',
      'Running',
      'ready',
      'leader',
      'v42',
      'succeeded',
      'took 250 ms',
      'cid-lb-0',
      '2 of 120',
      '1d 2h',
      'fresh',
      'plain HTTP',
      '12 ms',
    ])
      expect(lb0!.text).toContain(expected);
    expect(lb2!.text).toContain('2099-01-01T00:00:00.000Z (in ');
    // The correlation id opens the events of that cycle in the replica's own console.
    expect(await w.page.locator('section[data-pod="lb-0"] a', { hasText: 'cid-lb-0' }).getAttribute('href')).toBe(
      'http://127.0.0.2:8080/debug/#/events?correlation_id=cid-lb-0',
    );
    expect(await w.page.locator('section[data-pod="lb-0"]').innerText()).toContain('(this replica)');
    // The page reads only its own origin: the replicas are the fleet view's to read.
    expect(w.requests.filter((r) => !r.url().startsWith(served.origin))).toEqual([]);
    await shot(w.page, 'fleet-healthy');
    expect(await violations(w.page)).toEqual([]);
    expect(w.problems).toEqual([]);
    await w.page.context().close();
  });

  it('findings on top with severity and replicas; the cards they name are marked; an unreachable replica says why', async () => {
    answer = { status: 200, body: FINDINGS };
    const w = await open(`${base}#/fleet`);
    await w.page.waitForSelector('#fleet-findings li');
    expect(await w.page.locator('#fleet-summary .badge').innerText()).toBe('failing');
    const findings = await w.page.$$eval('#fleet-findings li', (items) =>
      items.map((li) => ({ severity: li.getAttribute('data-severity'), text: (li as HTMLElement).innerText })),
    );
    expect(findings).toEqual([
      {
        severity: 'critical',
        text: expect.stringMatching(/^critical several_leaders lb-0 and lb-1 both say they lead — replicas: lb-0, lb-1$/),
      },
      {
        severity: 'critical',
        text: expect.stringMatching(/^critical unreachable lb-2 could not be read: timeout after 2000 ms — replicas: lb-2$/),
      },
      { severity: 'warning', text: expect.stringMatching(/^warning config_skew lb-1 runs v41, the others v42 — replicas: lb-1$/) },
    ]);
    // Findings come before the replicas.
    expect(
      await w.page.evaluate(
        () =>
          !!(
            document.querySelector('#fleet-findings')!.compareDocumentPosition(document.querySelector('#fleet-replicas')!) &
            Node.DOCUMENT_POSITION_FOLLOWING
          ),
      ),
    ).toBe(true);
    const classes = await w.page.$$eval('#fleet-replicas section.card', (s) => s.map((c) => c.className));
    expect(classes).toEqual(['card replica concern-bad', 'card replica concern-bad', 'card replica concern-bad']);
    const [, lb1, lb2] = await cards(w.page);
    for (const expected of ['not ready', 'config-loaded parse error at line 3', 'v41', 'failed in deploy', 'cid-failed'])
      expect(lb1!.text).toContain(expected);
    expect(lb2!.text).toContain('unreachable');
    expect(lb2!.text).toContain('timeout after 2000 ms');
    expect(lb2!.text).not.toContain('config version');
    expect(lb2!.link).toBe('http://127.0.0.5:8080/debug/');
    await shot(w.page, 'fleet-findings');
    expect(await violations(w.page)).toEqual([]);
    expect(w.problems).toEqual([]);
    await w.page.context().close();
  });

  it('renders hostile pod names, messages and addresses as text: no element, no link, nothing runs', async () => {
    answer = { status: 200, body: HOSTILE };
    const w = await open(`${base}#/fleet`);
    await w.page.waitForSelector('#fleet-replicas section.card');
    await w.page.waitForTimeout(300);
    const main = await w.page.locator('main').innerText();
    expect(main).toContain(XSS_POD);
    expect(main).toContain(XSS_MESSAGE);
    expect(main).toContain('<svg onload="window.__pwned=4">');
    expect(await w.page.locator('main img, main script, main svg, main b, main iframe').count()).toBe(0);
    expect(await w.page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    const drawn = await cards(w.page);
    expect(drawn.map((c) => [c.pod, c.link])).toEqual([
      [XSS_POD, null],
      ["lb-'quoted' $(touch /tmp/x)", null],
      ['lb-creds', null],
      ['lb-vbscript', null],
    ]);
    // Every link on the page is the page's own (a view) or an http(s) URL: none from a hostile address.
    const hrefs = await w.page.$$eval('a[href]', (links) => links.map((a) => a.getAttribute('href')!));
    expect(hrefs.filter((href) => !/^(#|https?:\/\/)/.test(href))).toEqual([]);
    expect(hrefs.filter((href) => /javascript:|data:|vbscript:|secret/i.test(href))).toEqual([]);
    // The port-forward command quotes what is not a plain pod name, for a POSIX shell.
    expect(drawn[0]!.command).toBe(`kubectl port-forward -n lb-system 'pod/${XSS_POD}' 8080`);
    expect(drawn[1]!.command).toBe(`kubectl port-forward -n lb-system 'pod/lb-'\\''quoted'\\'' $(touch /tmp/x)' 8080`);
    expect(drawn[2]!.command).toBe('kubectl port-forward -n lb-system pod/lb-creds 8080');
    expect(await w.page.title()).toBe('Controller debug console');
    await shot(w.page, 'fleet-hostile');
    expect(await violations(w.page)).toEqual([]);
    expect(w.problems).toEqual([]);
    await w.page.context().close();
  });

  it('a 404 says no fleet view is mounted and points at createFleetView; another error shows the server message as text', async () => {
    answer = undefined;
    const w = await open(`${base}#/fleet`, [404, 503]);
    await w.page.waitForSelector('#fleet-missing');
    const missing = await w.page.locator('#fleet-missing').innerText();
    expect(missing).toContain('No fleet view mounted on this replica.');
    expect(missing).toContain('createFleetView');

    answer = { status: 503, body: { error: 'cannot list pods: <b>forbidden</b>' } };
    await w.page.click('#fleet-refresh');
    await w.page.waitForSelector('#fleet-error');
    expect(await w.page.locator('#fleet-error').innerText()).toBe('cannot list pods: <b>forbidden</b> (HTTP 503)');
    expect(await w.page.locator('main b').count()).toBe(0);

    // An answer that is not a report is said to be one, not drawn.
    answer = { status: 200, body: { kind: 'Something', replicas: [{ pod: 'x' }] } };
    await w.page.click('#fleet-refresh');
    await w.page.waitForFunction(() => /not a FleetReport/.test(document.querySelector('#fleet-error')?.textContent ?? ''));
    expect(await violations(w.page)).toEqual([]);
    expect(w.problems).toEqual([]);
    await w.page.context().close();
  });

  it('Refresh reloads at once; a failed refresh keeps the last report; auto-refresh is a deep link and reloads every 10 s', async () => {
    answer = { status: 200, body: HEALTHY };
    const w = await open(`${base}#/fleet`, [500]);
    await w.page.waitForSelector('#fleet-report');
    const fleetRequests = (): number => w.requests.filter((r) => new URL(r.url()).pathname === '/debug/fleet').length;
    expect(fleetRequests()).toBe(1);
    answer = { status: 200, body: FINDINGS };
    await w.page.click('#fleet-refresh');
    await w.page.waitForSelector('#fleet-findings li');
    expect(fleetRequests()).toBe(2);

    answer = { status: 500, body: { error: 'gathering failed' } };
    await w.page.click('#fleet-refresh');
    await w.page.waitForFunction(() => /refresh failed: gathering failed/.test(document.querySelector('#fleet-status')?.textContent ?? ''));
    expect(await w.page.locator('#fleet-findings li').count()).toBe(3);

    // Nothing reloads by itself until auto-refresh is on; turning it on reloads at once.
    answer = { status: 200, body: HEALTHY };
    const before = fleetRequests();
    await w.page.click('#fleet-auto');
    await w.page.waitForFunction(() => document.querySelector('#fleet-findings')?.textContent === 'No findings.');
    expect(await w.page.evaluate(() => location.hash)).toBe('#/fleet?auto=1');
    expect(fleetRequests()).toBe(before + 1);
    answer = { status: 200, body: FINDINGS };
    await w.page.waitForSelector('#fleet-findings li', { timeout: 15_000 });
    expect(fleetRequests()).toBe(before + 2);
    expect(w.problems).toEqual([]);
    await w.page.context().close();
  });

  it('fits a narrow window: the cards stack, nothing scrolls sideways, whatever the replicas hold', async () => {
    for (const body of [FINDINGS, HOSTILE]) {
      answer = { status: 200, body };
      const w = await open(`${base}#/fleet`, [], 390);
      await w.page.waitForSelector('#fleet-replicas section.card');
      expect(await w.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      if (body === FINDINGS) await shot(w.page, 'fleet-narrow');
      expect(w.problems).toEqual([]);
      await w.page.context().close();
    }
  });

  it('under a mount prefix: reads <prefix>/debug/fleet and links each replica to <address>/<prefix>/debug/', async () => {
    answer = { status: 200, body: HEALTHY };
    const w = await open(`${served.origin}/ops/debug/#/fleet?auto=1`);
    await w.page.waitForSelector('#fleet-replicas section.card');
    expect(await w.page.locator('#fleet-auto').isChecked()).toBe(true);
    expect(w.requests.filter((r) => r.url().includes('/fleet')).map((r) => new URL(r.url()).pathname)).toEqual(['/ops/debug/fleet']);
    expect((await cards(w.page)).map((c) => c.link)).toEqual([
      'http://127.0.0.2:8080/ops/debug/',
      'http://127.0.0.3:8080/ops/debug/',
      'https://127.0.0.4:9443/ops/debug/',
    ]);
    expect(await w.page.locator('section[data-pod="lb-0"]').innerText()).toContain('http://localhost:8080/ops/debug/');
    expect(await violations(w.page)).toEqual([]);
    expect(w.problems).toEqual([]);
    await w.page.context().close();
  });
});
