import path from 'node:path';
import ts from 'typescript';

/*
 * Types are part of the API: every type a public signature names must be exported from
 * lib/index.ts (a user must be able to write it down), and none of them may be `any`.
 */

const ROOT = path.resolve(__dirname, '..', '..');

interface Finding {
  readonly problem: string;
  readonly where: string;
}

function publicSurfaceFindings(): Finding[] {
  const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.build.json'), (file) => ts.sys.readFile(file));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const program = ts.createProgram(parsed.fileNames, parsed.options);
  const checker = program.getTypeChecker();
  const index = program.getSourceFile(path.join(ROOT, 'lib', 'index.ts'))!;
  const exports = checker.getExportsOfModule(checker.getSymbolAtLocation(index)!);
  const exportedNames = new Set(exports.map((s) => s.name));
  const findings: Finding[] = [];
  const seen = new Set<ts.Node>();
  const resolve = (symbol: ts.Symbol): ts.Symbol => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);

  const visit = (declaration: ts.Node, from: string): void => {
    if (seen.has(declaration)) return;
    seen.add(declaration);
    const walk = (node: ts.Node): void => {
      if (node.kind === ts.SyntaxKind.AnyKeyword)
        findings.push({ problem: 'any', where: `${from}: ${node.parent.getText().slice(0, 80)}` });
      if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node)) {
        const name = ts.isTypeReferenceNode(node) ? node.typeName : node.expression;
        const symbol = checker.getSymbolAtLocation(name);
        for (const d of symbol ? (resolve(symbol).declarations ?? []) : []) {
          if (!d.getSourceFile().fileName.startsWith(path.join(ROOT, 'lib') + path.sep) || ts.isTypeParameterDeclaration(d)) continue;
          const typeName = resolve(symbol!).name;
          if (exportedNames.has(typeName)) visit(d, typeName);
          else findings.push({ problem: `not exported: ${typeName}`, where: from });
        }
      }
      // Signatures matter, bodies do not; private members are not part of the surface.
      if (ts.isFunctionLike(node)) {
        node.parameters.forEach(walk);
        if (node.type) walk(node.type);
        node.typeParameters?.forEach(walk);
        return;
      }
      if (ts.isClassDeclaration(node)) {
        node.heritageClauses?.forEach(walk);
        for (const member of node.members) {
          if (
            !ts.getCombinedModifierFlags(member as ts.Declaration) ||
            !(ts.getCombinedModifierFlags(member as ts.Declaration) & ts.ModifierFlags.Private)
          )
            walk(member);
        }
        return;
      }
      if (ts.isVariableDeclaration(node)) {
        if (node.type) walk(node.type);
        return;
      }
      ts.forEachChild(node, walk);
    };
    walk(declaration);
  };
  for (const symbol of exports) for (const d of resolve(symbol).declarations ?? []) visit(d, symbol.name);
  return findings;
}

test('every type a public signature names is exported, and none is any', () => {
  expect(publicSurfaceFindings()).toEqual([]);
});
