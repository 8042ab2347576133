/**
 * No source file over 500 lines in harness/, ledger/, reports/ and nodes/ (issue 24: a newcomer
 * finds the one place a change goes). A source file is what the build compiles
 * (fresh-dist.ts isCompiledSource): tests (`*.test.ts`) and test-support/ helpers do not count.
 * Helpers are test code, never built into dist/, and the largest of them are data (kept
 * regression schedules, hand-made ledger fixtures) whose length is the number of cases, not a
 * sign of several concepts in one file. Lines are counted as `wc -l` counts them (newlines).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isCompiledSource, SOURCE_DIRS } from './fresh-dist.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The most lines a source file may have. */
const MAX_LINES = 500;

/**
 * Source files over {@link MAX_LINES} today, with their size in lines when listed: being split
 * by their owners. Each must still be over the limit (remove it here once it is split, so the list
 * only shrinks) and no longer than listed (an exception is no licence to grow). nodes/ has none.
 * Empty since harness/nemesis/nemesis.ts was split: issue 24 left no file over the limit.
 */
const KNOWN_OVERSIZE: Readonly<Record<string, number>> = {};

/** Lines of a text as `wc -l` counts them: its newline characters. */
function lineCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Every compiled source file of the source folders, checkout-relative, with its line count. */
function sourceSizes(): Map<string, number> {
  const out = new Map<string, number>();
  const walk = (rel: string): void => {
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(r);
      } else if (isCompiledSource(r)) out.set(r, lineCount(readFileSync(path.join(root, r), 'utf8')));
    }
  };
  for (const d of SOURCE_DIRS) walk(d);
  return out;
}

describe('source file size', () => {
  const sizes = sourceSizes();
  const over = [...sizes].filter(([, n]) => n > MAX_LINES);

  it('counts lines as wc -l does, over every compiled source and nothing else', () => {
    expect([lineCount(''), lineCount('a'), lineCount('a\n'), lineCount('a\nb'), lineCount('a\n\nb\n')]).toEqual([0, 0, 1, 1, 3]);
    expect(sizes.size).toBeGreaterThan(150);
    for (const d of SOURCE_DIRS) expect([...sizes.keys()].some((f) => f.startsWith(`${d}/`)), d).toBe(true);
    expect([...sizes.keys()].filter((f) => f.endsWith('.test.ts') || f.includes('/test-support/'))).toEqual([]);
  });

  it(`no source file is over ${MAX_LINES} lines but the known ones`, () => {
    expect(over.filter(([f]) => !(f in KNOWN_OVERSIZE)).map(([f, n]) => `${f}: ${n} lines`)).toEqual([]);
  });

  it('every known one is still over the limit and no longer than listed (the list only shrinks), and nodes/ has none', () => {
    const stale = Object.entries(KNOWN_OVERSIZE)
      .filter(([f, listed]) => {
        const n = sizes.get(f);
        return n === undefined || n <= MAX_LINES || n > listed;
      })
      .map(([f, listed]) => `${f}: listed ${listed}, now ${sizes.get(f) ?? 'gone'}`);
    expect(stale).toEqual([]);
    expect(Object.keys(KNOWN_OVERSIZE).filter((f) => f.startsWith('nodes/'))).toEqual([]);
  });
});
