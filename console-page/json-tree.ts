import { h } from './dom';

/** Children drawn at once; more behind a button, so a 100 000-item array opens instantly. */
const PAGE = 200;

function leafClass(value: unknown): string {
  if (typeof value === 'string') return 's';
  if (typeof value === 'number') return 'n';
  if (typeof value === 'boolean') return 'b';
  return 'z';
}

function keyLabel(key: string | number | undefined): Node | null {
  if (key === undefined) return null;
  return h('span', { class: 'key' }, typeof key === 'number' ? `${key}: ` : `${JSON.stringify(key)}: `);
}

/**
 * A collapsible JSON tree of native `<details>` elements (keyboard and screen-reader friendly).
 * Children are built the first time a node is opened, so a large value costs only what is shown.
 */
export function jsonTree(value: unknown, openLevels = 1): HTMLElement {
  return h('div', { class: 'tree' }, node(value, undefined, openLevels));
}

function node(value: unknown, key: string | number | undefined, openLevels: number): HTMLElement {
  if (value === null || typeof value !== 'object') {
    return h('div', { class: 'leaf' }, keyLabel(key), h('span', { class: leafClass(value) }, JSON.stringify(value)));
  }
  const entries: Array<[string | number, unknown]> = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const summary = Array.isArray(value)
    ? `[…] ${entries.length} item${entries.length === 1 ? '' : 's'}`
    : `{…} ${entries.length} key${entries.length === 1 ? '' : 's'}`;
  if (entries.length === 0)
    return h('div', { class: 'leaf' }, keyLabel(key), h('span', { class: 'z' }, Array.isArray(value) ? '[]' : '{}'));
  const details = h('details', null, h('summary', null, keyLabel(key), h('span', { class: 'z' }, summary)));
  let shown = 0;
  const more = h('button', { type: 'button' });
  const showMore = (): void => {
    more.remove();
    const end = Math.min(entries.length, shown + PAGE);
    for (; shown < end; shown += 1) details.appendChild(node(entries[shown]![1], entries[shown]![0], openLevels - 1));
    if (shown < entries.length) {
      more.textContent = `Show ${Math.min(PAGE, entries.length - shown)} more of ${entries.length - shown}`;
      details.appendChild(more);
    }
  };
  more.addEventListener('click', showMore);
  details.addEventListener('toggle', () => {
    if (details.open && shown === 0) showMore();
  });
  if (openLevels > 0) details.open = true;
  return details;
}
