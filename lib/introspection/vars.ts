import { Router, type Request, type Response } from 'express';
import { HttpError, sendError, sendThrown } from '../http/errors';
import { queryInteger, queryString } from '../http/query';
import { sendJson } from '../http/send-json';
import { compileTemplate, selectJson, selectText, templateShape, type CompiledTemplate, type JsonPathLimits } from '../jsonpath';
import { UnknownVariableError, type IntrospectionState } from '../state/types';
import { checkSelectionSize } from './selection-budget';
import { TemplateCache } from './template-cache';
import { setNoStoreHeaders } from '../http/headers';
import { watchClientGone } from '../http/client-gone';

/** Options of the `/debug/vars` endpoints. */
export interface VarsOptions {
  /** Bodies estimated above this size are streamed in time slices. */
  streamThresholdBytes: number;
  /** Limits of `?field=` templates. */
  jsonPathLimits: JsonPathLimits;
  /** The largest `?limit=` accepted for `events` and `state`. */
  maxEventLimit: number;
}

/** Names longer than this are echoed back truncated in error messages. */
const ECHO_LIMIT = 64;

function echo(text: string): string {
  return JSON.stringify(text.length > ECHO_LIMIT ? `${text.slice(0, ECHO_LIMIT)}…` : text);
}

type OutputMode = 'json' | 'text';

function outputMode(req: Request): OutputMode {
  const output = queryString(req, 'output');
  if (output === undefined || output === 'json') return 'json';
  if (output === 'text') return 'text';
  throw new HttpError(400, `query parameter "output" must be "json" or "text", got ${echo(output)}`);
}

/**
 * `/debug/vars` and `/debug/vars/<name>`: every variable, whole or narrowed by `?field=` (kubectl
 * JSONPath). The variable is read through the state interface only; selection walks just the
 * path asked for, and whole bodies above the stream threshold are streamed.
 */
export function createVarsRouter(state: IntrospectionState, options: VarsOptions): Router {
  const router = Router();
  const templates = new TemplateCache(256, (source) => compileTemplate(source, options.jsonPathLimits));

  async function answer(req: Request, res: Response, value: unknown, template: CompiledTemplate | undefined, mode: OutputMode): Promise<void> {
    if (template === undefined) {
      if (mode === 'text') throw new HttpError(400, 'output=text needs a field template, for example ?field={.version}&output=text');
      await sendJson(req, res, value, options);
      return;
    }
    if (mode === 'text') {
      const text = selectText(template, value, options.jsonPathLimits);
      res.status(200);
      setNoStoreHeaders(res);
      res.type('text/plain; charset=utf-8').send(text);
      return;
    }
    const selection = selectJson(template, value, options.jsonPathLimits);
    const selected = selection.kind === 'value' ? selection.value : selection.text;
    // A singular path selects one subtree of the variable, never more than the whole variable,
    // which is served (streamed) without a limit; text is bounded by the engine. Only a
    // multi-valued selection can be larger than its source (overlapping `..` subtrees, a union
    // naming one key many times), so only that is measured against the limit.
    if (templateShape(template) !== 'multiple') {
      await sendJson(req, res, selected, options);
      return;
    }
    const gone = watchClientGone(res);
    try {
      await checkSelectionSize(selected, options.jsonPathLimits.maxOutputBytes, gone.controller.signal);
    } finally {
      gone.release();
    }
    if (gone.controller.signal.aborted) return;
    await sendJson(req, res, selected, options);
  }

  function parseRequest(req: Request): { template: CompiledTemplate | undefined; mode: OutputMode } {
    const field = queryString(req, 'field');
    const mode = outputMode(req);
    return { template: field === undefined ? undefined : templates.get(field), mode };
  }

  router.get('/debug/vars', async function listVars(req: Request, res: Response): Promise<void> {
    try {
      const { template, mode } = parseRequest(req);
      await answer(req, res, { vars: state.listVars() }, template, mode);
    } catch (err) {
      sendThrown(res, err);
    }
  });

  router.get('/debug/vars/:name', async function readVariable(req: Request, res: Response): Promise<void> {
    try {
      const name = String(req.params['name']);
      const known = state.listVars();
      if (!known.includes(name)) {
        sendError(res, 404, `unknown variable ${echo(name)}; known variables: ${known.join(', ')}`);
        return;
      }
      const { template, mode } = parseRequest(req);
      const limit = queryInteger(req, 'limit', { min: 0, max: options.maxEventLimit });
      const reading = await state.readVar(name, limit === undefined ? {} : { limit });
      if (!reading.ok) {
        sendError(res, 503, reading.message, { 'Retry-After': '1' });
        return;
      }
      await answer(req, res, reading.value, template, mode);
    } catch (err) {
      if (err instanceof UnknownVariableError) {
        sendError(res, 404, err.message);
        return;
      }
      sendThrown(res, err);
    }
  });

  return router;
}
