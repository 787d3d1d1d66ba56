import { Router, type Request, type Response } from 'express';
import { HttpError, handle } from '../http/errors';
import { queryFlag, queryHas, queryInteger, queryString } from '../http/query';
import { SizeHints, sendJson } from '../http/send-json';
import { sendTextPieces } from '../http/send-text';
import { JsonStreamAbortError, measureJson } from '../json-stream/index';
import {
  compileTemplate,
  selectJsonSliced,
  selectTextSliced,
  templateShape,
  type CompiledTemplate,
  type JsonPathLimits,
} from '../jsonpath';
import { UnknownVariableError, type EventQuery, type IntrospectionStateReader } from '../state/types';
import { createWorkLimiter, type WorkLimiter } from '../http/work-limiter';
import { EventWatches } from './event-watch';
import { checkSelectionSize } from './selection-budget';
import { TemplateCache } from './template-cache';
import { stillThere, watchClientGone } from '../http/client-gone';
import { cutText, MAX_ECHOED_MESSAGE, quoteText } from '../util/cut-text';
import { EXACT_ROUTING } from '../http/request-path';

/** Options of the `/debug/vars` endpoints. */
export interface VarsOptions {
  /** Bodies expected to take longer than this (ms) to serialise are streamed in time slices; 0 streams every body. */
  atOnceBudgetMs: number;
  /** Limits of `?field=` templates. */
  jsonPathLimits: JsonPathLimits;
  /** The largest `?limit=` accepted for `events` and `state`. */
  maxEventLimit: number;
  /** Heartbeat interval of event watches, in milliseconds. */
  watchHeartbeatMs: number;
  /** How many event watches may be open at once; more answer `503`. */
  maxWatchers: number;
  /** The most one event watch holds unsent, in bytes. */
  watchBufferBytes: number;
  /** How many variable reads may run at once, and wait; more answer `503`. */
  maxConcurrentReads: number;
  maxQueuedReads: number;
  /** Lengths of earlier answers; a router makes its own when not given. */
  sizeHints?: SizeHints;
}

/** The vars router and a way to end its event watches. */
export interface VarsRouter {
  readonly router: Router;
  /** Ends every open event watch. */
  closeWatches(): void;
}

/** Query parameters that only `events` understands. */
const EVENT_PARAMETERS = ['type', 'correlation_id', 'since', 'watch'] as const;
const MAX_FILTER_LENGTH = 256;

/** Values longer than this are echoed back truncated in error messages. */
const ECHO_LIMIT = 64;

/** `json` and `text` answer the value; `size` answers how many bytes the `json` answer would be. */
type OutputMode = 'json' | 'text' | 'size';

function outputMode(req: Request): OutputMode {
  const output = queryString(req, 'output');
  if (queryFlag(req, 'size')) {
    if (output === 'text') throw new HttpError(400, 'query parameter "size" measures JSON answers; it does not combine with output=text');
    return 'size';
  }
  if (output === undefined || output === 'json') return 'json';
  if (output === 'text') return 'text';
  throw new HttpError(400, `query parameter "output" must be "json" or "text", got ${quoteText(output, ECHO_LIMIT)}`);
}

/** What the vars handlers share: the state they read and the router's resolved options and limits. */
interface VarsContext {
  readonly state: IntrospectionStateReader;
  readonly options: VarsOptions;
  readonly watches: EventWatches;
  readonly reads: WorkLimiter;
  readonly templates: TemplateCache<CompiledTemplate>;
}

/**
 * `?size=1`: the exact byte length of the JSON answer, found by serialising it in the same time
 * slices as a streamed dump into a counter instead of the socket. A client can learn that
 * `state` is 80 MB before asking for it (the debug console does).
 */
async function sendSize(req: Request, res: Response, value: unknown, options: VarsOptions): Promise<void> {
  const gone = watchClientGone(res);
  try {
    const { bytes } = await measureJson(value, { signal: gone.controller.signal });
    await sendJson(req, res, { bytes }, options);
  } catch (err) {
    if (err instanceof JsonStreamAbortError) return;
    throw err;
  } finally {
    gone.release();
  }
}

async function deliver(req: Request, res: Response, value: unknown, mode: OutputMode, options: VarsOptions): Promise<void> {
  if (mode === 'size') await sendSize(req, res, value, options);
  else await sendJson(req, res, value, options);
}

/** Answers `value`, narrowed by `template` when there is one, in `mode`. */
async function answer(req: Request, res: Response, value: unknown, request: VarsRequest, options: VarsOptions): Promise<void> {
  const { template, mode } = request;
  if (template === undefined) {
    if (mode === 'text') throw new HttpError(400, 'output=text needs a field template, for example ?field={.version}&output=text');
    await deliver(req, res, value, mode, options);
    return;
  }
  // Selecting (printing 10 MB of text, measuring a large selection) stops when the client leaves.
  const gone = watchClientGone(res);
  const { signal } = gone.controller;
  let selected: unknown;
  let pieces: string[] | undefined;
  try {
    if (mode === 'text') {
      pieces = await selectTextSliced(template, value, options.jsonPathLimits, signal);
    } else {
      const selection = await selectJsonSliced(template, value, options.jsonPathLimits, signal);
      selected = selection.kind === 'value' ? selection.value : selection.text;
      // A singular path selects one subtree of the variable, never more than the whole variable,
      // which is served (streamed) without a limit; text is bounded by the engine. Only a
      // multi-valued selection can be larger than its source (overlapping `..` subtrees, a union
      // naming one key many times), so only that is measured against the limit.
      if (templateShape(template) === 'multiple') await checkSelectionSize(selected, options.jsonPathLimits.maxOutputBytes, signal);
    }
  } catch (err) {
    // Stopped for a client that left: there is nobody to answer.
    if (signal.aborted) return;
    throw err;
  } finally {
    gone.release();
  }
  if (signal.aborted) return;
  if (pieces !== undefined) await sendTextPieces(req, res, pieces);
  else await deliver(req, res, selected, mode, options);
}

/** The event parameters of a request for `events`. */
interface EventRequest {
  readonly query: EventQuery;
  readonly since: number | undefined;
  readonly watch: boolean;
}

/** `?field=` (compiled once per distinct template) and the output mode. */
interface VarsRequest {
  readonly template: CompiledTemplate | undefined;
  readonly mode: OutputMode;
}

function parseRequest(ctx: VarsContext, req: Request): VarsRequest {
  const field = queryString(req, 'field');
  const mode = outputMode(req);
  return { template: field === undefined ? undefined : ctx.templates.get(field), mode };
}

/** `events?watch=1`: a live stream of events instead of one answer. */
function startWatch(ctx: VarsContext, req: Request, res: Response, events: EventRequest, refused: boolean): void {
  if (refused) {
    throw new HttpError(
      400,
      'query parameters "field", "limit" and "size" do not apply to ?watch=1; filter with type, correlation_id and since',
    );
  }
  if (ctx.watches.size >= ctx.options.maxWatchers) {
    throw new HttpError(503, `too many event watches open (${ctx.options.maxWatchers}); try again later`, { 'Retry-After': '5' });
  }
  ctx.watches.serve(req, res, events.query, events.since);
}

/**
 * Waits for a turn to read: heavy reads take turns, so that probes keep answering whatever the
 * debug traffic. The turn ends when the answer is complete or the client has gone. Answers whether
 * the client is still there: one that left (even before the turn was asked for) gets no turn.
 */
async function takeTurn(ctx: VarsContext, res: Response): Promise<boolean> {
  const gone = watchClientGone(res);
  // A client that asked and hung up at once is seen before its variable is read and serialised.
  if (!(await stillThere(res, gone))) {
    gone.release();
    return false;
  }
  const free = await ctx.reads.acquire(gone.controller.signal);
  gone.release();
  if (gone.controller.signal.aborted) {
    // A response that closed before the watch began emits no 'close' to free the slot on.
    free?.();
    return false;
  }
  if (free === undefined) {
    const { maxConcurrentReads, maxQueuedReads } = ctx.options;
    throw new HttpError(
      503,
      `too many variable reads at once (${maxConcurrentReads} running, ${maxQueuedReads} waiting); try again shortly`,
      {
        'Retry-After': '1',
      },
    );
  }
  res.once('close', free);
  return true;
}

/** `/debug/vars/<name>`: one variable, whole, narrowed, measured, or (events) watched. */
async function readVariable(ctx: VarsContext, req: Request, res: Response): Promise<void> {
  const name = String(req.params['name']);
  const known = ctx.state.listVars();
  if (!known.includes(name)) throw new UnknownVariableError(name, known);
  const request = parseRequest(ctx, req);
  const limit = queryInteger(req, 'limit', { min: 0, max: ctx.options.maxEventLimit });
  const events = eventParameters(req, name);
  if (events?.watch) {
    startWatch(ctx, req, res, events, request.template !== undefined || limit !== undefined || request.mode === 'size');
    return;
  }
  const readOptions = {
    ...(limit === undefined ? {} : { limit }),
    ...(events ? { events: { ...events.query, ...(events.since === undefined ? {} : { since: events.since }) } } : {}),
  };
  if (!(await takeTurn(ctx, res))) return;
  const reading = await ctx.state.readVar(name, readOptions);
  // The message may come from a host's own state implementation: echoed as any thrown message is.
  if (!reading.ok) throw new HttpError(503, cutText(reading.message, MAX_ECHOED_MESSAGE), { 'Retry-After': '1' });
  await answer(req, res, reading.value, request, ctx.options);
}

/**
 * `/debug/vars` and `/debug/vars/<name>`: every variable, whole or narrowed by `?field=` (kubectl
 * JSONPath). The variable is read through the state interface only; selection walks just the
 * path asked for, and whole bodies that would take longer than the at-once budget are streamed.
 */
export function createVarsRouter(state: IntrospectionStateReader, givenOptions: VarsOptions): VarsRouter {
  const options: VarsOptions = { ...givenOptions, sizeHints: givenOptions.sizeHints ?? new SizeHints() };
  const ctx: VarsContext = {
    state,
    options,
    watches: new EventWatches(state, { heartbeatMs: options.watchHeartbeatMs, bufferBytes: options.watchBufferBytes }),
    reads: createWorkLimiter(options.maxConcurrentReads, options.maxQueuedReads),
    templates: new TemplateCache(256, (source) => compileTemplate(source, options.jsonPathLimits)),
  };
  const router = Router(EXACT_ROUTING);
  router.get(
    '/debug/vars',
    handle(async function listVars(req: Request, res: Response): Promise<void> {
      await answer(req, res, { vars: state.listVars() }, parseRequest(ctx, req), options);
    }),
  );
  router.get(
    '/debug/vars/:name',
    handle(function readVar(req: Request, res: Response): Promise<void> {
      return readVariable(ctx, req, res);
    }),
  );
  return {
    router,
    closeWatches() {
      ctx.watches.closeAll();
    },
  };
}

/**
 * `?type=`, `?correlation_id=`, `?since=` and `?watch=1` on `events` (or on a request that
 * resumes with `Last-Event-ID`); a `400` naming the parameter anywhere else.
 */
function eventParameters(req: Request, name: string): EventRequest | undefined {
  if (name !== 'events') {
    const given = EVENT_PARAMETERS.find((p) => queryHas(req, p));
    if (given !== undefined) throw new HttpError(400, `query parameter "${given}" applies only to /debug/vars/events`);
    return undefined;
  }
  const query: EventQuery = {};
  const type = queryString(req, 'type');
  if (type !== undefined) query.type = boundedFilter('type', type);
  const correlationId = queryString(req, 'correlation_id');
  if (correlationId !== undefined) query.correlationId = boundedFilter('correlation_id', correlationId);
  const watchText = queryString(req, 'watch');
  if (watchText !== undefined && watchText !== '1' && watchText !== 'true' && watchText !== '0' && watchText !== 'false') {
    throw new HttpError(400, `query parameter "watch" must be 1 or 0, got ${quoteText(watchText, ECHO_LIMIT)}`);
  }
  const watch = watchText === '1' || watchText === 'true';
  let since = queryInteger(req, 'since', { min: 0, max: Number.MAX_SAFE_INTEGER });
  const lastEventId = req.headers['last-event-id'];
  if (watch && typeof lastEventId === 'string' && lastEventId !== '') {
    // EventSource reconnects with the URL it started with and the last id it saw: the id is newer.
    if (!/^\d{1,15}$/.test(lastEventId))
      throw new HttpError(400, `header Last-Event-ID must be an event seq, got ${quoteText(lastEventId, ECHO_LIMIT)}`);
    since = Number(lastEventId);
  }
  return { query, since, watch };
}

function boundedFilter(name: string, value: string): string {
  if (value === '' || value.length > MAX_FILTER_LENGTH)
    throw new HttpError(400, `query parameter "${name}" must be 1 to ${MAX_FILTER_LENGTH} characters`);
  return value;
}
