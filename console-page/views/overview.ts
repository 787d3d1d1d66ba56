import { getJson, request, rootUrl, debugUrl } from '../api';
import { h, isAbort, sleep, formatBytes, type Child } from '../dom';
import { errorMessage } from '../../lib/util/error-message';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** `[+]ping ok`, `[-]config-loaded failed: reason`: the verbose health format of the probes. */
function parseChecks(text: string): Check[] {
  const checks: Check[] = [];
  for (const line of text.split('\n')) {
    const match = /^\[([+-])\](\S+) (.*)$/.exec(line);
    if (match) checks.push({ name: match[2]!, ok: match[1] === '+', detail: match[3]! });
  }
  return checks;
}

async function health(path: 'livez' | 'readyz', signal: AbortSignal): Promise<{ ok: boolean; checks: Check[] }> {
  const response = await request(rootUrl(path, { verbose: '1' }), { signal, accept: [500, 503] });
  return { ok: response.ok, checks: parseChecks(await response.text()) };
}

/** A variable narrowed on the server to one field, or `undefined` when it has no such field. */
async function field(name: string, template: string, signal: AbortSignal): Promise<unknown> {
  try {
    return await getJson(debugUrl(`vars/${encodeURIComponent(name)}`, { field: template }), signal);
  } catch (err) {
    if (isAbort(err)) throw err;
    return undefined;
  }
}

function kv(pairs: Array<[string, Child]>): HTMLElement {
  const list = h('dl', { class: 'kv' });
  for (const [key, value] of pairs) list.append(h('dt', null, key), h('dd', null, value ?? '—'));
  return list;
}

function badge(ok: boolean | undefined, yes: string, no: string, unknown = 'unknown'): HTMLElement {
  return h('span', { class: `badge ${ok === undefined ? 'warn' : ok ? 'ok' : 'bad'}` }, ok === undefined ? unknown : ok ? yes : no);
}

function checksCard(title: string, result: { ok: boolean; checks: Check[] }, link: string): HTMLElement {
  return h(
    'section',
    { class: 'card' },
    h('h2', null, `${title} `, badge(result.ok, 'passing', 'failing')),
    h('ul', { class: 'checks' }, ...result.checks.map((c) => h('li', null, c.ok ? '✓ ' : '✗ ', h('strong', null, c.name), ` ${c.detail}`))),
    h('p', { class: 'muted' }, h('a', { href: link }, `/${title}?verbose`)),
  );
}

interface PipelineVar {
  status?: string;
  trigger?: string;
  reason?: string;
  ended?: string;
  duration_ms?: number;
  failed_phase?: string | null;
  correlation_id?: string;
  phases?: Record<string, { status?: string; error?: string | null }>;
  endpoints_failed?: number;
  last_success?: { ended?: string } | null;
}

interface EventRecord {
  seq?: number;
  timestamp: string;
  type: string;
  summary: string;
  correlation_id?: string;
}

function reconciliationCard(pipeline: PipelineVar | undefined, events: EventRecord[] | undefined): HTMLElement {
  if (pipeline && typeof pipeline === 'object' && pipeline.status) {
    const error = pipeline.failed_phase ? pipeline.phases?.[pipeline.failed_phase]?.error : undefined;
    return h(
      'section',
      { class: 'card' },
      h('h2', null, 'Last reconciliation ', badge(pipeline.status === 'succeeded', pipeline.status, pipeline.status)),
      kv([
        ['ended', pipeline.ended],
        ['took', pipeline.duration_ms === undefined ? undefined : `${pipeline.duration_ms} ms`],
        ['trigger', [pipeline.trigger, pipeline.reason].filter(Boolean).join(': ')],
        ['failed phase', pipeline.failed_phase ?? undefined],
        ['error', error ? h('span', { class: 'error' }, error) : undefined],
        ['endpoints failed', pipeline.endpoints_failed],
        ['last success', pipeline.last_success?.ended ?? 'never'],
        [
          'correlation id',
          pipeline.correlation_id
            ? h('a', { href: `#/events?correlation_id=${encodeURIComponent(pipeline.correlation_id)}` }, pipeline.correlation_id)
            : undefined,
        ],
      ]),
      h('p', { class: 'muted' }, h('a', { href: '#/vars?var=pipeline' }, 'pipeline variable')),
    );
  }
  const last = [...(events ?? [])].reverse().find((e) => e.type.startsWith('reconciliation.'));
  return h(
    'section',
    { class: 'card' },
    h('h2', null, 'Last reconciliation'),
    last
      ? kv([
          ['event', last.type],
          ['at', last.timestamp],
          ['summary', last.summary],
        ])
      : h('p', { class: 'muted' }, 'none recorded (no pipeline variable and no reconciliation event)'),
  );
}

interface ControllerFacts {
  uptime: unknown;
  version: unknown;
  updated: unknown;
  renderedSize: unknown;
  renderedAt: unknown;
}

function controllerCard(
  { uptime, version, updated, renderedSize, renderedAt }: ControllerFacts,
  leader: { is_leader?: boolean; holder?: string } | undefined,
): HTMLElement {
  const size = Number(renderedSize);
  return h(
    'section',
    { class: 'card' },
    h('h2', null, 'Controller'),
    kv([
      ['uptime', uptime === undefined ? undefined : String(uptime)],
      [
        'leader',
        leader
          ? h('span', null, badge(leader.is_leader, 'leader', 'follower'), leader.holder ? ` holder ${leader.holder}` : '')
          : h('span', { class: 'muted' }, 'no leader_election variable'),
      ],
      ['config version', version === undefined ? undefined : String(version)],
      ['config updated', updated === undefined ? undefined : String(updated)],
      ['rendered', Number.isFinite(size) && renderedSize !== undefined ? `${formatBytes(size)} (${size} bytes)` : undefined],
      ['rendered at', renderedAt === undefined ? undefined : String(renderedAt)],
    ]),
    h('p', { class: 'muted' }, h('a', { href: '#/vars?var=config' }, 'config'), ' · ', h('a', { href: '#/vars?var=rendered' }, 'rendered')),
  );
}

function resourcesCard(resources: Record<string, number> | undefined): HTMLElement {
  return h(
    'section',
    { class: 'card' },
    h('h2', null, 'Resources'),
    resources && typeof resources === 'object'
      ? kv(Object.entries(resources).map(([k, v]) => [k, String(v)]))
      : h('p', { class: 'muted' }, 'no resources variable'),
  );
}

function moreCard(vars: readonly string[]): HTMLElement {
  return h(
    'section',
    { class: 'card' },
    h('h2', null, 'More'),
    h(
      'ul',
      null,
      h('li', null, h('a', { href: '#/vars' }, 'Variables'), ` (${vars.length}: ${vars.join(', ')})`),
      h('li', null, h('a', { href: '#/events' }, 'Events'), ' live'),
      h('li', null, h('a', { href: '#/profiles' }, 'Profiles'), ': CPU, heap, handles, event-loop delay'),
      h('li', null, h('a', { href: debugUrl('pprof/') }, '/debug/pprof/'), ' (Go-style index)'),
    ),
  );
}

async function draw(root: HTMLElement, signal: AbortSignal): Promise<void> {
  const [live, ready, list] = await Promise.all([
    health('livez', signal),
    health('readyz', signal),
    getJson<{ vars: string[] }>(debugUrl('vars'), signal),
  ]);
  const has = (name: string): boolean => list.vars.includes(name);
  const [uptime, version, updated, renderedSize, renderedAt, resources, leader, pipeline, events] = await Promise.all([
    has('uptime') ? field('uptime', '{.uptime_string}', signal) : undefined,
    field('config', '{.version}', signal),
    field('config', '{.updated}', signal),
    field('rendered', '{.size}', signal),
    field('rendered', '{.timestamp}', signal),
    has('resources') ? getJson<Record<string, number>>(debugUrl('vars/resources'), signal).catch(() => undefined) : undefined,
    has('leader_election')
      ? getJson<{ is_leader?: boolean; holder?: string; identity?: string }>(debugUrl('vars/leader_election'), signal).catch(
          () => undefined,
        )
      : undefined,
    has('pipeline') ? getJson<PipelineVar>(debugUrl('vars/pipeline'), signal).catch(() => undefined) : undefined,
    getJson<EventRecord[]>(debugUrl('vars/events', { limit: 50 }), signal).catch(() => undefined),
  ]);
  const cards = h(
    'div',
    { class: 'cards' },
    checksCard('livez', live, rootUrl('livez', { verbose: '1' })),
    checksCard('readyz', ready, rootUrl('readyz', { verbose: '1' })),
    controllerCard({ uptime, version, updated, renderedSize, renderedAt }, leader),
    reconciliationCard(pipeline, events),
    resourcesCard(resources),
    moreCard(list.vars),
  );
  root.replaceChildren(
    h('h1', null, 'Overview'),
    cards,
    h('p', { class: 'muted' }, `Updated ${new Date().toLocaleTimeString()}; refreshes every 5 s.`),
  );
}

/** Health with reasons, uptime, configuration, rendering, resources, leadership, last cycle. */
export async function renderOverview(root: HTMLElement, _params: URLSearchParams, signal: AbortSignal): Promise<void> {
  root.append(h('h1', null, 'Overview'), h('p', { class: 'muted' }, 'Loading…'));
  for (;;) {
    try {
      await draw(root, signal);
    } catch (err) {
      if (isAbort(err)) throw err;
      // The controller may be restarting: say so and keep trying.
      root.replaceChildren(
        h('h1', null, 'Overview'),
        h('p', { class: 'error', role: 'alert' }, `Cannot read the controller: ${errorMessage(err)}. Retrying every 5 s.`),
      );
    }
    await sleep(5000, signal);
  }
}
