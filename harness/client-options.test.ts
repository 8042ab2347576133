import { afterEach, describe, expect, it, vi } from 'vitest';
import { ZarisClient } from '../nodes/client/zaris-client.js';
import { checkClientEnv, clientOptionsRecord } from './client-options.js';
import { UsageError } from './usage-error.js';

const VARS = ['ZARIS_REQUEST_TIMEOUT', 'ZARIS_DISABLE_RETRIES', 'ZARIS_CLIENT_MAP_REFRESH_WAIT_MS'];

/** A client built as certify builds the workload's: no options but the seeds. */
function workloadClient(): ZarisClient {
  return new ZarisClient({ seeds: [{ host: '127.0.0.1', port: 1 }] });
}

describe('the workload client runs with the library defaults unless ZARIS_* variables say otherwise', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('records seed 000 defaults and no variables when none is set', () => {
    for (const v of VARS) vi.stubEnv(v, undefined);
    const c = workloadClient();
    expect(clientOptionsRecord(c.options, process.env)).toEqual({
      maxAttempts: 3,
      backoffMillis: 100,
      timeoutMs: 60_000,
      disableRetries: false,
      mapRefreshWaitMs: 15_000,
      attemptTimeoutMs: 2_000,
      metadataTimeoutMs: 500,
      env: {},
    });
    c.close();
  });

  it('records the values the variables set, and which variables set them', () => {
    vi.stubEnv('ZARIS_REQUEST_TIMEOUT', '30s');
    vi.stubEnv('ZARIS_DISABLE_RETRIES', 'true');
    vi.stubEnv('ZARIS_CLIENT_MAP_REFRESH_WAIT_MS', '2500');
    const c = workloadClient();
    const r = clientOptionsRecord(c.options, process.env);
    expect(r).toMatchObject({ timeoutMs: 30_000, disableRetries: true, mapRefreshWaitMs: 2_500, maxAttempts: 3 });
    expect(r.env).toEqual({ ZARIS_REQUEST_TIMEOUT: '30s', ZARIS_DISABLE_RETRIES: 'true', ZARIS_CLIENT_MAP_REFRESH_WAIT_MS: '2500' });
    c.close();
  });

  it('records "infinite" as no deadline, and a blank variable as not set', () => {
    vi.stubEnv('ZARIS_REQUEST_TIMEOUT', 'infinite');
    vi.stubEnv('ZARIS_DISABLE_RETRIES', '  ');
    vi.stubEnv('ZARIS_CLIENT_MAP_REFRESH_WAIT_MS', undefined);
    const c = workloadClient();
    const r = clientOptionsRecord(c.options, process.env);
    expect(r.timeoutMs).toBeNull();
    expect(r.disableRetries).toBe(false);
    expect(r.env).toEqual({ ZARIS_REQUEST_TIMEOUT: 'infinite' });
    c.close();
  });

  it('refuses a bad variable as a usage error naming it, before anything starts', () => {
    expect(() => checkClientEnv({ ZARIS_REQUEST_TIMEOUT: 'soon' })).toThrow(UsageError);
    expect(() => checkClientEnv({ ZARIS_REQUEST_TIMEOUT: 'soon' })).toThrow(/ZARIS_REQUEST_TIMEOUT="soon"/);
    expect(() => checkClientEnv({ ZARIS_DISABLE_RETRIES: 'maybe' })).toThrow(/ZARIS_DISABLE_RETRIES/);
    expect(() => checkClientEnv({ ZARIS_CLIENT_MAP_REFRESH_WAIT_MS: '-1' })).toThrow(/ZARIS_CLIENT_MAP_REFRESH_WAIT_MS/);
    expect(() => checkClientEnv({})).not.toThrow();
  });
});
