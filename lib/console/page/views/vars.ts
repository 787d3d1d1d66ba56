import { ApiError, debugUrl, getJson, readWithProgress, request, serverPath } from '../api';
import { copyButton, formatBytes, h, isAbort, sleep } from '../dom';
import { jsonTree } from '../json-tree';
import { setViewParams } from './view';

const DEBOUNCE_MS = 300;

/** Single-quotes for a POSIX shell. */
function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The same request as curl (`-G --data-urlencode`: no hand-encoding, no globbing of `{}`). */
function curlCommand(name: string, field: string, output: string): string {
  const base = `${location.origin}${serverPath(debugUrl(`vars/${encodeURIComponent(name)}`))}`;
  const parts = ['curl -sG', shellQuote(base)];
  if (field) parts.push('--data-urlencode', shellQuote(`field=${field}`));
  if (output === 'text') parts.push('--data-urlencode', 'output=text');
  return parts.join(' ');
}

/** The same request through the API server's pod proxy, no port-forward needed. */
function kubectlCommand(name: string, field: string, output: string): string {
  const path = serverPath(debugUrl(`vars/${encodeURIComponent(name)}`, { field, output: output === 'text' ? 'text' : undefined }));
  const port = location.port || (location.protocol === 'https:' ? '443' : '80');
  return `kubectl get --raw ${shellQuote(`/api/v1/namespaces/$NAMESPACE/pods/$POD:${port}/proxy${path}`)}`;
}

function numberedLines(text: string): HTMLElement {
  const list = h('ol', { class: 'lines' });
  // Line elements for the whole text would be slow for a 15 MB configuration: the first 20 000.
  const lines = text.split('\n');
  for (const line of lines.slice(0, 20_000)) list.appendChild(h('li', null, line));
  return lines.length > 20_000
    ? h('div', null, list, h('p', { class: 'muted' }, `… ${lines.length - 20_000} more lines; use the JSONPath box or curl for the rest.`))
    : list;
}

/** Every variable, a server-side JSONPath box, and the command that gives the same answer. */
export async function renderVars(root: HTMLElement, params: URLSearchParams, signal: AbortSignal): Promise<void> {
  const { vars } = await getJson<{ vars: string[] }>(debugUrl('vars'), signal);
  let name = params.get('var') ?? '';
  if (!vars.includes(name)) name = vars.includes('config') ? 'config' : (vars[0] ?? '');
  const field = h('input', {
    class: 'field mono',
    type: 'text',
    id: 'field',
    'aria-label': 'JSONPath template (kubectl syntax)',
    placeholder: '{.config.templates}  —  kubectl JSONPath, evaluated by the server',
    spellcheck: 'false',
    autocomplete: 'off',
    value: params.get('field') ?? '',
  });
  const output = h(
    'select',
    { id: 'output', 'aria-label': 'Output format' },
    h('option', { value: 'json' }, 'JSON'),
    h('option', { value: 'text' }, 'text'),
  );
  output.value = params.get('output') === 'text' ? 'text' : 'json';
  const status = h('span', { class: 'muted', role: 'status' });
  const result = h('div', { class: 'result', id: 'result', 'aria-live': 'polite' });
  const curl = h('code', { id: 'curl-command' });
  const kubectl = h('code', { id: 'kubectl-command' });
  const list = h('ul', { class: 'varlist' });
  for (const v of vars) {
    list.appendChild(
      h('li', null, h('a', { href: `#/vars?var=${encodeURIComponent(v)}`, 'aria-current': v === name ? 'true' : undefined }, v)),
    );
  }
  root.replaceChildren(
    h('h1', null, 'Variables'),
    h(
      'div',
      { class: 'layout' },
      h('nav', { 'aria-label': 'Variables' }, list),
      h(
        'section',
        null,
        h('h2', null, h('code', null, new URL(debugUrl(`vars/${encodeURIComponent(name)}`)).pathname)),
        h('div', { class: 'row' }, field, output, status),
        result,
        h(
          'div',
          { class: 'commands' },
          h(
            'div',
            { class: 'command' },
            curl,
            copyButton('Copy curl command', () => curl.textContent ?? ''),
          ),
          h(
            'div',
            { class: 'command' },
            kubectl,
            copyButton('Copy kubectl command', () => kubectl.textContent ?? ''),
          ),
        ),
      ),
    ),
  );

  let inFlight: AbortController | undefined;
  signal.addEventListener('abort', () => inFlight?.abort());

  async function evaluate(): Promise<void> {
    inFlight?.abort();
    const controller = new AbortController();
    inFlight = controller;
    const template = field.value.trim();
    const mode = output.value;
    setViewParams('vars', { var: name, field: template, output: mode === 'text' ? 'text' : undefined });
    curl.textContent = curlCommand(name, template, mode);
    kubectl.textContent = kubectlCommand(name, template, mode);
    status.textContent = 'evaluating…';
    try {
      if (template === '' && mode === 'json' && name === 'state') await offerState(controller.signal);
      else if (template === '' && mode === 'json' && name === 'rendered') await showRendered(controller.signal);
      else if (template === '' && mode === 'text') {
        result.replaceChildren(h('p', { class: 'muted' }, 'Text output needs a template, for example {.version}.'));
        status.textContent = '';
      } else await showAnswer(template, mode, controller.signal);
    } catch (err) {
      if (isAbort(err)) return;
      status.textContent = err instanceof ApiError ? `HTTP ${err.status}` : 'failed';
      result.replaceChildren(
        h('p', { class: 'error', role: 'alert', id: 'field-error' }, err instanceof Error ? err.message : String(err)),
      );
    }
  }

  async function showAnswer(template: string, mode: string, abort: AbortSignal): Promise<void> {
    const started = performance.now();
    const response = await request(
      debugUrl(`vars/${encodeURIComponent(name)}`, { field: template, output: mode === 'text' ? 'text' : undefined }),
      { signal: abort },
    );
    const body = await readWithProgress(response, (bytes) => (status.textContent = `${formatBytes(bytes)} received…`));
    const text = new TextDecoder().decode(body);
    status.textContent = `${formatBytes(body.byteLength)} in ${Math.round(performance.now() - started)} ms`;
    if (mode === 'text') result.replaceChildren(h('pre', { class: 'text', id: 'text-answer' }, text));
    else result.replaceChildren(jsonTree(JSON.parse(text), 2));
  }

  async function showRendered(abort: AbortSignal): Promise<void> {
    const [timestamp, size] = await Promise.all([
      getJson(debugUrl('vars/rendered', { field: '{.timestamp}' }), abort).catch(() => undefined),
      getJson(debugUrl('vars/rendered', { field: '{.size}' }), abort).catch(() => undefined),
    ]);
    const response = await request(debugUrl('vars/rendered', { field: '{.config}', output: 'text' }), { signal: abort });
    const body = await readWithProgress(response, (bytes) => (status.textContent = `${formatBytes(bytes)} received…`));
    status.textContent = `rendered ${String(timestamp ?? '')}, ${formatBytes(Number(size ?? body.byteLength))}`;
    result.replaceChildren(numberedLines(new TextDecoder().decode(body)));
  }

  async function offerState(abort: AbortSignal): Promise<void> {
    // The server measures the answer (in slices, like a dump) before anything large is sent.
    result.replaceChildren(h('p', { class: 'muted' }, 'Measuring state…'));
    const { bytes } = await getJson<{ bytes: number }>(debugUrl('vars/state', { size: 1 }), abort);
    const load = h('button', { type: 'button', class: 'primary', id: 'load-state' }, 'Load the whole state');
    result.replaceChildren(
      h(
        'p',
        { id: 'state-size' },
        `state is every variable in one body: ${formatBytes(bytes)} (${bytes} bytes) now. It is not loaded until you ask; a JSONPath such as `,
        h('code', null, '{.resources}'),
        ' fetches only a part.',
      ),
      load,
    );
    status.textContent = '';
    await new Promise<void>((resolve, reject) => {
      abort.addEventListener('abort', () => reject(abort.reason), { once: true });
      load.addEventListener('click', () => resolve(), { once: true });
    });
    const cancel = h('button', { type: 'button' }, 'Cancel');
    cancel.addEventListener('click', () => inFlight?.abort());
    result.replaceChildren(h('p', null, 'Loading state… ', cancel));
    await showAnswer('', 'json', abort);
  }

  let timer: ReturnType<typeof setTimeout> | undefined;
  field.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => void evaluate(), DEBOUNCE_MS);
  });
  field.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') {
      clearTimeout(timer);
      void evaluate();
    }
  });
  output.addEventListener('change', () => void evaluate());
  await evaluate();
  // The view stays until another is opened; its requests end with the signal.
  await sleep(2 ** 31 - 1, signal);
}
