import { evaluate } from './evaluate';
import { executeError } from './errors';
import { resolveLimits, type JsonPathLimits } from './limits';
import { printResults } from './print';
import { templateInternals, type CompiledTemplate } from './template';
import { NO_VALUE } from './value';

/** Options of {@link execute}. */
export interface ExecuteOptions {
  /** Whether a missing key selects nothing instead of failing (kind `not-found`). Default `false`. */
  readonly allowMissingKeys?: boolean;
  /** Limits over the defaults (`DEFAULT_JSONPATH_LIMITS`). */
  readonly limits?: Partial<JsonPathLimits>;
}

/** What {@link execute} answers. */
export interface ExecuteResult {
  /** The printed text, as `kubectl -o jsonpath` prints it. */
  readonly output: string;
  /**
   * The selected values, one array per top-level template node (a `range` contributes its body's
   * groups once per item). Values are the data's own objects, not copies: do not mutate them.
   */
  readonly resultGroups: unknown[][];
}

/** The JSON-mode answer: one value (itself an array for a non-singular path), or printed text. */
export type FieldSelection = { kind: 'value'; value: unknown } | { kind: 'text'; text: string };

function publicValue(value: unknown): unknown {
  return value === NO_VALUE ? null : value;
}

function run(template: CompiledTemplate, data: unknown, allowMissingKeys: boolean, limits: JsonPathLimits): unknown[][] {
  return evaluate(templateInternals(template).nodes, data, { source: template.source, allowMissingKeys, limits });
}

/**
 * Runs a template the way the reference engine's `Execute` does, with its `allowMissingKeys`
 * switch. Rejects with {@link JsonPathError}; an error means no output at all.
 */
export async function execute(template: CompiledTemplate, data: unknown, options: ExecuteOptions = {}): Promise<ExecuteResult> {
  const limits = resolveLimits(options.limits);
  const groups = run(template, data, options.allowMissingKeys === true, limits);
  const output = (await printResults(groups, limits.maxOutputBytes, template.source)).join('');
  return { output, resultGroups: groups.map((group) => group.map(publicValue)) };
}

/**
 * Text mode, for request handlers: exactly what `kubectl -o jsonpath=T` prints (missing keys
 * select nothing), except that integer-valued numbers print in full. Evaluation is bounded by the
 * step budget; printing large objects and arrays happens in slices that share the event loop, and
 * the text comes in pieces, to be sent without joining them. Rejects with {@link JsonPathError},
 * or with `signal`'s reason once it aborts (the client went away): printing stops there.
 */
export async function selectTextSliced(
  template: CompiledTemplate,
  data: unknown,
  limits?: Partial<JsonPathLimits>,
  signal?: AbortSignal,
): Promise<string[]> {
  const resolved = resolveLimits(limits);
  return printResults(run(template, data, true, resolved), resolved.maxOutputBytes, template.source, signal);
}

/**
 * JSON mode, where missing keys are errors (kind `not-found`): a singular path answers the selected
 * value itself (the data's own object, not a copy), a non-singular one an array of every selected
 * value, any other template its printed text (printed as {@link selectTextSliced} prints). Rejects
 * with {@link JsonPathError}, or with `signal`'s reason once it aborts.
 */
export async function selectJsonSliced(
  template: CompiledTemplate,
  data: unknown,
  limits?: Partial<JsonPathLimits>,
  signal?: AbortSignal,
): Promise<FieldSelection> {
  const resolved = resolveLimits(limits);
  const { shape } = templateInternals(template);
  const groups = run(template, data, false, resolved);
  if (shape === 'text')
    return { kind: 'text', text: (await printResults(groups, resolved.maxOutputBytes, template.source, signal)).join('') };
  const selected = groups[0] ?? [];
  if (shape === 'multiple') return { kind: 'value', value: selected.map(publicValue) };
  if (selected.length === 0) {
    // Only a null met by an index gets here (`.a[0]` with `a: null`): the reference selects nothing.
    throw executeError('not-found', template.source, undefined, 'it selected no value (a null was met where an array was expected)');
  }
  return { kind: 'value', value: publicValue(selected[0]) };
}
