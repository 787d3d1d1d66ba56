import { ApiError, debugUrl, getJson, readWithProgress, request, serverPath } from '../api';
import { copyButton, formatBytes, h, isAbort, sleep } from '../dom';
import { jsonTree } from '../json-tree';
import { curlCommand, kubectlCommand } from './commands';
import { setViewParams } from './view';
import { errorMessage } from '../../lib/util/error-message';

const DEBOUNCE_MS = 300;

/** The variable's URL as the server sees it, mount prefix included, with `query`. */
function varUrl(name: string, query: Record<string, string | undefined> = {}): string {
  return debugUrl(`vars/${encodeURIComponent(name)}`, query);
}

/** The same request as curl, against the origin the page came from. */
function curlFor(name: string, field: string, output: string): string {
  return curlCommand(`${location.origin}${serverPath(varUrl(name))}`, field, output);
}

/** The same request through the API server's pod proxy, on the port the page came from. */
function kubectlFor(name: string, field: string, output: string): string {
  const port = location.port || (location.protocol === 'https:' ? '443' : '80');
  return kubectlCommand(serverPath(varUrl(name, { field, output: output === 'text' ? 'text' : undefined })), port);
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
  const view = new VarsView(varsLayout(root, params, vars, name), name, signal);
  await view.evaluate();
  // The view stays until another is opened; its requests end with the signal.
  await sleep(2 ** 31 - 1, signal);
}

function commandBox(code: HTMLElement, label: string): HTMLElement {
  return h(
    'div',
    { class: 'command' },
    code,
    copyButton(label, () => code.textContent ?? ''),
  );
}

/** The elements of the view, built once. */
function varsLayout(root: HTMLElement, params: URLSearchParams, vars: readonly string[], name: string) {
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
        h('div', { class: 'commands' }, commandBox(curl, 'Copy curl command'), commandBox(kubectl, 'Copy kubectl command')),
      ),
    ),
  );
  return { field, output, status, result, curl, kubectl };
}

class VarsView {
  private inFlight: AbortController | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly ui: ReturnType<typeof varsLayout>,
    private readonly name: string,
    signal: AbortSignal,
  ) {
    signal.addEventListener('abort', () => this.inFlight?.abort());
    ui.field.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.evaluate(), DEBOUNCE_MS);
    });
    ui.field.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        clearTimeout(this.timer);
        void this.evaluate();
      }
    });
    ui.output.addEventListener('change', () => void this.evaluate());
  }

  /** Shows what the box asks for, cancelling the previous request. */
  async evaluate(): Promise<void> {
    this.inFlight?.abort();
    const controller = new AbortController();
    this.inFlight = controller;
    const { field, output, curl, kubectl, status, result } = this.ui;
    const template = field.value.trim();
    const mode = output.value;
    setViewParams('vars', { var: this.name, field: template, output: mode === 'text' ? 'text' : undefined });
    curl.textContent = curlFor(this.name, template, mode);
    kubectl.textContent = kubectlFor(this.name, template, mode);
    status.textContent = 'evaluating…';
    try {
      await this.show(template, mode, controller.signal);
    } catch (err) {
      if (isAbort(err)) return;
      status.textContent = err instanceof ApiError ? `HTTP ${err.status}` : 'failed';
      result.replaceChildren(h('p', { class: 'error', role: 'alert', id: 'field-error' }, errorMessage(err)));
    }
  }

  private async show(template: string, mode: string, abort: AbortSignal): Promise<void> {
    if (template === '' && mode === 'json' && this.name === 'state') await this.offerState(abort);
    else if (template === '' && mode === 'json' && this.name === 'rendered') await this.showRendered(abort);
    else if (template === '' && mode === 'text') {
      this.ui.result.replaceChildren(h('p', { class: 'muted' }, 'Text output needs a template, for example {.version}.'));
      this.ui.status.textContent = '';
    } else await this.showAnswer(template, mode, abort);
  }

  private progress(bytes: number): void {
    this.ui.status.textContent = `${formatBytes(bytes)} received…`;
  }

  private async showAnswer(template: string, mode: string, abort: AbortSignal): Promise<void> {
    const started = performance.now();
    const response = await request(
      debugUrl(`vars/${encodeURIComponent(this.name)}`, { field: template, output: mode === 'text' ? 'text' : undefined }),
      { signal: abort },
    );
    const body = await readWithProgress(response, (bytes) => this.progress(bytes));
    const text = new TextDecoder().decode(body);
    this.ui.status.textContent = `${formatBytes(body.byteLength)} in ${Math.round(performance.now() - started)} ms`;
    if (mode === 'text') this.ui.result.replaceChildren(h('pre', { class: 'text', id: 'text-answer' }, text));
    else this.ui.result.replaceChildren(jsonTree(JSON.parse(text), 2));
  }

  private async showRendered(abort: AbortSignal): Promise<void> {
    const [timestamp, size] = await Promise.all([
      getJson(debugUrl('vars/rendered', { field: '{.timestamp}' }), abort).catch(() => undefined),
      getJson(debugUrl('vars/rendered', { field: '{.size}' }), abort).catch(() => undefined),
    ]);
    const response = await request(debugUrl('vars/rendered', { field: '{.config}', output: 'text' }), { signal: abort });
    const body = await readWithProgress(response, (bytes) => this.progress(bytes));
    this.ui.status.textContent = `rendered ${String(timestamp ?? '')}, ${formatBytes(Number(size ?? body.byteLength))}`;
    this.ui.result.replaceChildren(numberedLines(new TextDecoder().decode(body)));
  }

  /** The state can be tens of megabytes: its size first, and the body only when asked for. */
  private async offerState(abort: AbortSignal): Promise<void> {
    const { result } = this.ui;
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
    this.ui.status.textContent = '';
    await new Promise<void>((resolve, reject) => {
      abort.addEventListener('abort', () => reject(abort.reason), { once: true });
      load.addEventListener('click', () => resolve(), { once: true });
    });
    const cancel = h('button', { type: 'button' }, 'Cancel');
    cancel.addEventListener('click', () => this.inFlight?.abort());
    result.replaceChildren(h('p', null, 'Loading state… ', cancel));
    await this.showAnswer('', 'json', abort);
  }
}
