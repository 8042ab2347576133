/**
 * The project's import graph, read with the TypeScript compiler's own parser, and DESIGN.md §1's
 * layer rule over it (import-graph.test.ts checks the rule on the whole checkout).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** The four layers of DESIGN.md §1, top first. */
export const LAYERS = ['reports', 'harness', 'ledger', 'nodes'] as const;
export type Layer = (typeof LAYERS)[number];

/**
 * Which layers each layer may import from (DESIGN.md §1: "Arrows point down the list: reports use
 * harness, harness uses ledger and nodes, ledger uses nothing above it"). The ledger and the store
 * are the two bottom layers, side by side: only the harness joins them (§3: the ledger does not
 * know which store runs), so neither imports the other.
 */
export const MAY_IMPORT: Readonly<Record<Layer, readonly Layer[]>> = {
  reports: ['harness', 'ledger', 'nodes'],
  harness: ['ledger', 'nodes'],
  ledger: [],
  nodes: [],
};

/** One module specifier found in a file, and how it was written. */
export interface Specifier {
  text: string;
  /** `static`: import / export … from / import './x' / import('x') types; `dynamic`: import(); `require`: require(). */
  kind: 'static' | 'dynamic' | 'require';
}

/** What {@link moduleSpecifiers} found in one file. */
export interface FileImports {
  specifiers: Specifier[];
  /** Dynamic imports and requires whose argument is not a string the parser can read (one line each, with its line number). */
  opaque: string[];
}

/**
 * Every module specifier of a TypeScript file, type-only ones included (a type import couples
 * two layers as much as a value import): import and export declarations, `import x = require()`,
 * `import('…')` types, dynamic `import()` and `require()` calls. The argument of a dynamic import
 * or require may also be an identifier bound in the same file to a string constant (`const M =
 * './x.js'`); any other argument is reported as opaque. Comments and strings are never mistaken
 * for imports: the file is parsed, not searched.
 * @param fileName used for the parser's diagnostics only.
 */
export function moduleSpecifiers(fileName: string, text: string): FileImports {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const consts = new Map<string, string>();
  const collectConsts = (n: ts.Node): void => {
    if (ts.isVariableDeclarationList(n) && (n.flags & ts.NodeFlags.Const) !== 0) {
      for (const d of n.declarations) if (ts.isIdentifier(d.name) && d.initializer && ts.isStringLiteralLike(d.initializer)) consts.set(d.name.text, d.initializer.text);
    }
    ts.forEachChild(n, collectConsts);
  };
  collectConsts(sf);
  const specifiers: Specifier[] = [];
  const opaque: string[] = [];
  const argument = (call: ts.CallExpression, kind: 'dynamic' | 'require'): void => {
    const a = call.arguments[0];
    const text = a && ts.isStringLiteralLike(a) ? a.text : a && ts.isIdentifier(a) ? consts.get(a.text) : undefined;
    if (text !== undefined) specifiers.push({ text, kind });
    else opaque.push(`line ${sf.getLineAndCharacterOfPosition(call.getStart(sf)).line + 1}: ${call.getText(sf).slice(0, 80)}`);
  };
  const visit = (n: ts.Node): void => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
      specifiers.push({ text: n.moduleSpecifier.text, kind: 'static' });
    } else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference) && ts.isStringLiteral(n.moduleReference.expression)) {
      specifiers.push({ text: n.moduleReference.expression.text, kind: 'static' });
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
      specifiers.push({ text: n.argument.literal.text, kind: 'static' });
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) {
      argument(n, 'dynamic');
    } else if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'require') {
      argument(n, 'require');
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return { specifiers, opaque };
}

/**
 * The file a relative specifier names, as NodeNext resolves this project's imports: `./x.js` is
 * `./x.ts` (or a `.js` file), `./x.json` is itself, an extensionless `./x` is `./x.ts` or
 * `./x/index.ts`.
 * @param fromRel the importing file, relative to the checkout (`/` separators).
 * @param exists whether a checkout-relative path is a file.
 * @returns the checkout-relative path of the file, null when none exists, undefined for a
 *   specifier that is not relative (a package or a `node:` builtin).
 */
export function resolveRelative(fromRel: string, spec: string, exists: (rel: string) => boolean): string | null | undefined {
  if (!spec.startsWith('./') && !spec.startsWith('../')) return undefined;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(fromRel), spec));
  const candidates = base.endsWith('.js') ? [`${base.slice(0, -3)}.ts`, base] : /\.[a-z]+$/i.test(base) ? [base] : [`${base}.ts`, `${base}/index.ts`];
  return candidates.find(exists) ?? null;
}

/** The layer a checkout-relative path belongs to, or null when outside the four. */
export function layerOf(rel: string): Layer | null {
  const top = rel.split('/')[0];
  return (LAYERS as readonly string[]).includes(top) ? (top as Layer) : null;
}

/** A relative import of one file of the checkout. */
export interface ImportEdge {
  /** The importing file, checkout-relative. */
  from: string;
  /** The imported file, checkout-relative (null: it does not exist). */
  to: string | null;
  /** The specifier as written. */
  spec: string;
  kind: Specifier['kind'];
}

/** Every file of the four layers the graph reads: each `.ts` file but tests (`*.test.ts`), test-support helpers and benches included. */
export function layerFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(r);
      } else if (r.endsWith('.ts') && !r.endsWith('.test.ts')) out.push(r);
    }
  };
  for (const l of LAYERS) if (existsSync(path.join(root, l))) walk(l);
  return out.sort();
}

/** The import graph of the four layers: every relative import of every {@link layerFiles} file, and the opaque ones by file. */
export function importGraph(root: string): { files: string[]; edges: ImportEdge[]; opaque: Map<string, string[]> } {
  const files = layerFiles(root);
  const exists = (rel: string): boolean => existsSync(path.join(root, rel));
  const edges: ImportEdge[] = [];
  const opaque = new Map<string, string[]>();
  for (const from of files) {
    const found = moduleSpecifiers(from, readFileSync(path.join(root, from), 'utf8'));
    if (found.opaque.length > 0) opaque.set(from, found.opaque);
    for (const s of found.specifiers) {
      const to = resolveRelative(from, s.text, exists);
      if (to !== undefined) edges.push({ from, to, spec: s.text, kind: s.kind });
    }
  }
  return { files, edges, opaque };
}

/**
 * The edges that break the layer rule ({@link MAY_IMPORT}): an import of another layer the
 * importer's layer may not use, or of a file outside the four layers (a compiled source can only
 * import what is compiled with it; test-support helpers may also import the checkout's own
 * test-support/). Unresolved imports are not judged here.
 */
export function layerBreaks(edges: readonly ImportEdge[]): ImportEdge[] {
  return edges.filter((e) => {
    if (e.to === null) return false;
    const a = layerOf(e.from)!;
    const b = layerOf(e.to);
    if (b === null) return !(e.from.split('/').includes('test-support') && e.to.startsWith('test-support/'));
    return a !== b && !MAY_IMPORT[a].includes(b);
  });
}
