import type { ArrayNode, ListNode, Node, SliceParam, StepRef, Template, TextNode } from './ast';
import { limitError, parseError } from './errors';
import type { JsonPathLimits } from './limits';
import { unquoteExtend } from './unquote';

/*
 * A reading of the reference engine's grammar (k8s.io/client-go/util/jsonpath, parser.go), token
 * for token, so that the same templates parse, fail and nest the same way. Two things differ by
 * design: every loop that the reference writes as a tail call is a loop here (a template of any
 * length never grows the stack), and the sub-parses it does for bracket keys, unions and filter
 * sides are counted against `maxDepth`.
 */

const EOF = -1;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const DOUBLE_QUOTE = 0x22;
const DOLLAR = 0x24;
const SINGLE_QUOTE = 0x27;
const RIGHT_PAREN = 0x29;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const AT = 0x40;
const LEFT_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const RIGHT_BRACKET = 0x5d;
const LEFT_BRACE = 0x7b;
const RIGHT_BRACE = 0x7d;

const LETTER_DIGIT_UNDERSCORE = /^[\p{L}\p{Nd}_]$/u;
const DECIMAL_DIGIT = /^\p{Nd}$/u;
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const DICT_KEY = /^'([^']*)'$/;
const SLICE = /^(-?[0-9]*)(:-?[0-9]*)?(:-?[0-9]*)?$/;
// Go's `.` stops only at a newline; the filter text never holds one, but may hold \r or U+2028.
const FILTER = /^([^!<>=]+)([!<>=]+)([^\n]+?)$/;
const GO_INT = /^[+-]?[0-9]+$/;
const GO_FLOAT = /^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** A parse failure at an offset of the text being parsed; turned into a {@link JsonPathError} at the top. */
class ParseFailure extends Error {
  constructor(
    readonly offset: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

function isAlphaNumeric(r: number): boolean {
  return r >= 0 && LETTER_DIGIT_UNDERSCORE.test(String.fromCodePoint(r));
}

function isDigit(r: number): boolean {
  return r >= 0x30 && r <= 0x39 ? true : r > 0x7f && DECIMAL_DIGIT.test(String.fromCodePoint(r));
}

function isTerminator(r: number): boolean {
  switch (r) {
    case EOF:
    case SPACE:
    case TAB:
    case CR:
    case LF:
    case DOT:
    case COMMA:
    case LEFT_BRACKET:
    case RIGHT_BRACKET:
    case DOLLAR:
    case AT:
    case LEFT_BRACE:
    case RIGHT_BRACE:
      return true;
    default:
      return false;
  }
}

/** Go's `%#U`: `U+002A '*'`, or just `U+0009` for a character that does not print. */
function formatRune(r: number): string {
  const cp = r >= 0xd800 && r <= 0xdfff ? 0xfffd : r;
  const code = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const char = String.fromCodePoint(cp);
  return PRINTABLE.test(char) ? `${code} '${char}'` : code;
}

/** Go's `strconv.Atoi` on a 64-bit platform: the value, or `undefined` where it fails. */
function goAtoi(text: string): number | bigint | undefined {
  if (!GO_INT.test(text)) return undefined;
  const big = BigInt(text);
  if (big < INT64_MIN || big > INT64_MAX) return undefined;
  const small = Number(big);
  return Number.isSafeInteger(small) ? small : big;
}

/** How the nodes of one (sub-)parse describe where they are, for error messages. */
type StepNaming =
  /** The text of the action so far, inside `outer` (the filter this action is a side of) if any. */
  | { readonly kind: 'path'; readonly outer?: StepRef }
  /** One fixed step for every node (that of the bracket in the outer template), with an optional hint for fields. */
  | { readonly kind: 'fixed'; readonly step: StepRef; readonly hint?: string };

interface ParseContext {
  readonly template: string;
  readonly limits: JsonPathLimits;
  nodeCount: number;
}

class Parser {
  private pos = 0;
  private start = 0;
  private width = 0;
  private actionStart = 0;

  constructor(
    private readonly ctx: ParseContext,
    private readonly input: string,
    private readonly depth: number,
    private readonly naming: StepNaming,
  ) {}

  parse(): (ListNode | TextNode)[] {
    const root: (ListNode | TextNode)[] = [];
    for (;;) {
      const brace = this.input.indexOf('{', this.pos);
      if (brace < 0) {
        if (this.input.length > this.start) root.push(this.count({ type: 'text', text: this.input.slice(this.start) }));
        return root;
      }
      if (brace > this.start) root.push(this.count({ type: 'text', text: this.input.slice(this.start, brace) }));
      this.pos = brace + 1;
      this.start = this.pos;
      this.actionStart = this.pos;
      const list = this.newList();
      root.push(list);
      this.parseInsideAction(list);
    }
  }

  private count<T extends Node>(node: T): T {
    this.ctx.nodeCount++;
    if (this.ctx.nodeCount > this.ctx.limits.maxNodes) {
      throw limitError('limit', this.ctx.template, `it has more than ${this.ctx.limits.maxNodes} parts`);
    }
    return node;
  }

  private newList(): ListNode {
    return this.count({ type: 'list', nodes: [] });
  }

  private append(cur: ListNode, node: Node): void {
    cur.nodes.push(this.count(node));
  }

  private next(): number {
    if (this.pos >= this.input.length) {
      this.width = 0;
      return EOF;
    }
    const r = this.input.codePointAt(this.pos) as number;
    this.width = r > 0xffff ? 2 : 1;
    this.pos += this.width;
    return r;
  }

  private peek(): number {
    const r = this.next();
    this.backup();
    return r;
  }

  private backup(): void {
    this.pos -= this.width;
  }

  private consumeText(): string {
    const value = this.input.slice(this.start, this.pos);
    this.start = this.pos;
    return value;
  }

  private startsWith(prefix: string): boolean {
    return this.input.startsWith(prefix, this.pos);
  }

  /** The step ending at `end`, for error messages. */
  private stepAt(end: number): StepRef {
    if (this.naming.kind === 'fixed') return this.naming.step;
    return { source: this.input, start: this.actionStart, end, outer: this.naming.outer };
  }

  private parseInsideAction(cur: ListNode): void {
    for (;;) {
      if (this.startsWith('}')) {
        this.pos += 1;
        this.consumeText();
        return;
      }
      if (this.startsWith('[?(')) {
        this.parseFilter(cur);
        continue;
      }
      if (this.startsWith('..')) {
        this.parseRecursive(cur);
        continue;
      }
      const r = this.next();
      if (r === EOF || r === CR || r === LF) throw new ParseFailure(this.pos - this.width, 'unclosed action');
      if (r === SPACE || r === AT || r === DOLLAR) {
        this.consumeText();
      } else if (r === LEFT_BRACKET) {
        this.parseArray(cur);
      } else if (r === DOUBLE_QUOTE || r === SINGLE_QUOTE) {
        this.parseQuote(cur, r);
      } else if (r === DOT) {
        this.parseField(cur);
      } else if (r === PLUS || r === MINUS || isDigit(r)) {
        this.backup();
        this.parseNumber(cur);
      } else if (isAlphaNumeric(r)) {
        this.backup();
        this.parseIdentifier(cur);
      } else {
        throw new ParseFailure(this.pos - this.width, `unrecognized character in action: ${formatRune(r)}`);
      }
    }
  }

  private parseIdentifier(cur: ListNode): void {
    while (!isTerminator(this.next()));
    this.backup();
    const value = this.consumeText();
    if (value === 'true' || value === 'false') {
      this.append(cur, { type: 'bool', value: value === 'true' });
    } else {
      this.append(cur, { type: 'identifier', name: value, step: this.stepAt(this.pos) });
    }
  }

  private parseRecursive(cur: ListNode): void {
    const last = cur.nodes[cur.nodes.length - 1];
    if (last !== undefined && last.type === 'recursive') {
      throw new ParseFailure(this.pos, 'invalid multiple recursive descent');
    }
    this.pos += 2;
    this.consumeText();
    this.append(cur, { type: 'recursive', step: this.stepAt(this.pos) });
    if (isAlphaNumeric(this.peek())) this.parseField(cur);
  }

  private parseNumber(cur: ListNode): void {
    const tokenStart = this.pos;
    const sign = this.peek();
    if (sign === PLUS || sign === MINUS) this.next();
    for (;;) {
      const r = this.next();
      if (r !== DOT && !isDigit(r)) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    const int = goAtoi(value);
    if (int !== undefined) {
      this.append(cur, { type: 'int', value: int });
      return;
    }
    const float = GO_FLOAT.test(value) ? Number(value) : NaN;
    if (Number.isFinite(float)) {
      this.append(cur, { type: 'float', value: float });
      return;
    }
    throw new ParseFailure(tokenStart, `cannot parse number ${value}`);
  }

  private parseArray(cur: ListNode): void {
    const open = this.start;
    for (;;) {
      const r = this.next();
      if (r === EOF || r === LF) throw new ParseFailure(open, 'unterminated array');
      if (r === RIGHT_BRACKET) break;
    }
    let text = this.consumeText().slice(1, -1);
    const step = this.stepAt(this.pos);
    if (text === '*') text = ':';

    const parts = text.split(',');
    if (parts.length > 1) {
      const lists = parts.map((part) => this.subParse(`[${part.replace(/^ +| +$/g, '')}]`, open, { kind: 'fixed', step }));
      this.append(cur, { type: 'union', lists, step });
      return;
    }

    const key = DICT_KEY.exec(text);
    if (key !== null) {
      // The reference re-reads a bracket key as a dotted path, so ['a.b'] means .a.b.
      const hint = /(^|[^\\])\./.test(key[1])
        ? `inside brackets '${key[1]}' is read as the path .${key[1]}; a key that contains dots is written ['${key[1].replace(/\./g, '\\.')}'] or .${key[1].replace(/\./g, '\\.')}`
        : undefined;
      const list = this.subParse(`.${key[1]}`, open, { kind: 'fixed', step, hint });
      cur.nodes.push(...list.nodes);
      return;
    }

    const slice = SLICE.exec(text);
    if (slice === null)
      throw new ParseFailure(open, `invalid array index ${text.length > 200 ? `${text.slice(0, 200)}…` : text}${bracketHint(text)}`);
    const params: SliceParam[] = [];
    for (let i = 0; i < 3; i++) {
      let part = slice[i + 1] ?? '';
      if (part !== '') {
        if (i > 0) part = part.slice(1);
        if (i > 0 && part === '') {
          params.push({ value: 0, known: false, derived: false });
        } else {
          const value = goAtoi(part);
          if (value === undefined) throw new ParseFailure(open, `array index ${part} is not a number`);
          params.push({ value: Number(value), known: true, derived: false });
        }
      } else if (i === 1) {
        params.push({ value: params[0].value + 1, known: true, derived: true });
      } else {
        params.push({ value: 0, known: false, derived: false });
      }
    }
    const node: ArrayNode = { type: 'array', params: [params[0], params[1], params[2]], step };
    this.append(cur, node);
  }

  private parseFilter(cur: ListNode): void {
    const open = this.pos;
    this.pos += 3;
    this.consumeText();
    let begin = false;
    let end = false;
    let pair = 0;
    for (;;) {
      const r = this.next();
      if (r === EOF || r === LF) throw new ParseFailure(open, 'unterminated filter');
      if (r === DOUBLE_QUOTE || r === SINGLE_QUOTE) {
        if (!begin) {
          begin = true;
          pair = r;
          continue;
        }
        if (this.input.charCodeAt(this.pos - 2) !== BACKSLASH && r === pair) end = true;
      } else if (r === RIGHT_PAREN && begin === end) {
        break;
      }
    }
    if (this.next() !== RIGHT_BRACKET) throw new ParseFailure(open, 'unclosed array expect ]');
    const text = this.consumeText().slice(0, -2);
    const step = this.stepAt(this.pos);
    const inner: StepNaming = this.naming.kind === 'fixed' ? this.naming : { kind: 'path', outer: step };
    const comparison = FILTER.exec(text);
    if (comparison === null) {
      const left = this.subParse(text, open, inner);
      this.append(cur, { type: 'filter', left, operator: 'exists', right: this.newList(), step });
    } else {
      const left = this.subParse(comparison[1], open, inner);
      const right = this.subParse(comparison[3], open, inner);
      this.append(cur, { type: 'filter', left, operator: comparison[2], right, step });
    }
  }

  private parseQuote(cur: ListNode, quote: number): void {
    const open = this.start;
    for (;;) {
      const r = this.next();
      if (r === EOF || r === LF) throw new ParseFailure(open, 'unterminated quoted string');
      if (r === quote && this.input.charCodeAt(this.pos - 2) !== BACKSLASH) break;
    }
    const value = this.consumeText();
    const text = unquoteExtend(value);
    if (text === undefined) throw new ParseFailure(open, `unquote string ${value} error invalid syntax`);
    this.append(cur, { type: 'text', text });
  }

  private parseField(cur: ListNode): void {
    this.consumeText();
    for (;;) {
      const r = this.next();
      if (r === BACKSLASH) {
        this.next();
      } else if (isTerminator(r)) {
        this.backup();
        break;
      }
    }
    const value = this.consumeText();
    const step = this.stepAt(this.pos);
    if (value === '*') {
      this.append(cur, { type: 'wildcard', step });
    } else {
      const hint = this.naming.kind === 'fixed' ? this.naming.hint : undefined;
      this.append(cur, { type: 'field', name: value.replace(/\\/g, ''), step, ...(hint === undefined ? {} : { dottedKeyHint: hint }) });
    }
  }

  /**
   * The reference's `parseAction`: parses `{text}` as a template of its own and keeps its first
   * action. A failure inside is reported at `offset`, the outer token that asked for it.
   */
  private subParse(text: string, offset: number, naming: StepNaming): ListNode {
    if (this.depth + 1 > this.ctx.limits.maxDepth) {
      throw limitError('depth', this.ctx.template, `brackets and filters nest deeper than ${this.ctx.limits.maxDepth} levels`);
    }
    const sub = new Parser(this.ctx, `{${text}}`, this.depth + 1, naming);
    try {
      return sub.parse()[0] as ListNode;
    } catch (err) {
      if (err instanceof ParseFailure) throw new ParseFailure(offset, err.detail);
      throw err;
    }
  }
}

/** Names the usual cause of an unreadable bracket, since the reference's message only repeats it. */
function bracketHint(text: string): string {
  if (text.startsWith('"')) return ` (a key in brackets takes single quotes: ['key'])`;
  if (/^\s|\s$/.test(text)) return ' (no spaces are allowed inside brackets)';
  return '';
}

/** Rejects templates whose `range` blocks nest deeper than the limit, before any data is touched. */
function checkRangeNesting(template: Template, ctx: ParseContext): void {
  let depth = 0;
  for (const action of template) {
    if (action.type !== 'list') continue;
    for (const node of action.nodes) {
      if (node.type !== 'identifier') continue;
      if (node.name === 'range') depth++;
      else if (node.name === 'end') depth = Math.max(0, depth - 1);
      if (depth > ctx.limits.maxDepth) {
        throw limitError('depth', ctx.template, `range blocks nest deeper than ${ctx.limits.maxDepth} levels`);
      }
    }
  }
}

/**
 * Parses a template. Throws {@link JsonPathError}: kind `parse` where the reference engine
 * fails to parse, `limit` over `maxTemplateLength` or `maxNodes`, `depth` over `maxDepth`.
 */
export function parseTemplate(source: string, limits: JsonPathLimits): Template {
  if (source.length > limits.maxTemplateLength) {
    throw limitError('limit', source, `it is ${source.length} characters long, the limit is ${limits.maxTemplateLength}`);
  }
  const ctx: ParseContext = { template: source, limits, nodeCount: 0 };
  try {
    const template = new Parser(ctx, source, 0, { kind: 'path' }).parse();
    checkRangeNesting(template, ctx);
    return template;
  } catch (err) {
    if (err instanceof ParseFailure) throw parseError(source, err.offset, err.detail);
    throw err;
  }
}
