import type { ListNode, Node, Template } from './ast';
import { resolveLimits, type JsonPathLimits } from './limits';
import { parseTemplate } from './parse';

/** A parsed template, reusable across requests and data. Its syntax tree is kept out of reach. */
export interface CompiledTemplate {
  /** The template text as given. */
  readonly source: string;
}

/**
 * What a template selects, which decides the JSON-mode answer: `singular` (one action made only
 * of names and single indexes: one value), `multiple` (one action with a wildcard, slice, union,
 * filter or recursive descent: an array of values) or `text` (anything else: printed text).
 */
export type TemplateShape = 'singular' | 'multiple' | 'text';

interface Internals {
  readonly nodes: Template;
  readonly shape: TemplateShape;
}

const INTERNALS = new WeakMap<CompiledTemplate, Internals>();

function isSingularStep(node: Node): boolean {
  return node.type === 'field' || (node.type === 'array' && node.params[1].derived);
}

function isPathOnly(list: ListNode): boolean {
  return list.nodes.every((node) => {
    switch (node.type) {
      case 'field':
      case 'array':
      case 'filter':
      case 'wildcard':
      case 'recursive':
        return true;
      case 'union':
        return node.lists.every(isPathOnly);
      default:
        return false;
    }
  });
}

function shapeOf(nodes: Template): TemplateShape {
  if (nodes.length !== 1 || nodes[0].type !== 'list') return 'text';
  const action = nodes[0];
  if (action.nodes.every(isSingularStep)) return 'singular';
  return isPathOnly(action) ? 'multiple' : 'text';
}

/**
 * Parses a kubectl-style JSONPath template once, to be run any number of times. Throws
 * {@link JsonPathError}: kind `parse` when it does not parse (the message names the template and
 * where), `limit` when it is longer than `maxTemplateLength` or has more than `maxNodes` parts,
 * `depth` when it nests deeper than `maxDepth`; a `TypeError` for a non-string template or bad limits.
 */
export function compileTemplate(source: string, limits?: Partial<JsonPathLimits>): CompiledTemplate {
  if (typeof source !== 'string') throw new TypeError('a JSONPath template must be a string such as "{.metadata.name}"');
  const nodes = parseTemplate(source, resolveLimits(limits));
  const compiled: CompiledTemplate = Object.freeze({ source });
  INTERNALS.set(compiled, { nodes, shape: shapeOf(nodes) });
  return compiled;
}

/** The syntax tree and shape of a compiled template; a `TypeError` for anything `compileTemplate` did not make. */
export function templateInternals(template: CompiledTemplate): Internals {
  const internals = INTERNALS.get(template);
  if (internals === undefined) throw new TypeError('expected a template made by compileTemplate()');
  return internals;
}

/** What a compiled template selects; see {@link TemplateShape}. */
export function templateShape(template: CompiledTemplate): TemplateShape {
  return templateInternals(template).shape;
}
