import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeImageRef, nodeImageTag, parseNodeImageRows, repoRootFrom, staleNodeImageTags } from './node-image.js';

let root: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'zaris-certify-image-test-'));
  mkdirSync(join(root, 'nodes'));
  mkdirSync(join(root, 'dist', 'nodes'), { recursive: true });
  writeFileSync(join(root, 'nodes', 'Dockerfile'), 'FROM x\n');
  writeFileSync(join(root, 'dist', 'nodes', 'node-main.js'), 'console.log(1)\n');
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('nodeImageTag', () => {
  it('is 16 hex digits, stable for the same inputs, and ignores the .built stamp', () => {
    const t = nodeImageTag(root);
    expect(t).toMatch(/^[0-9a-f]{16}$/);
    writeFileSync(join(root, 'dist', '.built'), String(Date.now()));
    expect(nodeImageTag(root)).toBe(t);
    expect(nodeImageRef(root)).toBe(`zaris-certify-node:${t}`);
  });

  it('changes with any file of dist/, the Dockerfile or the base image', () => {
    const t = nodeImageTag(root);
    writeFileSync(join(root, 'dist', 'nodes', 'node-main.js'), 'console.log(2)\n');
    const t2 = nodeImageTag(root);
    expect(t2).not.toBe(t);
    writeFileSync(join(root, 'dist', 'extra.js'), '');
    const t3 = nodeImageTag(root);
    expect(t3).not.toBe(t2);
    writeFileSync(join(root, 'nodes', 'Dockerfile'), 'FROM y\n');
    const t4 = nodeImageTag(root);
    expect(t4).not.toBe(t3);
    expect(nodeImageTag(root, 'node:20-bookworm-slim')).not.toBe(t4);
  });

  it('asks for a build when dist/ is missing or empty', () => {
    rmSync(join(root, 'dist'), { recursive: true });
    expect(() => nodeImageTag(root)).toThrow(/dist is missing: run "make build" first/);
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist', '.built'), '');
    expect(() => nodeImageTag(root)).toThrow(/dist is empty: run "make build" first/);
  });
});

describe('repoRootFrom', () => {
  it('finds the checkout above a module, from sources', () => {
    const r = repoRootFrom(import.meta.url);
    expect(r).toMatch(/\/[^/]+$/);
    expect(join(r, 'harness', 'docker', 'node-image.test.ts')).toBe(new URL(import.meta.url).pathname);
  });
});

describe('pruning older node images', () => {
  it('parses docker images rows: tag and creation time in ms', () => {
    const rows = parseNodeImageRows('1ebfb6c19094f9f1\t2026-11-30 18:29:44 +0000 UTC\nb1e690006ee4f598\t2026-11-30 19:24:39 +0100 CET\nbroken\tyesterday\n\n');
    expect(rows).toEqual([
      { tag: '1ebfb6c19094f9f1', createdMs: Date.UTC(2026, 10, 30, 18, 29, 44) },
      { tag: 'b1e690006ee4f598', createdMs: Date.UTC(2026, 10, 30, 18, 24, 39) },
      { tag: 'broken', createdMs: 0 },
    ]);
  });

  it('keeps the current image and the newest older ones, removes the rest', () => {
    const rows = [
      { tag: 'a', createdMs: 1_000 },
      { tag: 'cur', createdMs: 500 },
      { tag: 'b', createdMs: 3_000 },
      { tag: 'c', createdMs: 2_000 },
      { tag: '<none>', createdMs: 9_000 },
      { tag: 'd', createdMs: 2_000 },
    ];
    expect(staleNodeImageTags(rows, 'cur', 2)).toEqual(['d', 'a']);
    expect(staleNodeImageTags(rows, 'cur', 0)).toEqual(['b', 'c', 'd', 'a']);
    expect(staleNodeImageTags(rows, 'cur', 10)).toEqual([]);
    expect(staleNodeImageTags(rows, 'b', -1)).toEqual(['c', 'd', 'a', 'cur']);
  });

  it('never names the current image, whatever the rows', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ tag: fc.constantFrom('a', 'b', 'c', 'd', 'cur'), createdMs: fc.nat() })), fc.integer({ min: -2, max: 6 }), (rows, keep) => {
        const stale = staleNodeImageTags(rows, 'cur', keep);
        expect(stale).not.toContain('cur');
        expect(stale.length).toBe(Math.max(0, rows.filter((r) => r.tag !== 'cur').length - Math.max(0, keep)));
      }),
    );
  });
});
