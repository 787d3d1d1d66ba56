import { ApiError, debugUrl, request } from '../api';
import { copyButton, h, isAbort, sleep, type Child } from '../dom';
import { shellQuote } from './commands';
import { setViewParams } from './view';
import type { FindingSeverity, FleetReport } from '../../lib/fleet/report';
import { errorMessage } from '../../lib/util/error-message';

/**
 * The fleet page: what `GET /debug/fleet` answers (lib/fleet/report.ts), findings first, then one
 * card per replica. Everything in the report came from peers and is untrusted: it is read field by
 * field with its type checked, drawn as text only (`h` never parses markup), and an address
 * becomes a link only when it parses as an http(s) URL, rebuilt from its parts.
 */

const AUTO_MS = 10_000;
/** Longer strings are cut: the server bounds them too, this keeps a hostile peer from drawing a wall. */
const MAX_TEXT = 2000;

type Loose = Record<string, unknown>;

function record(value: unknown): Loose | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Loose) : null;
}
function text(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}…` : value;
}
function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}
function bool(value: unknown): boolean | null {
  return typeof value === 'boolean' ? value : null;
}
function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

const SEVERITY_CLASS: Record<FindingSeverity, string> = { critical: 'bad', warning: 'warn', info: 'info' };
const STATUS_CLASS: Record<FleetReport['status'], string> = { healthy: 'ok', degraded: 'warn', failing: 'bad' };
const SEVERITY_RANK: Record<FindingSeverity, number> = { critical: 3, warning: 2, info: 1 };

function severityOf(value: unknown): FindingSeverity | null {
  return value === 'critical' || value === 'warning' || value === 'info' ? value : null;
}

function badge(label: string, kind: string): HTMLElement {
  return h('span', { class: `badge ${kind}` }, label);
}

function yesNo(value: boolean | null, yes: string, no: string): HTMLElement {
  if (value === null) return badge('unknown', '');
  return badge(value ? yes : no, value ? 'ok' : 'bad');
}

/** `3d 4h`, `12m 5s`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const d = Math.floor(s / 86400);
  const hr = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d}d ${hr}h`;
  if (hr > 0) return `${hr}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/** An ISO time as it was sent, and how long ago (or ahead) it is: `… (12s ago)`. */
function when(iso: string | null): string | null {
  if (iso === null) return null;
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return iso;
  const delta = (Date.now() - at) / 1000;
  return `${iso} (${delta >= 0 ? `${formatDuration(delta)} ago` : `in ${formatDuration(-delta)}`})`;
}

/** The path of this console (`/debug/`, `/ops/debug/`): a replica of the same Deployment serves its own there. */
function consolePath(): string {
  return new URL(debugUrl('.')).pathname;
}

/**
 * The replica's own console, on the origin of its address: only for an `http:` or `https:` URL
 * with a host and no credentials. Built from the parsed origin (never the address's text), so a
 * `javascript:` address, or one with a path, query or fragment of its own, cannot shape the link.
 */
export function replicaConsoleUrl(address: unknown, path = consolePath()): URL | null {
  if (typeof address !== 'string' || address.length > 2048) return null;
  let parsed: URL;
  try {
    parsed = new URL(address);
  } catch {
    return null;
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.hostname === '') return null;
  if (parsed.username !== '' || parsed.password !== '') return null;
  return new URL(path, parsed.origin);
}

/** A pod name as the API server allows it (a DNS-1123 subdomain). */
const POD_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
/** Control characters: a pasted command holding one would act on the terminal. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** `kubectl port-forward pod/<name> 8080`, quoted for a POSIX shell unless it is a plain name; null for a name no shell line can carry. */
export function portForwardCommand(pod: string, port: string, namespace: string | null): string | null {
  if (CONTROL.test(pod) || (namespace !== null && CONTROL.test(namespace))) return null;
  const target = POD_NAME.test(pod) ? `pod/${pod}` : shellQuote(`pod/${pod}`);
  const ns = namespace === null ? '' : ` -n ${POD_NAME.test(namespace) ? namespace : shellQuote(namespace)}`;
  return `kubectl port-forward${ns} ${target} ${port}`;
}

function leadingValue(leading: boolean | null): Child {
  if (leading === null) return h('span', { class: 'muted' }, 'no leader election published');
  return badge(leading ? 'leader' : 'follower', leading ? 'ok' : '');
}

function kv(pairs: Array<[string, Child]>): HTMLElement {
  const dl = h('dl', { class: 'kv' });
  for (const [key, value] of pairs) dl.append(h('dt', null, key), h('dd', null, value ?? '—'));
  return dl;
}

function findingsSection(findings: unknown[]): HTMLElement {
  if (findings.length === 0) return h('p', { id: 'fleet-findings', class: 'muted' }, 'No findings.');
  const ul = h('ul', { id: 'fleet-findings', class: 'findings' });
  for (const item of findings) {
    const finding = record(item);
    if (!finding) continue;
    const severity = severityOf(finding.severity);
    const replicas = list(finding.replicas)
      .map(text)
      .filter((r): r is string => r !== null);
    ul.append(
      h(
        'li',
        { class: 'finding', 'data-severity': severity ?? 'unknown' },
        badge(severity ?? 'unknown', severity ? SEVERITY_CLASS[severity] : ''),
        ' ',
        h('code', null, text(finding.kind) ?? '?'),
        ' ',
        h('span', { class: 'message' }, text(finding.message) ?? ''),
        replicas.length > 0 ? h('span', { class: 'muted' }, ' — replicas: ', replicas.join(', ')) : null,
      ),
    );
  }
  return ul;
}

function cycleValue(value: unknown, link: URL | null): Child {
  const cycle = record(value);
  if (!cycle) return null;
  const outcome = text(cycle.outcome) ?? 'unknown';
  const took = num(cycle.took_ms);
  const id = text(cycle.correlation_id);
  const failed = text(cycle.failed_phase);
  let idNode: Child = null;
  if (id !== null) {
    if (link) {
      const events = new URL(link);
      events.hash = `/events?correlation_id=${encodeURIComponent(id)}`;
      idNode = h('a', { href: events.href, class: 'mono' }, id);
    } else idNode = h('span', { class: 'mono' }, id);
  }
  return h(
    'span',
    null,
    badge(outcome, outcome === 'succeeded' ? 'ok' : outcome === 'failed' ? 'bad' : 'warn'),
    failed ? ` in ${failed}` : '',
    h('br'),
    when(text(cycle.ended) ?? text(cycle.started)) ?? 'not ended',
    took !== null ? `, took ${took} ms` : '',
    idNode ? h('br') : null,
    idNode,
  );
}

function checksValue(ready: boolean | null, checks: unknown[]): Child {
  const failing = checks.map(record).filter((c): c is Loose => c !== null);
  return h(
    'span',
    null,
    yesNo(ready, 'ready', 'not ready'),
    failing.length > 0
      ? h(
          'ul',
          { class: 'checks' },
          ...failing.map((c) => {
            const reason = text(c.reason);
            return h('li', null, '✗ ', h('strong', null, text(c.name) ?? '?'), reason ? ` ${reason}` : '');
          }),
        )
      : null,
  );
}

function replicaCard(
  item: unknown,
  concerns: Map<string, FindingSeverity>,
  observer: string | null,
  namespace: string | null,
): HTMLElement | null {
  const replica = record(item);
  if (!replica) return null;
  const pod = text(replica.pod) ?? '?';
  const address = text(replica.address);
  const link = replicaConsoleUrl(replica.address);
  const reachable = replica.reachable === true;
  const worst = concerns.get(pod);
  const cycles = record(replica.cycles);
  const total = num(cycles?.total);
  const failedCycles = num(cycles?.failed);
  const uptime = num(replica.uptime_seconds);
  const subscribers = num(replica.event_subscribers);
  const readMs = num(replica.read_ms);
  const notAfter = text(replica.certificate_not_after);
  // Local 8080 to the replica's debug port, so its console is at localhost:8080 whatever port it listens on.
  const remote = link ? link.port || (link.protocol === 'https:' ? '443' : '80') : '8080';
  const command = portForwardCommand(pod, remote === '8080' ? '8080' : `8080:${remote}`, namespace);
  const local = `${link?.protocol ?? 'http:'}//localhost:8080${consolePath()}`;
  const commandCode = command ? h('code', null, command) : null;

  const rows: Array<[string, Child]> = [
    ['address', address],
    ['phase', text(replica.phase)],
  ];
  if (!reachable) rows.push(['unreachable', h('span', { class: 'error' }, text(replica.error) ?? 'not read')]);
  else
    rows.push(
      ['ready', checksValue(bool(replica.ready), list(replica.failing_checks))],
      ['leading', leadingValue(bool(replica.leading))],
      ['holder', text(replica.holder)],
      ['config version', text(replica.config_version) ? h('span', { class: 'mono' }, text(replica.config_version)) : null],
      ['last cycle', cycleValue(replica.last_cycle, link)],
      ['cycles failed', total !== null ? `${failedCycles ?? '?'} of ${total}` : null],
      ['uptime', uptime !== null ? formatDuration(uptime) : null],
      ['event subscribers', subscribers],
      ['caches fresh', bool(replica.caches_fresh) === null ? null : yesNo(bool(replica.caches_fresh), 'fresh', 'stale')],
      ['certificate expires', notAfter !== null ? when(notAfter) : 'plain HTTP'],
    );
  rows.push(['read in', readMs !== null ? `${readMs} ms` : null]);

  return h(
    'section',
    { class: `card replica${worst ? ` concern-${SEVERITY_CLASS[worst]}` : ''}`, 'data-pod': pod },
    h(
      'h2',
      null,
      h('span', { class: 'pod' }, pod),
      ' ',
      reachable ? null : badge('unreachable', 'bad'),
      pod === observer ? h('span', { class: 'muted' }, ' (this replica)') : null,
    ),
    kv(rows),
    h(
      'p',
      { class: 'links' },
      link
        ? h('a', { href: link.href, class: 'console-link', rel: 'noopener noreferrer' }, 'Open its console')
        : h('span', { class: 'muted' }, 'no console link: the address is not a plain http(s) URL'),
    ),
    commandCode
      ? h(
          'div',
          { class: 'command' },
          commandCode,
          copyButton(`Copy the port-forward command for ${pod}`, () => commandCode.textContent ?? ''),
        )
      : h('p', { class: 'muted' }, 'no port-forward command: the pod name holds control characters'),
    commandCode ? h('p', { class: 'muted' }, 'then open ', h('code', null, local)) : null,
  );
}

/** Draws a report; throws when the answer is not one. */
function drawReport(body: unknown): HTMLElement {
  const report = record(body);
  if (!report || report.kind !== 'FleetReport') throw new Error('the answer of /debug/fleet is not a FleetReport');
  const status = report.status === 'healthy' || report.status === 'degraded' || report.status === 'failing' ? report.status : null;
  const findings = list(report.findings);
  const replicas = list(report.replicas);
  const source = record(report.source);
  const namespace = text(source?.namespace);
  const selector = text(source?.selector);
  const observer = text(report.observer);
  const took = num(report.took_ms);

  // The worst severity of the findings that name each replica, to mark its card.
  const concerns = new Map<string, FindingSeverity>();
  for (const item of findings) {
    const finding = record(item);
    const severity = severityOf(finding?.severity);
    if (!finding || !severity) continue;
    for (const pod of list(finding.replicas)) {
      if (typeof pod !== 'string') continue;
      const seen = concerns.get(pod);
      if (!seen || SEVERITY_RANK[seen] < SEVERITY_RANK[severity]) concerns.set(pod, severity);
    }
  }

  const cards = h('div', { class: 'cards', id: 'fleet-replicas' });
  for (const item of replicas) {
    const card = replicaCard(item, concerns, observer, namespace);
    if (card) cards.append(card);
  }
  return h(
    'div',
    { id: 'fleet-report' },
    h(
      'p',
      { id: 'fleet-summary' },
      badge(status ?? 'unknown', status ? STATUS_CLASS[status] : ''),
      ` ${replicas.length} ${replicas.length === 1 ? 'replica' : 'replicas'}, ${findings.length} ${findings.length === 1 ? 'finding' : 'findings'}`,
      h(
        'span',
        { class: 'muted' },
        ` · gathered ${text(report.gathered) ?? '?'}${took !== null ? ` in ${took} ms` : ''}${observer !== null ? ` by ${observer}` : ''}`,
        namespace !== null ? ` · namespace ${namespace}` : '',
        selector !== null ? `, selector ${selector}` : '',
      ),
    ),
    h('h2', null, 'Findings'),
    findingsSection(findings),
    h('h2', null, 'Replicas'),
    cards,
  );
}

function notMounted(): HTMLElement {
  return h(
    'div',
    { id: 'fleet-missing' },
    h('p', { role: 'alert' }, 'No fleet view mounted on this replica.'),
    h(
      'p',
      { class: 'muted' },
      'A host mounts one beside its introspection router with ',
      h('code', null, 'createFleetView'),
      '; it answers ',
      h('code', null, 'GET /debug/fleet'),
      ' with every replica of the Deployment. See docs/fleet.md.',
    ),
  );
}

/** The fleet: findings, then the replicas side by side; refreshed on demand or every 10 s. */
export async function renderFleet(root: HTMLElement, params: URLSearchParams, signal: AbortSignal): Promise<void> {
  const refresh = h('button', { type: 'button', id: 'fleet-refresh' }, 'Refresh');
  const auto = h('input', { type: 'checkbox', id: 'fleet-auto' });
  auto.checked = params.get('auto') === '1';
  const status = h('span', { class: 'muted', role: 'status', id: 'fleet-status' });
  const result = h('div', { id: 'fleet-result' }, h('p', { class: 'muted' }, 'Gathering the fleet…'));
  root.replaceChildren(
    h('h1', null, 'Fleet'),
    h('div', { class: 'row' }, refresh, h('label', null, auto, ` Auto-refresh every ${AUTO_MS / 1000} s`), status),
    result,
  );

  // One load at a time; a click while waiting starts the next at once.
  let wake: (() => void) | undefined;
  refresh.addEventListener('click', () => wake?.());
  auto.addEventListener('change', () => {
    setViewParams('fleet', { auto: auto.checked ? '1' : undefined });
    if (auto.checked) wake?.();
  });

  for (;;) {
    refresh.disabled = true;
    status.textContent = 'gathering…';
    try {
      const response = await request(debugUrl('fleet'), { signal, accept: [404] });
      if (response.status === 404) {
        await response.body?.cancel();
        result.replaceChildren(notMounted());
        status.textContent = '';
      } else {
        result.replaceChildren(drawReport(await response.json()));
        status.textContent = `updated ${new Date().toLocaleTimeString()}`;
      }
    } catch (err) {
      if (isAbort(err) || signal.aborted) throw err;
      const message = errorMessage(err);
      const hadReport = result.querySelector('#fleet-report') !== null;
      // A failed refresh keeps the last report on screen and says why above it.
      if (hadReport) status.textContent = `refresh failed: ${message}`;
      else {
        status.textContent = '';
        result.replaceChildren(
          h(
            'p',
            { class: 'error', role: 'alert', id: 'fleet-error' },
            err instanceof ApiError ? `${message} (HTTP ${err.status})` : message,
          ),
        );
      }
    }
    refresh.disabled = false;
    await new Promise<void>((resolve, reject) => {
      const done = (): void => {
        wake = undefined;
        stop.abort();
        resolve();
      };
      const stop = new AbortController();
      wake = done;
      signal.addEventListener('abort', () => reject(signal.reason), { once: true, signal: stop.signal });
      const tick = (): void => {
        sleep(AUTO_MS, stop.signal).then(
          () => (auto.checked ? done() : tick()),
          () => undefined,
        );
      };
      tick();
    });
  }
}
