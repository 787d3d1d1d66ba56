/**
 * Every request the page makes: relative to the page (so a mount prefix such as `/ops` is kept),
 * with the bearer token when the debug port asks for one, and with the server's JSON error message
 * turned into an {@link ApiError}.
 */

const TOKEN_KEY = 'controller-introspection.token';

/** An answer other than the ones the caller accepts: the status and the server's message. */
export class ApiError extends Error {
  readonly status: number;
  /** The `Retry-After` header, for `409` and `503`. */
  readonly retryAfter: string | null;
  constructor(status: number, message: string, retryAfter: string | null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.retryAfter = retryAfter;
  }
}

/** `/…/debug/`: the page's own directory. */
const debugBase = new URL('.', location.href);

/** A URL under `/debug/` (`vars/config`), with query parameters; empty values are left out. */
export function debugUrl(path: string, query: Record<string, string | number | undefined> = {}): string {
  const url = new URL(path, debugBase);
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
  return url.href;
}

/** A URL beside `/debug/` (`livez`), where the health endpoints are. */
export function rootUrl(path: string, query: Record<string, string | undefined> = {}): string {
  return debugUrl(`../${path}`, query);
}

/** The path the server sees for a page-relative URL, prefix included: for commands to copy. */
export function serverPath(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

let pendingToken: Promise<void> | undefined;

/** Asks for the token once, however many requests were refused at the same time. */
function askForToken(rejected: boolean): Promise<void> {
  pendingToken ??= new Promise<void>((resolve) => {
    const dialog = document.getElementById('token-dialog') as HTMLDialogElement;
    const input = document.getElementById('token-input') as HTMLInputElement;
    const error = document.getElementById('token-error') as HTMLElement;
    const ok = document.getElementById('token-ok') as HTMLButtonElement;
    error.hidden = !rejected;
    error.textContent = rejected ? 'The server refused that token.' : '';
    input.value = '';
    const submit = (): void => {
      if (input.value.trim() === '') return;
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      ok.removeEventListener('click', submit);
      input.removeEventListener('keydown', onKey);
      dialog.close();
      pendingToken = undefined;
      resolve();
    };
    const onKey = (event: KeyboardEvent): void => {
      if (event.key === 'Enter') submit();
    };
    ok.addEventListener('click', submit);
    input.addEventListener('keydown', onKey);
    dialog.showModal();
    input.focus();
  });
  return pendingToken;
}

/** Options of {@link request}. */
export interface RequestOptions {
  signal?: AbortSignal;
  /** Statuses answered as they are instead of as an {@link ApiError} (health checks answer 503 with text). */
  accept?: readonly number[];
  headers?: Record<string, string>;
}

/** Fetches, asking for the token on `401` (and again if it was wrong), and throws on errors. */
export async function request(url: string, options: RequestOptions = {}): Promise<Response> {
  for (let attempt = 0; ; attempt += 1) {
    const headers: Record<string, string> = { ...options.headers };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch(url, { headers, signal: options.signal, cache: 'no-store', credentials: 'omit' });
    if (response.status === 401 && attempt < 5) {
      await response.body?.cancel();
      await askForToken(token !== null);
      continue;
    }
    if (response.ok || options.accept?.includes(response.status)) return response;
    throw await errorOf(response);
  }
}

async function errorOf(response: Response): Promise<ApiError> {
  let message = `${response.status} ${response.statusText}`;
  try {
    const text = await response.text();
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string') message = body.error;
  } catch {
    // Not our JSON error (a proxy's page): the status line says enough.
  }
  return new ApiError(response.status, message, response.headers.get('Retry-After'));
}

/** GET and parse JSON. */
export async function getJson<T = unknown>(url: string, signal?: AbortSignal): Promise<T> {
  const response = await request(url, { signal });
  return (await response.json()) as T;
}

/** GET as text. */
export async function getText(url: string, signal?: AbortSignal): Promise<string> {
  return (await request(url, { signal })).text();
}

/**
 * Reads a body while counting its bytes, for large variables: the page shows how much has
 * arrived and the user can cancel (aborting the signal) before it is all there.
 */
export async function readWithProgress(response: Response, onBytes: (bytes: number) => void): Promise<Uint8Array> {
  const reader = response.body!.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    total += value.byteLength;
    onBytes(total);
  }
  const all = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.byteLength;
  }
  return all;
}
