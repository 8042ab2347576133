import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeImageRef, nodeImageTag, repoRootFrom } from './node-image.js';

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
