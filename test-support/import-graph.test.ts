/**
 * DESIGN.md §1's layer rule on the whole checkout: reports -> harness -> ledger, nodes; no file
 * imports a layer above its own (issue 24). Every `.ts` file of the four layers but tests is read
 * (test-support helpers and benches too); the imports are parsed with the TypeScript compiler's
 * parser (import-graph.ts).
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { importGraph, layerBreaks, layerOf, moduleSpecifiers, resolveRelative, type ImportEdge } from './import-graph.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * Imports that break the rule today, outside nodes/, left to their owners: each must still exist
 * (remove it here once it is gone, so the list only shrinks), and nothing else may break the rule.
 * `importer -> imported`, checkout-relative.
 */
const KNOWN_BREAKS: ReadonlyArray<{ edge: string; why: string }> = [
  { edge: 'harness/certify.ts -> reports/results.ts', why: 'the run returns the Results type of results.json' },
  { edge: 'harness/cli.ts -> reports/results.ts', why: 'a dynamic import: describeMembership for the console' },
  { edge: 'harness/commands/analyze.ts -> reports/html-report.ts', why: 'analyze writes the report itself' },
  { edge: 'harness/commands/analyze.ts -> reports/junit.ts', why: 'analyze writes junit.xml itself' },
  { edge: 'harness/commands/analyze.ts -> reports/results.ts', why: 'analyze builds results.json itself' },
  { edge: 'harness/seal.bench.ts -> reports/html-report.ts', why: 'the bench times the report' },
  { edge: 'harness/seal.bench.ts -> reports/junit.ts', why: 'the bench times junit.xml' },
  { edge: 'harness/seal.bench.ts -> reports/results.ts', why: 'the bench times results.json' },
  { edge: 'ledger/ledger-writer.ts -> nodes/client-protocol.ts', why: "the ack's shape is the store's WriteInfo (a type import)" },
];

/**
 * Dynamic imports and requires the parser cannot read, each checked by hand: what it loads, and
 * why that is no import of the checkout's own files. Each must still be there (the list shrinks).
 */
const KNOWN_OPAQUE: Readonly<Record<string, string>> = {
  'harness/targets/installed.ts': "require(`${pkg}/package.json`): an installed package's version; pkg is a package name (etcd3, ioredis)",
};

const edgeText = (e: ImportEdge): string => `${e.from} -> ${e.to}`;

describe('moduleSpecifiers (the TypeScript parser, not a search)', () => {
  it('finds every way a file can name a module, type-only ones included', () => {
    const text = [
      "import a from './a.js';",
      "import type { B } from '../b.js';",
      "import './side-effect.js';",
      "export { c } from './c.js';",
      "export * from './d.js';",
      "export type { E } from './e.js';",
      "import f = require('./f.js');",
      "type G = import('./g.js').G;",
      "const M = './m.js';",
      'async function h() {',
      "  await import('./h.js');",
      '  await import(/* @vite-ignore */ M);',
      "  require('./r.js');",
      '}',
    ].join('\n');
    const found = moduleSpecifiers('x.ts', text);
    expect(found.specifiers).toEqual([
      { text: './a.js', kind: 'static' },
      { text: '../b.js', kind: 'static' },
      { text: './side-effect.js', kind: 'static' },
      { text: './c.js', kind: 'static' },
      { text: './d.js', kind: 'static' },
      { text: './e.js', kind: 'static' },
      { text: './f.js', kind: 'static' },
      { text: './g.js', kind: 'static' },
      { text: './h.js', kind: 'dynamic' },
      { text: './m.js', kind: 'dynamic' },
      { text: './r.js', kind: 'require' },
    ]);
    expect(found.opaque).toEqual([]);
  });

  it('never mistakes comments, strings or templates for imports, and reports an import it cannot read', () => {
    const text = [
      "// import x from '../harness/x.js';",
      "/* export * from '../reports/y.js'; */",
      "const s = \"import z from '../ledger/z.js'\";",
      'const t = `${s} import(\'../reports/t.js\')`;',
      'let name = s;',
      'void import(name);',
      'void import(`./${s}.js`);',
    ].join('\n');
    const found = moduleSpecifiers('x.ts', text);
    expect(found.specifiers).toEqual([]);
    expect(found.opaque).toEqual(['line 6: import(name)', 'line 7: import(`./${s}.js`)']);
  });
});

describe('resolveRelative (NodeNext, as this project writes its imports)', () => {
  const files = new Set(['harness/a.ts', 'harness/b/index.ts', 'ledger/c.ts', 'harness/d.js', 'harness/e.json']);
  const exists = (rel: string): boolean => files.has(rel);
  it('maps ./x.js to the .ts file, across folders, and finds folder indexes and data files', () => {
    expect(resolveRelative('harness/z.ts', './a.js', exists)).toBe('harness/a.ts');
    expect(resolveRelative('harness/sub/z.ts', '../../ledger/c.js', exists)).toBe('ledger/c.ts');
    expect(resolveRelative('harness/z.ts', './b', exists)).toBe('harness/b/index.ts');
    expect(resolveRelative('harness/z.ts', './d.js', exists)).toBe('harness/d.js');
    expect(resolveRelative('harness/z.ts', './e.json', exists)).toBe('harness/e.json');
  });

  it('is null for a missing file and undefined for a package or a builtin', () => {
    expect(resolveRelative('harness/z.ts', './gone.js', exists)).toBeNull();
    expect(resolveRelative('harness/z.ts', 'better-sqlite3', exists)).toBeUndefined();
    expect(resolveRelative('harness/z.ts', 'node:fs', exists)).toBeUndefined();
  });
});

describe('layerBreaks (DESIGN.md §1)', () => {
  const e = (from: string, to: string): ImportEdge => ({ from, to, spec: '', kind: 'static' });
  it('lets each layer use the layers below it, and nothing else', () => {
    const allowed = [e('reports/r.ts', 'harness/h.ts'), e('reports/r.ts', 'ledger/l.ts'), e('reports/r.ts', 'nodes/n.ts'), e('harness/h.ts', 'ledger/l.ts'), e('harness/h.ts', 'nodes/n.ts'), e('nodes/a.ts', 'nodes/sim/b.ts')];
    const broken = [e('harness/h.ts', 'reports/r.ts'), e('ledger/l.ts', 'harness/h.ts'), e('ledger/l.ts', 'nodes/n.ts'), e('nodes/n.ts', 'ledger/l.ts'), e('nodes/n.ts', 'harness/test-support/x.ts'), e('nodes/n.ts', 'test-support/capabilities.ts')];
    expect(layerBreaks([...allowed, ...broken])).toEqual(broken);
  });

  it('lets a test-support helper use the checkout-wide test-support/, and no source', () => {
    expect(layerBreaks([e('harness/test-support/p.ts', 'test-support/capabilities.ts')])).toEqual([]);
    expect(layerBreaks([e('harness/h.ts', 'test-support/capabilities.ts')])).toHaveLength(1);
  });
});

describe('the checkout keeps the layer rule', () => {
  const graph = importGraph(root);
  const breaks = layerBreaks(graph.edges).map(edgeText);
  const known = new Set(KNOWN_BREAKS.map((k) => k.edge));

  it('reads the whole graph: every relative import resolves, none is opaque, and the layers really import each other', () => {
    expect(graph.files.length).toBeGreaterThan(150);
    expect(graph.edges.filter((x) => x.to === null).map((x) => `${x.from}: ${x.spec}`)).toEqual([]);
    expect([...graph.opaque].filter(([f]) => !(f in KNOWN_OPAQUE)).map(([f, lines]) => `${f}: ${lines.join('; ')}`)).toEqual([]);
    expect(Object.keys(KNOWN_OPAQUE).filter((f) => !graph.opaque.has(f))).toEqual([]);
    const crossings = new Set(graph.edges.filter((x) => layerOf(x.from) !== layerOf(x.to!)).map((x) => `${layerOf(x.from)} -> ${layerOf(x.to!)}`));
    for (const c of ['reports -> harness', 'reports -> ledger', 'harness -> ledger', 'harness -> nodes']) expect(crossings).toContain(c);
  });

  it('no import breaks the rule but the known ones', () => {
    expect(breaks.filter((b) => !known.has(b))).toEqual([]);
  });

  it('every known break still exists (the list only shrinks), and nodes/ has none', () => {
    expect([...known].filter((k) => !breaks.includes(k))).toEqual([]);
    expect(KNOWN_BREAKS.filter((k) => k.edge.startsWith('nodes/'))).toEqual([]);
  });
});
