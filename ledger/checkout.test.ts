import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkoutRootFrom, distPath } from './checkout.js';

describe('checkoutRootFrom / distPath (ledger/checkout.ts)', () => {
  it('finds the checkout above this module (a package.json named zaris-certify), and none above a foreign folder', () => {
    const root = checkoutRootFrom(import.meta.url)!;
    expect(path.basename(path.dirname(new URL(import.meta.url).pathname))).toBe('ledger');
    expect(root).toBe(path.resolve(path.dirname(new URL(import.meta.url).pathname), '..'));
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-checkout-'));
    try {
      // a package.json of another name is walked past
      writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name: 'other' }));
      expect(checkoutRootFrom(pathToFileURL(path.join(tmp, 'x.js')).href)).toBeNull();
      expect(() => distPath(pathToFileURL(path.join(tmp, 'x.js')).href, 'ledger/checkout.js')).toThrow(/^no zaris-certify checkout above /);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('names the compiled file, or says to build when it is missing', () => {
    expect(distPath(import.meta.url, 'ledger/checkout.js')).toBe(path.join(checkoutRootFrom(import.meta.url)!, 'dist', 'ledger', 'checkout.js'));
    expect(() => distPath(import.meta.url, 'ledger/no-such-file.js')).toThrow(/no-such-file\.js is missing: run make build$/);
  });
});
