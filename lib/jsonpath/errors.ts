import { cutText } from '../util/cut-text';
import type { StepRef } from './ast';

/**
 * What went wrong, in the engine's terms (callers choose what each means to them; the vars router
 * answers `parse`, `type` and `depth` with 400, `not-found` with 404 and `limit` with 413):
 * - `parse`: the template does not parse;
 * - `type`: the template asks for something the data's types do not allow (indexing an object,
 *   filtering a string, comparing a string with a number, printing a cyclic value…);
 * - `not-found`: a key that is not there, an index out of range, or nothing selected where one
 *   value was asked for;
 * - `depth`: brackets, filters or `range` blocks nest deeper than `maxDepth`;
 * - `limit`: the template or the work it asks for is over another {@link JsonPathLimits} ceiling.
 */
export type JsonPathErrorKind = 'parse' | 'type' | 'not-found' | 'depth' | 'limit';

/** The only error the engine throws for anything a template or its data can cause. */
export class JsonPathError extends Error {
  /** What went wrong. */
  readonly kind: JsonPathErrorKind;
  /** The template as given. */
  readonly template: string;
  /** The failure alone, without the template and step that the message adds around it. */
  readonly detail: string;
  constructor(kind: JsonPathErrorKind, template: string, detail: string, message: string) {
    super(message);
    this.name = 'JsonPathError';
    this.kind = kind;
    this.template = template;
    this.detail = detail;
  }
}

const MAX_QUOTED = 200;

/** Cuts user text echoed unquoted in a message (kubectl's `<key> is not found`) to a readable length. */
export function cutForMessage(text: string): string {
  return cutText(text, MAX_QUOTED);
}

/**
 * Quotes user text for an error message: readable (backslashes and quotes stay as typed), but
 * control characters are made visible and long text is cut, so a message stays one short line.
 */
export function quoteForMessage(text: string, keep: 'start' | 'end' = 'start'): string {
  let cut = text;
  if (text.length > MAX_QUOTED) cut = keep === 'start' ? cutText(text, MAX_QUOTED) : `…${text.slice(-MAX_QUOTED)}`;
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
function formatStep(step: StepRef): string {
  const here = quoteForMessage(step.source.slice(step.start, step.end).trim(), 'end');
  return step.outer === undefined ? here : `${here} inside ${formatStep(step.outer)}`;
}

/** A template that cannot be parsed. */
export function parseError(template: string, offset: number, detail: string): JsonPathError {
  const near = template.slice(offset, offset + 40);
  const where = offset >= template.length ? 'at the end' : `at character ${offset + 1} (${quoteForMessage(near)})`;
  return new JsonPathError('parse', template, detail, `invalid JSONPath template ${quoteForMessage(template)}: ${detail} ${where}`);
}

/** A template over one of the limits: `depth` for nesting, `limit` for the others. */
export function limitError(kind: 'depth' | 'limit', template: string, detail: string): JsonPathError {
  return new JsonPathError(kind, template, detail, `JSONPath template ${quoteForMessage(template)} is too costly: ${detail}`);
}

/** A failure while evaluating one step of a parsed template. */
export function executeError(kind: 'type' | 'not-found', template: string, step: StepRef | undefined, detail: string): JsonPathError {
  const at = step === undefined ? '' : ` at ${formatStep(step)}`;
  return new JsonPathError(kind, template, detail, `JSONPath template ${quoteForMessage(template)} failed${at}: ${detail}`);
}
