import type { ArrayNode, FieldNode, FilterNode, IdentifierNode, ListNode, Node, StepRef, Template, UnionNode } from './ast';
import { comparisonSteps, compareValues } from './compare';
import { cutForMessage, executeError, limitError } from './errors';
import type { JsonPathLimits } from './limits';
import {
  NO_VALUE,
  describeKind,
  elementAt,
  isAbsent,
  isArrayLike,
  isObjectMap,
  jsonView,
  memberValues,
  ownMember,
  utf8Bytes,
} from './value';

/*
 * Evaluation as the reference engine does it (jsonpath.go): the same walk over node kinds and the
 * same `range`/`end` counters, so its quirks come out the same (a `range` without `[*]` iterates
 * once, `end` closes the innermost open range, an error aborts everything). Differences by design:
 * selected values are the caller's own objects (never copies), the work is bounded by
 * `maxSteps`/`maxResults`, and recursive descent uses an explicit stack.
 */

/** Why a step failed; turned into a {@link JsonPathError} only if the failure is not swallowed. */
interface Failure {
  readonly kind: 'type' | 'not-found';
  readonly step: StepRef;
  readonly detail: string;
}

/**
 * What a step yields. On failure the reference still hands back a partial value (often its
 * input), and an existence filter counts that value: `values` keeps it for that reason.
 */
interface Outcome {
  readonly values: unknown[];
  readonly failure?: Failure;
}

/** How to run a template. */
export interface EvaluationOptions {
  /** The template text, for error messages. */
  readonly source: string;
  /** Whether a missing key selects nothing (kubectl's default) instead of failing. */
  readonly allowMissingKeys: boolean;
  /** Bounds on steps, values held at once and `range` nesting. */
  readonly limits: JsonPathLimits;
}

function failed(values: unknown[], kind: 'type' | 'not-found', step: StepRef, detail: string): Outcome {
  return { values, failure: { kind, step, detail } };
}

class Evaluator {
  private beginRange = 0;
  private inRange = 0;
  private endRange = 0;
  private lastEndNode = -1;
  private steps = 0;

  constructor(
    private readonly template: Template,
    private readonly options: EvaluationOptions,
  ) {}

  /** The reference's `FindResults` over the top-level nodes from `first` on. */
  findResults(data: unknown, first: number): unknown[][] {
    if (this.inRange > this.options.limits.maxDepth) {
      throw limitError('depth', this.options.source, `range blocks nest deeper than ${this.options.limits.maxDepth} levels`);
    }
    const cur = [data === null || data === undefined ? NO_VALUE : data];
    const full: unknown[][] = [];
    for (let i = first; i < this.template.length; i++) {
      const outcome = this.walk(cur, this.template[i]);
      if (outcome.failure !== undefined) {
        const { kind, step, detail } = outcome.failure;
        throw executeError(kind, this.options.source, step, detail);
      }
      const results = outcome.values;
      if (this.endRange > 0 && this.endRange <= this.inRange) {
        this.endRange--;
        this.lastEndNode = i;
        break;
      }
      if (this.beginRange > 0) {
        this.beginRange--;
        this.inRange++;
        if (results.length > 0) {
          for (const value of results) {
            for (const group of this.findResults(value, i + 1)) full.push(group);
          }
        } else {
          // Even an empty range walks its body once, so that the body's `end` is found.
          this.findResults(NO_VALUE, i + 1);
        }
        this.inRange--;
        if (this.lastEndNode > i) i = this.lastEndNode;
        continue;
      }
      full.push(results);
    }
    return full;
  }

  private tick(count: number): void {
    this.steps += count;
    if (this.steps > this.options.limits.maxSteps) {
      throw limitError('limit', this.options.source, `evaluating it takes more than ${this.options.limits.maxSteps} steps`);
    }
  }

  private checkSize(count: number): void {
    if (count > this.options.limits.maxResults) {
      throw limitError('limit', this.options.source, `it selects more than ${this.options.limits.maxResults} values at once`);
    }
  }

  private walk(input: unknown[], node: Node): Outcome {
    this.tick(1);
    switch (node.type) {
      case 'list':
        return this.evalList(input, node);
      case 'text':
        return { values: [node.text] };
      case 'field':
        return this.evalField(input, node);
      case 'array':
        return this.evalArray(input, node);
      case 'filter':
        return this.evalFilter(input, node);
      case 'int':
      case 'float':
      case 'bool':
        this.tick(input.length);
        return { values: input.map(() => node.value) };
      case 'wildcard':
        return { values: this.evalWildcard(input) };
      case 'recursive':
        return { values: this.evalRecursive(input) };
      case 'union':
        return this.evalUnion(input, node);
      case 'identifier':
        return this.evalIdentifier(input, node);
    }
  }

  private evalList(input: unknown[], list: ListNode): Outcome {
    let cur = input;
    for (const node of list.nodes) {
      const outcome = this.walk(cur, node);
      if (outcome.failure !== undefined) return outcome;
      cur = outcome.values;
      this.checkSize(cur.length);
    }
    return { values: cur };
  }

  private evalField(input: unknown[], node: FieldNode): Outcome {
    const results: unknown[] = [];
    if (input.length === 0) return { values: results };
    this.tick(input.length);
    for (const value of input) {
      if (!isObjectMap(value)) continue;
      const member = ownMember(value, node.name);
      if (member.found) results.push(member.value);
    }
    if (results.length === 0 && !this.options.allowMissingKeys) {
      const hint = node.dottedKeyHint === undefined ? '' : ` (${node.dottedKeyHint})`;
      return failed(results, 'not-found', node.step, `${cutForMessage(node.name)} is not found${hint}`);
    }
    return { values: results };
  }

  private evalArray(input: unknown[], node: ArrayNode): Outcome {
    const result: unknown[] = [];
    const [p0, p1, p2] = node.params;
    for (const value of input) {
      this.tick(1);
      // A null inside the data is skipped; only a value that is there and not an array is an error.
      if (value === null) continue;
      if (!isArrayLike(value)) {
        return failed(input, 'type', node.step, `${describeKind(value)} is not an array, so it cannot be indexed or sliced`);
      }
      const length = value.length;
      let start = p0.known ? p0.value : 0;
      if (start < 0) start += length;
      let end = p1.known ? p1.value : length;
      if (end < 0 || (end === 0 && p1.derived)) end += length;
      if (end === start) return { values: result }; // as the reference does: stop at the first empty slice
      if (start >= length || start < 0) {
        return failed(input, 'not-found', node.step, `array index out of bounds: index ${start}, length ${length}`);
      }
      if (end > length || end < 0) {
        return failed(input, 'not-found', node.step, `array index out of bounds: index ${end - 1}, length ${length}`);
      }
      if (start > end) {
        return failed(input, 'type', node.step, `starting index ${start} is greater than ending index ${end}`);
      }
      let step = 1;
      if (p2.known) {
        if (p2.value <= 0) return failed(input, 'type', node.step, 'step must be > 0');
        step = p2.value;
      }
      const count = Math.ceil((end - start) / step);
      this.tick(count);
      this.checkSize(result.length + count);
      for (let i = start; i < end; i += step) result.push(elementAt(value, i));
    }
    return { values: result };
  }

  private evalFilter(input: unknown[], node: FilterNode): Outcome {
    const results: unknown[] = [];
    for (const value of input) {
      this.tick(1);
      if (!isArrayLike(value)) {
        return failed(input, 'type', node.step, `${describeKind(value)} is not an array, so it cannot be filtered`);
      }
      for (let i = 0; i < value.length; i++) {
        this.tick(1);
        const element = elementAt(value, i);
        const lefts = this.evalList([element], node.left);
        if (node.operator === 'exists') {
          // Failures are ignored here, and a failed step's partial value counts, as in the reference.
          if (lefts.values.length > 0) results.push(element);
          continue;
        }
        if (lefts.failure !== undefined) return { values: input, failure: lefts.failure };
        if (lefts.values.length === 0) continue;
        if (lefts.values.length > 1) return failed(input, 'type', node.step, 'can only compare one element at a time');
        const rights = this.evalList([element], node.right);
        if (rights.failure !== undefined) return { values: input, failure: rights.failure };
        if (rights.values.length === 0) continue;
        if (rights.values.length > 1) return failed(input, 'type', node.step, 'can only compare one element at a time');
        // Long strings cost by their length: a step budget that counted each comparison once let a
        // filter over thousands of 10 KB strings hold the event loop for seconds.
        this.tick(comparisonSteps(lefts.values[0], rights.values[0]));
        const outcome = compareValues(node.operator, lefts.values[0], rights.values[0]);
        if (outcome.error !== undefined) return failed(results, 'type', node.step, outcome.error);
        if (outcome.pass) results.push(element);
      }
    }
    return { values: results };
  }

  private evalWildcard(input: unknown[]): unknown[] {
    const results: unknown[] = [];
    for (const value of input) {
      this.tick(1);
      if (isArrayLike(value)) {
        this.tick(value.length);
        this.checkSize(results.length + value.length);
        for (let i = 0; i < value.length; i++) results.push(elementAt(value, i));
        continue;
      }
      let members: unknown[];
      if (isObjectMap(value)) {
        members = memberValues(value);
      } else if (typeof value === 'string') {
        // A string has at least as many UTF-8 bytes as UTF-16 units: refuse a huge one before encoding it.
        this.checkSize(results.length + value.length);
        this.tick(value.length);
        members = utf8Bytes(value);
        this.steps -= value.length;
      } else {
        continue;
      }
      this.tick(members.length);
      this.checkSize(results.length + members.length);
      for (const member of members) results.push(member);
    }
    return results;
  }

  /** Every container and non-empty string at or below the input values, depth first. */
  private evalRecursive(input: unknown[]): unknown[] {
    const results: unknown[] = [];
    const stack: { readonly items: ArrayLike<unknown>; index: number }[] = [{ items: input, index: 0 }];
    while (stack.length > 0) {
      const frame = stack[stack.length - 1];
      if (frame.index >= frame.items.length) {
        stack.pop();
        continue;
      }
      const raw = frame.items[frame.index++];
      const value = isAbsent(raw) ? null : jsonView(raw, '');
      this.tick(1);
      let children: ArrayLike<unknown> | undefined;
      if (typeof value === 'string') {
        // A string's children are its bytes, which have none of their own: only the string counts.
        if (value.length > 0) results.push(value);
      } else if (isArrayLike(value)) {
        children = value;
      } else if (isObjectMap(value)) {
        children = memberValues(value);
      }
      if (children !== undefined && children.length > 0) {
        results.push(value);
        stack.push({ items: children, index: 0 });
      }
      this.checkSize(results.length);
    }
    return results;
  }

  private evalUnion(input: unknown[], node: UnionNode): Outcome {
    const results: unknown[] = [];
    for (const list of node.lists) {
      const outcome = this.evalList(input, list);
      if (outcome.failure !== undefined) return { values: input, failure: outcome.failure };
      this.checkSize(results.length + outcome.values.length);
      for (const value of outcome.values) results.push(value);
    }
    return { values: results };
  }

  private evalIdentifier(input: unknown[], node: IdentifierNode): Outcome {
    switch (node.name) {
      case 'range':
        this.beginRange++;
        return { values: input };
      case 'end':
        if (this.inRange > 0) {
          this.endRange++;
          return { values: [] };
        }
        return failed([], 'type', node.step, 'not in range, nothing to end');
      default:
        return failed(input, 'type', node.step, `unrecognized identifier ${node.name}`);
    }
  }
}

/**
 * Runs a parsed template over `data`: one group of selected values per top-level node, a `range`
 * contributing its body's groups once per item. `null` data and null range items are
 * {@link NO_VALUE}. Throws {@link JsonPathError}.
 */
export function evaluate(template: Template, data: unknown, options: EvaluationOptions): unknown[][] {
  return new Evaluator(template, options).findResults(jsonView(data, ''), 0);
}
