import { HttpError } from '../http/errors';
import type { StepRef } from './ast';

/** What went wrong: the template does not parse, its evaluation failed, or it went over a limit. */
export type JsonPathErrorKind = 'parse' | 'execute' | 'limit';

/** The HTTP statuses a JSONPath failure maps to. */
export type JsonPathErrorStatus = 400 | 404 | 413;

/**
 * The only error the engine throws for anything a template or its data can cause. It is an
 * {@link HttpError}, so `sendThrown` answers it with its status and message as they are.
 *
 * `400`: the template does not parse, or asks for something the data's types do not allow
 * (indexing an object, filtering a string, comparing a string with a number…).
 * `404`: a key that is not there, an index out of range, or nothing selected where one value was asked for.
 * `413`: the template or the work it asks for is over a {@link JsonPathLimits} ceiling.
 */
export class JsonPathError extends HttpError {
  declare readonly status: JsonPathErrorStatus;
  /** Which phase failed. */
  readonly kind: JsonPathErrorKind;
  /** The template as given. */
  readonly template: string;
  /** The failure alone, without the template and step that the message adds around it. */
  readonly detail: string;
  constructor(status: JsonPathErrorStatus, kind: JsonPathErrorKind, template: string, detail: string, message: string) {
    super(status, message);
    this.name = 'JsonPathError';
    this.kind = kind;
    this.template = template;
    this.detail = detail;
  }
}

const MAX_QUOTED = 200;

/** Cuts user text echoed unquoted in a message (kubectl's `<key> is not found`) to a readable length. */
export function cutForMessage(text: string): string {
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
}

/**
 * Quotes user text for an error message: readable (backslashes and quotes stay as typed), but
 * control characters are made visible and long text is cut, so a message stays one short line.
 */
export function quoteForMessage(text: string, keep: 'start' | 'end' = 'start'): string {
  let cut = text;
  if (text.length > MAX_QUOTED) cut = keep === 'start' ? `${text.slice(0, MAX_QUOTED)}…` : `…${text.slice(-MAX_QUOTED)}`;
  return `"${cut.replace(/[\u0000-\u001f\u007f]/g, (c) => {
    switch (c) {
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default:
        return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    }
  })}"`;
}

/** Describes a step for a message: the path typed so far (its end matters most, so a long one keeps its end). */
export function formatStep(step: StepRef): string {
  const here = quoteForMessage(step.source.slice(step.start, step.end).trim(), 'end');
  return step.outer === undefined ? here : `${here} inside ${formatStep(step.outer)}`;
}

/** A template that cannot be parsed (`400`). */
export function parseError(template: string, offset: number, detail: string): JsonPathError {
  const near = template.slice(offset, offset + 40);
  const where = offset >= template.length ? 'at the end' : `at character ${offset + 1} (${quoteForMessage(near)})`;
  return new JsonPathError(400, 'parse', template, detail, `invalid JSONPath template ${quoteForMessage(template)}: ${detail} ${where}`);
}

/** A template over one of the limits. */
export function limitError(status: 400 | 413, template: string, detail: string): JsonPathError {
  return new JsonPathError(status, 'limit', template, detail, `JSONPath template ${quoteForMessage(template)} is too costly: ${detail}`);
}

/** A failure while evaluating one step of a parsed template. */
export function executeError(status: 400 | 404, template: string, step: StepRef | undefined, detail: string): JsonPathError {
  const at = step === undefined ? '' : ` at ${formatStep(step)}`;
  return new JsonPathError(status, 'execute', template, detail, `JSONPath template ${quoteForMessage(template)} failed${at}: ${detail}`);
}
