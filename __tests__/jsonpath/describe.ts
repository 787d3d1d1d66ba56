import type { Node } from '../../lib/jsonpath/ast';
import { templateInternals, type CompiledTemplate } from '../../lib/jsonpath/template';

/*
 * The parse tree in the reference engine's own notation (each node's `String()`, depth first), as
 * the conformance data records it (a test helper: the engine never needs it). Used to check that templates parse into the same shape.
 */

function describeNode(node: Node): string {
  switch (node.type) {
    case 'list':
      return 'NodeList';
    case 'text':
      return `NodeText: ${node.text}`;
    case 'field':
      return `NodeField: ${node.name}`;
    case 'array':
      return `NodeArray: [${node.params.map((p) => `{${p.value} ${p.known} ${p.derived}}`).join(' ')}]`;
    case 'filter':
      return `NodeFilter: NodeList ${node.operator} NodeList`;
    case 'int':
      return `NodeInt: ${node.value.toString()}`;
    case 'float':
      return `NodeFloat: ${node.value.toFixed(6)}`;
    case 'bool':
      return `NodeBool: ${node.value}`;
    case 'wildcard':
      return 'NodeWildcard';
    case 'recursive':
      return 'NodeRecursive';
    case 'union':
      return 'NodeUnion';
    case 'identifier':
      return `NodeIdentifier: ${node.name}`;
  }
}

function flatten(nodes: readonly Node[], out: string[]): void {
  for (const node of nodes) {
    out.push(describeNode(node));
    if (node.type === 'list') flatten(node.nodes, out);
    else if (node.type === 'filter') flatten([node.left, node.right], out);
    else if (node.type === 'union') flatten(node.lists, out);
  }
}

/** The parse tree of a compiled template, one line per node, as the reference engine prints it. */
export function describeParseTree(template: CompiledTemplate): string[] {
  const out: string[] = [];
  flatten(templateInternals(template).nodes, out);
  return out;
}
