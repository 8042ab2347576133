/**
 * `make test` runs the whole suite and then the tests that must run alone (the Makefile's
 * SOLO_TESTS), so that on a machine with every capability nothing is left unrun (issue 11), and
 * keeps the first failure's exit status.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const makefile = readFileSync(`${root}/Makefile`, 'utf8');
const recipe = makefile.slice(makefile.indexOf('\ntest:'), makefile.indexOf('\n\n', makefile.indexOf('\ntest:')));
const solo = /^SOLO_TESTS := (.+)$/m.exec(makefile)?.[1].trim().split(/\s+/) ?? [];

describe('make test', () => {
  it('names its solo tests, and each exists and gates itself on ZARIS_TEST_REDIS_FAILOVER', () => {
    expect(solo.length).toBeGreaterThan(0);
    for (const f of solo) {
      expect(existsSync(`${root}/${f}`), f).toBe(true);
      expect(readFileSync(`${root}/${f}`, 'utf8')).toMatch(/process\.env\.ZARIS_TEST_REDIS_FAILOVER === '1'/);
    }
  });

  it('runs the suite without the solo tests, then the solo tests with their switch on, and keeps the first failure', () => {
    const suite = recipe.indexOf("npx vitest run --exclude '$(SOLO_TESTS)'");
    const alone = recipe.indexOf('ZARIS_TEST_REDIS_FAILOVER=1 npx vitest run $(SOLO_TESTS)');
    expect(suite).toBeGreaterThan(0);
    expect(alone).toBeGreaterThan(suite);
    // a failing suite is not hidden by passing solo tests, nor the other way round
    expect(recipe).toMatch(/\|\| st=\$\$\?;/);
    expect(recipe).toMatch(/\[ \$\$st -ne 0 \] \|\| st=\$\$s/);
    expect(recipe.trimEnd().endsWith('exit $$st')).toBe(true);
  });
});
