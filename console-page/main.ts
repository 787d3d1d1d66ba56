import './style.css';
import { rootUrl, request } from './api';
import { isAbort } from './dom';
import { renderOverview } from './views/overview';
import { renderVars } from './views/vars';
import { renderEvents } from './views/events';
import { renderFleet } from './views/fleet';
import type { View } from './views/view';
import { errorMessage } from '../lib/util/error-message';

// The profiles view brings the flame graph library: loaded only when opened.
const VIEWS: Record<string, () => Promise<View>> = {
  overview: async () => renderOverview,
  vars: async () => renderVars,
  events: async () => renderEvents,
  profiles: async () => (await import('./views/profiles')).renderProfiles,
  fleet: async () => renderFleet,
};

const main = document.getElementById('view') as HTMLElement;
let current: AbortController | undefined;

/** `#/vars?var=config&field=…` → the view's name and its parameters: every view is a deep link. */
function route(): { view: string; params: URLSearchParams } {
  const match = /^#\/([a-z]+)(?:\?(.*))?$/.exec(location.hash);
  const view = match && VIEWS[match[1]!] ? match[1]! : 'overview';
  return { view, params: new URLSearchParams(match?.[2] ?? '') };
}

async function show(): Promise<void> {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const { view, params } = route();
  for (const link of document.querySelectorAll<HTMLAnchorElement>('nav a[data-view]')) {
    if (link.dataset.view === view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  main.replaceChildren();
  try {
    await (
      await VIEWS[view]!()
    )(main, params, controller.signal);
  } catch (err) {
    if (isAbort(err) || controller.signal.aborted) return;
    const message = errorMessage(err);
    main.replaceChildren(Object.assign(document.createElement('p'), { className: 'error', textContent: message }));
  }
}

/** The header's badge: is the controller ready? Refreshed every 5 s, whatever view is open. */
async function refreshBadge(): Promise<void> {
  const badge = document.getElementById('health-badge') as HTMLElement;
  try {
    const response = await request(rootUrl('readyz'), { accept: [503] });
    await response.body?.cancel();
    badge.textContent = response.ok ? 'ready' : 'not ready';
    badge.className = `badge ${response.ok ? 'ok' : 'bad'}`;
  } catch {
    badge.textContent = 'unreachable';
    badge.className = 'badge bad';
  }
}

window.addEventListener('hashchange', () => void show());
void show();
void refreshBadge();
setInterval(() => void refreshBadge(), 5000);
