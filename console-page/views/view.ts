/**
 * A view draws itself into `root` from its deep-link parameters. It stops everything it started
 * (polling, streams, profiles) when `signal` aborts, which happens when another view is opened.
 */
export type View = (root: HTMLElement, params: URLSearchParams, signal: AbortSignal) => Promise<void>;

/** Rewrites the address bar's parameters of the current view, so what is on screen can be linked. */
export function setViewParams(view: string, params: Record<string, string | undefined>): void {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') query.set(name, value);
  const text = query.toString();
  history.replaceState(null, '', `#/${view}${text ? `?${text}` : ''}`);
}
