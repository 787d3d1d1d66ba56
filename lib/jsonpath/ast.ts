/**
 * The syntax tree of a template. It mirrors the node kinds of the reference engine
 * (k8s.io/client-go/util/jsonpath) one for one, because its evaluation quirks (how `range`/`end`
 * count, how a bracket key becomes fields) follow from that shape.
 */

/**
 * Where a node came from, for error messages: the text of its action from `start` up to the end
 * of the node (the path typed so far), and for a node inside a filter, where that filter is.
 * Kept as offsets and formatted only when an error needs it, so parsing stays linear.
 */
export interface StepRef {
  readonly source: string;
  readonly start: number;
  readonly end: number;
  readonly outer?: StepRef;
}

interface Located {
  readonly step: StepRef;
}

/** One slice bound as the reference engine keeps it: value, whether it was given, whether it was derived from the start. */
export interface SliceParam {
  readonly value: number;
  readonly known: boolean;
  readonly derived: boolean;
}

/** `{...}`: a sequence of steps, each applied to what the previous one selected. */
export interface ListNode {
  readonly type: 'list';
  readonly nodes: Node[];
}

/** Literal text, outside an action or quoted inside one. */
export interface TextNode {
  readonly type: 'text';
  readonly text: string;
}

/** `.name`, or one of the fields a bracket key such as `['a.b']` is re-read as. */
export interface FieldNode extends Located {
  readonly type: 'field';
  readonly name: string;
  /** Set when the field came from a bracket key holding an unescaped dot: the hint to show if it is not found. */
  readonly dottedKeyHint?: string;
}

/** `[i]`, `[a:b:s]`, `[*]`. */
export interface ArrayNode extends Located {
  readonly type: 'array';
  readonly params: readonly [SliceParam, SliceParam, SliceParam];
}

/** `[?(left op right)]`, or `[?(left)]` (operator `exists`). */
export interface FilterNode extends Located {
  readonly type: 'filter';
  readonly left: ListNode;
  readonly operator: string;
  readonly right: ListNode;
}

/** An integer literal. Beyond 2^53 it is kept exact as a bigint. */
export interface IntNode {
  readonly type: 'int';
  readonly value: number | bigint;
}

/** A number literal with a fraction, or an integer too large for int64. */
export interface FloatNode {
  readonly type: 'float';
  readonly value: number;
}

/** `true` or `false`. */
export interface BoolNode {
  readonly type: 'bool';
  readonly value: boolean;
}

/** `.*`: every member of an object, element of an array or byte of a string. */
export interface WildcardNode extends Located {
  readonly type: 'wildcard';
}

/** `..`: every container (and non-empty string) below, depth first. */
export interface RecursiveNode extends Located {
  readonly type: 'recursive';
}

/** `[a,b,...]`: each part applied to the same input, results concatenated. */
export interface UnionNode extends Located {
  readonly type: 'union';
  readonly lists: ListNode[];
}

/** A bare word: `range`, `end`, or anything else (an error when evaluated). */
export interface IdentifierNode extends Located {
  readonly type: 'identifier';
  readonly name: string;
}

/** Any node of the tree. */
export type Node =
  | ListNode
  | TextNode
  | FieldNode
  | ArrayNode
  | FilterNode
  | IntNode
  | FloatNode
  | BoolNode
  | WildcardNode
  | RecursiveNode
  | UnionNode
  | IdentifierNode;

/** A parsed template: top-level text and actions in order. */
export type Template = readonly (ListNode | TextNode)[];
