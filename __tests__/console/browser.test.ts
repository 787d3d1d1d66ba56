/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The debug console in a real browser: Debian's Chromium, driven by playwright-core, against the
 * example controller running as its own process. Every view must load with no console error, no
 * failed request and no Content-Security-Policy violation; screenshots of each view go to
 * test-artifacts/console/ (gitignored).
 *
 * Without Chromium (`apt-get install -y chromium`) this file skips, unless `CI` is set, where it
 * fails. `CHROMIUM_PATH` points at another binary.
 */
import { execFileSync, execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { chromium, type Browser, type Page, type Request as PwRequest } from 'playwright-core';
import { createIntrospectionRouter } from '../../lib/introspection/router';
import { createIntrospectionState } from '../../lib/state/store';
import { eventually } from '../helpers/eventually';
import { startExample, type ExampleApp } from '../helpers/example-app';
import { listen, request } from '../helpers/http';
import { describeWithPeer, inCI } from '../helpers/peers';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts', 'console');
const TOKEN = 'browser-test-token-5f0c2e9a7d1b4c3e';
const REPLICA = 'console-replica-1';
const describeBrowser = describeWithPeer(fs.existsSync(CHROMIUM) ? undefined : `${CHROMIUM} not found (apt-get install -y chromium)`);

jest.setTimeout(120_000);

/** What went wrong in a page: the test asserts this stays empty. */
interface Watched {
  page: Page;
  problems: string[];
  requests: PwRequest[];
}

let browser: Browser;

async function open(url: string, options: { width?: number; height?: number; allowStatus?: number[] } = {}): Promise<Watched> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    acceptDownloads: true,
  });
  const page = await context.newPage();
  const problems: string[] = [];
  const requests: PwRequest[] = [];
  // Runs before the page's own script, outside its CSP (it comes from the browser, not the page).
  await page.addInitScript(() => {
    const w = window as unknown as { violations: string[]; shifts: Array<{ value: number; moved: string[] }> };
    w.violations = [];
    w.shifts = [];
    document.addEventListener('securitypolicyviolation', (e) => w.violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    type Source = { node?: Node; previousRect: DOMRectReadOnly; currentRect: DOMRectReadOnly };
    const where = (r: DOMRectReadOnly): string => `${Math.round(r.x)},${Math.round(r.y)} ${Math.round(r.width)}x${Math.round(r.height)}`;
    const nameOf = (node: Element | undefined): string => {
      if (!node?.nodeName) return '?';
      const seq = node.getAttribute?.('data-seq');
      return `${node.nodeName.toLowerCase()}${node.id ? `#${node.id}` : ''}${seq ? `[seq ${seq}]` : ''}`;
    };
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as Array<PerformanceEntry & { value: number; hadRecentInput: boolean; sources: Source[] }>) {
        if (entry.hadRecentInput) continue;
        // What moved, so that a failing assertion says so.
        const moved = entry.sources.map(
          (s) => `${nameOf(s.node as Element | undefined)}: ${where(s.previousRect)} -> ${where(s.currentRect)}`,
        );
        w.shifts.push({ value: entry.value, moved });
      }
    }).observe({ type: 'layout-shift', buffered: true });
  });
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => requests.push(r));
  // A request the page aborts itself (leaving a view, a newer keystroke) is not a failure.
  page.on('requestfailed', (r) => {
    if (r.failure()?.errorText !== 'net::ERR_ABORTED') problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !(options.allowStatus ?? []).includes(r.status())) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  await page.goto(url);
  return { page, problems, requests };
}

/**
 * Waits until the events view's status reads `status`. On timeout the error says what it read
 * instead, what went wrong in the page and the page's last requests, so a failure in CI explains
 * itself.
 */
async function eventsStatus(w: Watched, status: string): Promise<void> {
  try {
    await w.page.waitForFunction((want) => document.querySelector('#events-status')?.textContent === want, status);
  } catch (err) {
    const read = await w.page.evaluate(() => document.querySelector('#events-status')?.textContent ?? null).catch(() => 'unreadable');
    const last = w.requests.slice(-8).map((r) => `${r.url()} ${r.failure()?.errorText ?? ''}`);
    throw new Error(
      `events status never read ${JSON.stringify(status)}: it reads ${JSON.stringify(read)}; problems: ${JSON.stringify(w.problems)}; ` +
        `last requests: ${last.join(' | ')} (${String(err)})`,
    );
  }
}

interface LayoutShift {
  value: number;
  moved: string[];
}

/** The page's layout shifts since it loaded, each with the elements it moved (see the init script). */
async function layoutShifts(page: Page): Promise<LayoutShift[]> {
  return page.evaluate(() => [...(window as unknown as { shifts: LayoutShift[] }).shifts]);
}

/** The layout-shift score of `shifts`, and what moved when it is not below 0.01 (the "good" threshold). */
function shiftScore(shifts: readonly LayoutShift[]): { score: number; moved: string[] } {
  const score = shifts.reduce((sum, shift) => sum + shift.value, 0);
  return { score, moved: score < 0.01 ? [] : shifts.flatMap((s) => s.moved.map((m) => `${s.value.toFixed(4)} ${m}`)).slice(0, 40) };
}

/** Whether a shift moved event rows only: what dropping the oldest rows above them does. */
const rowsOnly = (shift: LayoutShift): boolean => shift.moved.every((m) => m.startsWith('tr[seq '));

async function violations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { violations: string[] }).violations);
}

async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) });
}

async function close(w: Watched): Promise<void> {
  await w.page.context().close();
}

describeBrowser('debug console', () => {
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe('in Chromium, against the example controller', () => {
    let app: ExampleApp;
    let base: string;

    beforeAll(async () => {
      // A known hot function for the CPU profile: rendering burns 20 ms of CPU per cycle.
      app = await startExample({ replicaId: REPLICA, simulation: { cpuBurnMs: 20, reconcileIntervalMs: 100 } });
      base = `${app.debugUrl!}/debug/`;
    });

    afterAll(async () => {
      await app?.stop();
    });

    it('overview: health with reasons, configuration, rendering, resources, leadership and the last cycle', async () => {
      const w = await open(base);
      await w.page.waitForSelector('.cards');
      const text = await w.page.locator('main').innerText();
      for (const expected of [
        'livez',
        'readyz',
        'ping',
        'config-loaded',
        'config version',
        'rendered',
        'Resources',
        'ingresses',
        'Last reconciliation',
        'leader',
      ])
        expect(text).toContain(expected);
      expect(await w.page.locator('#health-badge').innerText()).toBe('ready');
      await shot(w.page, 'overview');
      expect(await violations(w.page)).toEqual([]);
      expect(w.problems).toEqual([]);
      await close(w);
    });

    it('serves the page with its CSP, and nothing in any view violates it', async () => {
      const w = await open('about:blank');
      const response = await w.page.goto(base);
      expect(response!.headers()['content-security-policy']).toMatch(/default-src 'none'; script-src 'self'/);
      for (const view of ['#/overview', '#/vars?var=config', '#/events', '#/profiles']) {
        await w.page.goto(`${base}${view}`);
        await w.page.waitForSelector('main h1');
        await w.page.waitForTimeout(300);
      }
      expect(await violations(w.page)).toEqual([]);
      expect(w.problems).toEqual([]);
      await close(w);
    });

    it('variables: a JSONPath typed into the box shows the server answer, the same one the copied curl gets', async () => {
      const w = await open(`${base}#/vars?var=leader_election`, { allowStatus: [400, 404] });
      await w.page.waitForSelector('#result .tree');
      await w.page.selectOption('#output', 'text');
      await w.page.fill('#field', '{.identity}');
      await w.page.waitForFunction(() => document.querySelector('#text-answer')?.textContent === 'console-replica-1');
      // The deep link carries the query; opening it shows the same answer without typing.
      const link = await w.page.evaluate(() => location.href);
      expect(decodeURIComponent(link)).toContain('#/vars?var=leader_election&field={.identity}&output=text');
      const curl = await w.page.locator('#curl-command').innerText();
      expect(curl).toMatch(/^curl -gsG '/);
      expect(execSync(curl, { encoding: 'utf8' })).toBe(REPLICA);
      expect(await w.page.locator('#kubectl-command').innerText()).toContain(
        '/proxy/debug/vars/leader_election?field=%7B.identity%7D&output=text',
      );
      const again = await open(link);
      await again.page.waitForFunction(() => document.querySelector('#text-answer')?.textContent === 'console-replica-1');
      await close(again);

      // An invalid template shows the server's own kubectl-style message, inline.
      await w.page.selectOption('#output', 'json');
      await w.page.fill('#field', '{.identity');
      await w.page.waitForSelector('#field-error');
      const served = (await request(`${app.debugUrl!}/debug/vars/leader_election?field=${encodeURIComponent('{.identity')}`)).json<{
        error: string;
      }>();
      expect(await w.page.locator('#field-error').innerText()).toBe(served.error);
      expect(served.error).toMatch(/unclosed action/);
      await w.page.fill('#field', '{.nosuch}');
      await w.page.waitForFunction(() => /nosuch is not found/.test(document.querySelector('#field-error')?.textContent ?? ''));
      await shot(w.page, 'variables');
      expect(await violations(w.page)).toEqual([]);
      expect(w.problems.filter((p) => !/HTTP (400|404)|status of (400|404)/.test(p))).toEqual([]);
      await close(w);
    });

    it('variables: state is not fetched until asked for; rendered shows as numbered lines', async () => {
      const w = await open(`${base}#/vars?var=state`);
      await w.page.waitForSelector('#load-state');
      const wholeState = (): PwRequest[] =>
        w.requests.filter((r) => new URL(r.url()).pathname.endsWith('/debug/vars/state') && !new URL(r.url()).searchParams.has('size'));
      expect(wholeState()).toEqual([]);
      // The size comes first, measured by the server.
      const said = await w.page.locator('#state-size').innerText();
      const bytes = Number(/\((\d+) bytes\)/.exec(said)![1]);
      const served = (await request(`${app.debugUrl!}/debug/vars/state`, { timeoutMs: 30_000 })).body;
      expect(Math.abs(bytes - served.length) / served.length).toBeLessThan(0.2);
      await w.page.click('#load-state');
      await w.page.waitForSelector('#result .tree');
      expect(wholeState()).toHaveLength(1);
      expect(await w.page.locator('#result').innerText()).toContain('snapshot_time');

      await w.page.goto(`${base}#/vars?var=rendered`);
      await w.page.waitForSelector('ol.lines li');
      const lines = await w.page.locator('ol.lines li').count();
      const rendered = (await request(`${app.debugUrl!}/debug/vars/rendered?field=${encodeURIComponent('{.config}')}&output=text`)).text;
      // The configuration changes every cycle; its line count stays within a few lines.
      expect(Math.abs(lines - rendered.split('\n').length)).toBeLessThan(10);
      expect(w.problems).toEqual([]);
      await close(w);
    });

    it('events: the table fills, new events arrive live without moving the page, pause holds them', async () => {
      const w = await open(`${base}#/events`);
      await w.page.waitForSelector('#events-box tbody tr');
      await eventsStatus(w, 'live');
      const lastSeq = async (): Promise<number> =>
        w.page.evaluate(() =>
          Math.max(0, ...[...document.querySelectorAll('#events-box tr[data-seq]')].map((r) => Number(r.getAttribute('data-seq')))),
        );
      const first = await lastSeq();
      await w.page.waitForFunction(
        (seq) => [...document.querySelectorAll('#events-box tr[data-seq]')].some((r) => Number(r.getAttribute('data-seq')) > seq),
        first,
      );
      expect(w.requests.some((r) => r.url().includes('watch=1'))).toBe(true);
      await w.page.waitForTimeout(1500);
      // Once the table holds its 1 000 rows (a loaded machine makes this test slow enough), each
      // event drops the oldest row, and the browser counts every row below it as moved whatever the
      // scroll does; what the reader sees then is checked by "events past the rows the page keeps".
      // Nothing else may move, ever.
      const capped = (await w.page.locator('#events-box tr[data-seq]').count()) >= 1000;
      const shifts = await layoutShifts(w.page);
      expect(shiftScore(capped ? shifts.filter((s) => !rowsOnly(s)) : shifts)).toEqual({ score: expect.any(Number), moved: [] });

      await w.page.click('#pause-events');
      expect(await w.page.locator('#events-status').innerText()).toBe('paused');
      expect(decodeURIComponent(await w.page.evaluate(() => location.hash))).toContain('paused=1');
      const held = await lastSeq();
      await w.page.waitForTimeout(800);
      expect(await lastSeq()).toBe(held);
      await w.page.click('#pause-events');
      // Resuming replays what arrived meanwhile (since=seq), then goes on live.
      await w.page.waitForFunction(
        (seq) => [...document.querySelectorAll('#events-box tr[data-seq]')].some((r) => Number(r.getAttribute('data-seq')) > seq + 2),
        held,
      );
      const seqs = await w.page.evaluate(() =>
        [...document.querySelectorAll('#events-box tr[data-seq]')].map((r) => Number(r.getAttribute('data-seq'))),
      );
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);

      await w.page.fill('#event-type', 'deployment.');
      await w.page.waitForFunction(() => {
        const types = [...document.querySelectorAll('#events-box tr[data-seq] td:nth-child(3)')].map((td) => td.textContent ?? '');
        return types.length > 0 && types.every((t) => t.startsWith('deployment.'));
      });
      await shot(w.page, 'events');
      expect(await violations(w.page)).toEqual([]);
      expect(w.problems).toEqual([]);
      await close(w);
    });

    it('profiles: a 2-second CPU profile shows the hot function by name, and its pprof download reads in go tool pprof', async () => {
      const w = await open(`${base}#/profiles?seconds=2`);
      await w.page.click('#cpu-start');
      await w.page.waitForFunction(() => Number((document.querySelector('#cpu-progress') as HTMLProgressElement | null)?.value) > 0);
      await w.page.waitForSelector('#cpu-flame svg', { timeout: 15_000 });
      expect(await w.page.locator('#cpu-flame svg').textContent()).toContain('renderLoadBalancerConfig');
      expect(await w.page.locator('#cpu-result table').innerText()).toContain('renderLoadBalancerConfig');
      await shot(w.page, 'profiles-cpu');
      // The README's picture (docs/console-profile.jpg) is a copy of this one.
      await w.page.screenshot({ path: path.join(ARTIFACTS, 'profiles-cpu.jpg'), type: 'jpeg', quality: 70 });

      const [download] = await Promise.all([w.page.waitForEvent('download'), w.page.click('#cpu-result >> text=Download pprof')]);
      const file = path.join(ARTIFACTS, 'cpu.pb.gz');
      await download.saveAs(file);
      let go = true;
      try {
        execFileSync(process.env.GO_BIN ?? 'go', ['version'], { stdio: 'ignore' });
      } catch {
        go = false;
      }
      if (go || inCI) {
        const top = execFileSync(process.env.GO_BIN ?? 'go', ['tool', 'pprof', '-top', '-sample_index=cpu', file], {
          encoding: 'utf8',
          env: { ...process.env, HOME: process.env.HOME ?? '/tmp' },
        });
        expect(top).toContain('renderLoadBalancerConfig');
        expect(top).toMatch(/Type: cpu/);
      }
      const [json] = await Promise.all([w.page.waitForEvent('download'), w.page.click('#cpu-result >> text=Download .cpuprofile')]);
      const cpuprofile = JSON.parse(fs.readFileSync((await json.path())!, 'utf8')) as { nodes: unknown[]; samples: unknown[] };
      expect(cpuprofile.nodes.length).toBeGreaterThan(0);

      await w.page.click('#heap-read');
      await w.page.waitForSelector('#heap-flame svg', { timeout: 15_000 });
      expect(await w.page.locator('#heap-status').innerText()).toMatch(/live/);
      const [heapDownload] = await Promise.all([w.page.waitForEvent('download'), w.page.click('#heap-result >> text=Download pprof')]);
      const heapFile = path.join(ARTIFACTS, 'heap.pb.gz');
      await heapDownload.saveAs(heapFile);
      if (go || inCI) {
        const top = execFileSync(process.env.GO_BIN ?? 'go', ['tool', 'pprof', '-top', heapFile], {
          encoding: 'utf8',
          env: { ...process.env, HOME: process.env.HOME ?? '/tmp' },
        });
        expect(top).toMatch(/Type: inuse_space/);
      }
      await w.page.fill('#trace-seconds', '1');
      const [trace] = await Promise.all([w.page.waitForEvent('download'), w.page.click('#trace-record')]);
      const events = (JSON.parse(fs.readFileSync((await trace.path())!, 'utf8')) as { traceEvents: unknown[] }).traceEvents;
      expect(events.length).toBeGreaterThan(0);
      await w.page.click('#text-block');
      await w.page.waitForFunction(() => /p99/.test(document.querySelector('#text-profile')?.textContent ?? ''));
      await w.page.click('#text-goroutine');
      await w.page.waitForFunction(() => /TCP|tcp|Timeout|timer/i.test(document.querySelector('#text-profile')?.textContent ?? ''));
      await shot(w.page, 'profiles');
      expect(await violations(w.page)).toEqual([]);
      expect(w.problems).toEqual([]);
      await close(w);
    });

    it("profiles: the CPU profile filters by cycle, and a cycle's end in the events links to its samples", async () => {
      const w = await open(`${base}#/profiles?seconds=2`);
      await w.page.click('#cpu-start');
      await w.page.waitForSelector('#cpu-cycle', { timeout: 15_000 });
      // The selector lists the cycles labelled in the profile, most samples first.
      const id = await w.page.locator('#cpu-cycle option').nth(1).getAttribute('value');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const all = await w.page.locator('#cpu-status').innerText();
      await w.page.selectOption('#cpu-cycle', id!);
      await w.page.waitForFunction((cycle) => (document.querySelector('#cpu-status')?.textContent ?? '').includes(`in cycle ${cycle}`), id);
      expect(await w.page.locator('#cpu-status').innerText()).not.toEqual(all);
      expect(w.page.url()).toContain(`cycle=${id!}`);

      await w.page.goto(`${base}#/events?correlation_id=${id!}`);
      const link = w.page.locator('a.cycle-profile');
      await link.first().waitFor({ timeout: 10_000 });
      await link.first().click();
      await w.page.waitForFunction((cycle) => (document.querySelector('#cpu-status')?.textContent ?? '').includes(`in cycle ${cycle}`), id);
      expect(await w.page.locator('#cpu-cycle').inputValue()).toBe(id);
      expect(await violations(w.page)).toEqual([]);
      expect(w.problems).toEqual([]);
      await close(w);
    });

    it('profiles: a profile already running is explained (503 with Retry-After), and Cancel stops the one the page started', async () => {
      const w = await open(`${base}#/profiles?seconds=5`, { allowStatus: [503] });
      await w.page.waitForSelector('#cpu-start');
      const cpuProfiling = async (): Promise<boolean> =>
        (await request(`${app.debugUrl!}/debug/pprof/?format=json`)).json<{ cpu: { inProgress: boolean } }>().cpu.inProgress;
      const busy = request(`${app.debugUrl!}/debug/pprof/profile?seconds=2`, { timeoutMs: 10_000 });
      await eventually(cpuProfiling, { what: 'the other CPU profile to start' });
      await w.page.click('#cpu-start');
      await w.page.waitForFunction(() => /Another CPU profile is running/.test(document.querySelector('#cpu-status')?.textContent ?? ''));
      await busy;

      await w.page.click('#cpu-start');
      await w.page.waitForFunction(() => /profiling/.test(document.querySelector('#cpu-status')?.textContent ?? ''));
      await w.page.click('#cpu-cancel');
      await w.page.waitForFunction(() => /cancelled/.test(document.querySelector('#cpu-status')?.textContent ?? ''));
      // The server saw the page hang up and stopped profiling: a new profile may start at once.
      const idle = async (): Promise<boolean> => !(await cpuProfiling());
      expect(await eventually(idle, { what: 'the profiler to stop after the page hung up', intervalMs: 100 })).toBe(true);
      expect(await violations(w.page)).toEqual([]);
      expect(w.problems.filter((p) => !/503/.test(p))).toEqual([]);
      await close(w);
    });

    it('is usable in a narrow window and from the keyboard', async () => {
      const w = await open(`${base}#/overview`, { width: 390, height: 800 });
      await w.page.waitForSelector('.cards');
      for (const view of ['#/overview', '#/vars?var=config', '#/events', '#/profiles']) {
        await w.page.goto(`${base}${view}`);
        await w.page.waitForSelector('main h1');
        await w.page.waitForTimeout(300);
        expect(await w.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      }
      await shot(w.page, 'narrow-profiles');
      await w.page.goto(`${base}#/overview`);
      await w.page.waitForSelector('.cards');
      await w.page.keyboard.press('Tab');
      expect(await w.page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
      await w.page.keyboard.press('Tab');
      await w.page.keyboard.press('Tab');
      expect(await w.page.evaluate(() => document.activeElement?.textContent)).toBe('Variables');
      await w.page.keyboard.press('Enter');
      await w.page.waitForSelector('#field');
      expect(await w.page.evaluate(() => location.hash)).toMatch(/^#\/vars/);
      expect(w.problems).toEqual([]);
      await close(w);
    });
  });

  describe('with hostile values from the host', () => {
    const XSS = '<img src=x onerror="document.title=\'pwned\'">';
    let server: ReturnType<express.Express['listen']>;
    let router: ReturnType<typeof createIntrospectionRouter>;
    let url: string;
    let state: ReturnType<typeof createIntrospectionState>;
    // A proxy in front of some controllers cuts streaming responses: the page must fall back to polling.
    let watchBlocked = false;

    beforeAll(async () => {
      state = createIntrospectionState();
      state.setConfig({ templates: { [`${XSS}.cfg`]: `<script>document.title='pwned'</script>` }, watched_resources: [] }, XSS);
      state.setRendered(`${XSS}\n`.repeat(30_000));
      state.setResourceCounts({ [XSS]: 1 });
      state.publishVar('evil', () => ({
        [XSS]: [XSS, { __proto__: XSS, constructor: XSS }],
        deep: JSON.parse('['.repeat(500) + ']'.repeat(500)) as unknown,
      }));
      state.publishEvent(`x.${XSS}`, XSS);
      router = createIntrospectionRouter(state, { pprof: false });
      const app = express();
      app.use((req, res, next) => {
        if (watchBlocked && req.url.includes('watch=1')) res.status(404).json({ error: 'streaming is not supported here' });
        else next();
      });
      app.use(router);
      server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/debug/`;
    });

    afterAll(async () => {
      await router.close();
      await new Promise((resolve) => server.close(resolve));
    });

    it('events: without a watch stream, the page polls ?since= and new events still appear', async () => {
      watchBlocked = true;
      const w = await open(`${url}#/events`, { allowStatus: [404] });
      await eventsStatus(w, 'live (polling)');
      state.publishEvent('deployment.completed', 'polled-event-1');
      await w.page.waitForFunction(() => /polled-event-1/.test(document.querySelector('#events-box')?.textContent ?? ''), undefined, {
        timeout: 10_000,
      });
      expect(w.requests.some((r) => /since=\d+/.test(r.url()) && !r.url().includes('watch=1'))).toBe(true);
      expect(w.problems.filter((p) => !/404/.test(p))).toEqual([]);
      watchBlocked = false;
      await close(w);
    });

    it('shows markup from the host as text in every view, and nothing runs', async () => {
      const w = await open(url);
      const dialogs: string[] = [];
      w.page.on('dialog', (d) => {
        dialogs.push(d.message());
        void d.dismiss();
      });
      await w.page.waitForSelector('.cards');
      expect(await w.page.locator('main').innerText()).toContain(XSS);
      for (const view of [
        '#/vars?var=evil',
        '#/vars?var=config',
        '#/vars?var=rendered',
        '#/events',
        `#/vars?var=${encodeURIComponent(XSS)}&field=${encodeURIComponent(XSS)}`,
      ]) {
        await w.page.goto(`${url}${view}`);
        await w.page.waitForSelector('main h1');
        await w.page.waitForTimeout(500);
        expect(await w.page.locator('main img, main script').count()).toBe(0);
      }
      await w.page.goto(`${url}#/vars?var=evil`);
      await w.page.waitForSelector('#result .tree');
      // Strings show as JSON (quoted, escaped), as the server sent them.
      expect(await w.page.locator('#result').innerText()).toContain(JSON.stringify(XSS));
      await w.page.goto(`${url}#/events`);
      await w.page.waitForSelector('#events-box tr[data-seq]');
      expect(await w.page.locator('#events-box').innerText()).toContain(XSS);
      expect(await w.page.title()).toBe('Controller debug console');
      expect(dialogs).toEqual([]);
      expect(await violations(w.page)).toEqual([]);
      expect(w.problems.filter((p) => !/HTTP 40[04]|status of 40[04]/.test(p))).toEqual([]);
      await close(w);
    });
  });

  describe('events past the rows the page keeps', () => {
    it('drops the oldest rows without moving what is on screen, following the stream or scrolled up to read', async () => {
      const state = createIntrospectionState({ eventCapacity: 5000 });
      // Ready, as a host is once its configuration is loaded (the header's badge asks /readyz).
      state.setConfig({ templates: {}, watched_resources: [] }, '');
      const router = createIntrospectionRouter(state, { pprof: false });
      const served = await listen(express().use(router));
      const publish = (count: number, tag: string): void => {
        for (let i = 0; i < count; i++) state.publishEvent('load.row', `${tag}-${i}`);
      };
      const rows = (): Promise<number> => w.page.locator('#events-box tbody tr[data-seq]').count();
      const shown = (text: string): Promise<unknown> =>
        w.page.waitForFunction((t) => (document.querySelector('#events-box')?.textContent ?? '').includes(t), text);
      const atEnd = (): Promise<unknown> =>
        w.page.waitForFunction(() => {
          const box = document.querySelector('#events-box')!;
          return box.scrollHeight - box.scrollTop - box.clientHeight < 2;
        });
      const w = await open(`${served.origin}/debug/#/events`);
      try {
        await eventsStatus(w, 'live');
        publish(1100, 'fill');
        await shown('fill-1099');
        await atEnd();
        expect(await rows()).toBe(1000);

        // Following: each burst ends with the newest row in view at the bottom, the oldest dropped.
        const before = (await layoutShifts(w.page)).length;
        for (let burst = 0; burst < 5; burst++) {
          publish(60, `follow${burst}`);
          await shown(`follow${burst}-59`);
          await atEnd();
          const newestInView = await w.page.evaluate(() => {
            const box = document.querySelector('#events-box')!.getBoundingClientRect();
            const last = [...document.querySelectorAll('#events-box tr[data-seq]')].pop()!.getBoundingClientRect();
            return last.top >= box.top && last.bottom <= box.bottom + 1;
          });
          expect(newestInView).toBe(true);
        }
        expect(await rows()).toBe(1000);

        // Scrolled up to read: the row being read stays where it is on screen while rows are dropped above it.
        const anchor = await w.page.evaluate(() => {
          const box = document.querySelector('#events-box')!;
          box.scrollTop = box.scrollHeight / 2;
          const top = box.getBoundingClientRect().top + 40;
          const row = [...box.querySelectorAll('tr[data-seq]')].find((r) => r.getBoundingClientRect().top >= top)!;
          return { seq: row.getAttribute('data-seq')!, top: row.getBoundingClientRect().top };
        });
        for (let burst = 0; burst < 4; burst++) {
          publish(50, `read${burst}`);
          await shown(`read${burst}-49`);
          const top = await w.page.evaluate(
            (seq) => document.querySelector(`#events-box tr[data-seq="${seq}"]`)!.getBoundingClientRect().top,
            anchor.seq,
          );
          expect(Math.abs(top - anchor.top)).toBeLessThan(1);
        }
        expect(await rows()).toBe(1000);
        // Only rows moved, in the browser's accounting: the header, the filters and the box stayed put.
        const shifts = (await layoutShifts(w.page)).slice(before);
        expect(shiftScore(shifts.filter((shift) => !rowsOnly(shift)))).toEqual({ score: expect.any(Number), moved: [] });
        expect(w.problems).toEqual([]);
      } finally {
        await close(w);
        await router.close();
        await served.close();
      }
    });
  });

  describe('under a mount prefix, behind the access guard', () => {
    let app: ExampleApp;

    beforeAll(async () => {
      app = await startExample({ debugPathPrefix: '/ops', env: { DEBUG_TOKEN: TOKEN } });
    });

    afterAll(async () => {
      await app?.stop();
    });

    it('asks for the token once, keeps it for the tab, sends it on every data request under the prefix', async () => {
      const w = await open(`${app.debugUrl!}/ops/debug`, { allowStatus: [401] });
      // /ops/debug redirected to /ops/debug/, and the page asks for the token.
      expect(w.page.url()).toBe(`${app.debugUrl!}/ops/debug/`);
      await w.page.waitForSelector('#token-dialog[open]');
      await w.page.fill('#token-input', 'wrong-token-wrong-token');
      await w.page.keyboard.press('Enter');
      await w.page.waitForFunction(() => /refused/.test(document.querySelector('#token-error')?.textContent ?? ''));
      await w.page.fill('#token-input', TOKEN);
      await w.page.click('#token-ok');
      await w.page.waitForSelector('.cards');
      expect(await w.page.locator('main').innerText()).toContain('config version');
      expect(await w.page.evaluate(() => sessionStorage.getItem('controller-introspection.token'))).toBe(TOKEN);

      await w.page.goto(`${app.debugUrl!}/ops/debug/#/vars?var=resources`);
      await w.page.waitForSelector('#result .tree');
      expect(await w.page.locator('#token-dialog[open]').count()).toBe(0);
      const data = w.requests.filter((r) => /\/(debug\/(vars|pprof)|livez|readyz)/.test(new URL(r.url()).pathname));
      expect(data.length).toBeGreaterThan(5);
      for (const r of data) expect(new URL(r.url()).pathname.startsWith('/ops/')).toBe(true);
      const debugData = data.filter((r) => new URL(r.url()).pathname.startsWith('/ops/debug/'));
      const withToken = await Promise.all(debugData.map(async (r) => (await r.allHeaders()).authorization));
      // Only the requests sent before the token was typed went without it.
      expect(withToken.filter((h) => h === `Bearer ${TOKEN}`).length).toBeGreaterThan(debugData.length / 2);
      expect(await violations(w.page)).toEqual([]);
      expect(w.problems.filter((p) => !/401/.test(p))).toEqual([]);
      await shot(w.page, 'guarded-prefix');
      await close(w);
    });
  });
});
