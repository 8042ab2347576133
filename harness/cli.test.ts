import { afterEach, describe, expect, it, vi } from 'vitest';
import { CommanderError } from 'commander';
import { buildCli } from './cli.js';
import { certify } from './certify.js';
import type { CertifyOptions } from './certify/options.js';
import { UsageError } from './usage-error.js';

/** The certify command's options that reach certify() before anything starts. */
describe('certify arguments: ASYNC_LAG and the client variables', () => {
  afterEach(() => vi.unstubAllEnvs());

  async function parseError(args: string[]): Promise<CommanderError> {
    try {
      await buildCli().parseAsync(['certify', ...args], { from: 'user' });
    } catch (e) {
      return e as CommanderError;
    }
    throw new Error('expected the arguments to be refused');
  }

  it('refuses an --async-lag that is not a duration, in one line', async () => {
    for (const bad of ['soon', '1000', '0s', '-1s']) {
      const e = await parseError(['--async-lag', bad]);
      expect(e).toBeInstanceOf(CommanderError);
      expect(e.code).toBe('commander.invalidArgument');
      expect(e.message).toContain(`"${bad}"`);
      expect(e.message).not.toContain('\n');
    }
  });

  const base: CertifyOptions = {
    durationMs: 1_000,
    seed: 1,
    runtime: 'process',
    faults: [],
    faultsExplicit: true,
    beyondBudget: false,
    runsDir: '/nonexistent/never-created',
    rate: 100,
    writersPerStore: 1,
    keysPerWriter: 1,
    escalationTimeoutMs: 10_000,
  };

  it('refuses a bad ZARIS_* variable as a usage error before sweeping or starting anything', async () => {
    vi.stubEnv('ZARIS_REQUEST_TIMEOUT', 'whenever');
    await expect(certify(base)).rejects.toThrow(UsageError);
    await expect(certify(base)).rejects.toThrow(/ZARIS_REQUEST_TIMEOUT="whenever"/);
  });

  it('refuses a lag bound that is not above zero', async () => {
    await expect(certify({ ...base, asyncLagMaxMs: 0 })).rejects.toThrow(/ASYNC_LAG/);
    await expect(certify({ ...base, asyncLagMaxMs: Number.NaN })).rejects.toThrow(UsageError);
  });
});
