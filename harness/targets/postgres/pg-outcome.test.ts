import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTarget } from '../targets.js';
import { classifyPgError, NO_CONNECTION, NotSentError } from './pg-outcome.js';
import pg from 'pg';
import { GuardedPgClient } from './pg-client.js';

/** An error shaped like the ones pg 8 raises for a server message (DatabaseError: code, severity). */
const serverError = (code: string, severity: string): Error => Object.assign(new Error(`server said ${code}`), { code, severity });

describe('PostgreSQL write outcomes', () => {
  it('nothing sent or an ERROR for the statement is fail; a FATAL, a lost connection or a timeout is info', () => {
    expect(classifyPgError(new NotSentError(NO_CONNECTION, new Error('connect ECONNREFUSED')))).toEqual({ outcome: 'fail', status: 'NoConnection' });
    expect(classifyPgError(serverError('25006', 'ERROR'))).toEqual({ outcome: 'fail', status: 'ReadOnly' });
    expect(classifyPgError(serverError('40001', 'ERROR'))).toEqual({ outcome: 'fail', status: 'SerializationFailure' });
    expect(classifyPgError(serverError('57P01', 'FATAL'))).toEqual({ outcome: 'info', status: 'AdminShutdown' });
    expect(classifyPgError(serverError('XX000', 'PANIC'))).toEqual({ outcome: 'info', status: 'SQLSTATE-XX000' });
    expect(classifyPgError(new Error('Connection terminated unexpectedly'))).toEqual({ outcome: 'info', status: 'ConnectionLost' });
    expect(classifyPgError(new Error('Query read timeout'))).toEqual({ outcome: 'info', status: 'Timeout' });
    expect(classifyPgError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toEqual({ outcome: 'info', status: 'ECONNRESET' });
    expect(classifyPgError('not an error')).toEqual({ outcome: 'info', status: 'Error' });
  });

  it('property: only an error met before sending or a server ERROR is fail; everything else may have committed (info)', () => {
    const errArb = fc.oneof(
      fc.record({ sent: fc.constant(false as const), status: fc.string({ minLength: 1, maxLength: 12 }) }),
      fc.record({ sent: fc.constant(true as const), code: fc.stringMatching(/^[0-9A-Z]{5}$/), severity: fc.constantFrom('ERROR', 'FATAL', 'PANIC') }),
      fc.record({ sent: fc.constant(true as const), message: fc.string({ maxLength: 30 }), code: fc.option(fc.constantFrom('ECONNRESET', 'EPIPE', 'ETIMEDOUT'), { nil: undefined }) }),
    );
    fc.assert(
      fc.property(errArb, (x) => {
        if (!x.sent) {
          expect(classifyPgError(new NotSentError(x.status))).toEqual({ outcome: 'fail', status: x.status });
          return;
        }
        if ('severity' in x) {
          expect(classifyPgError(serverError(x.code, x.severity)).outcome).toBe(x.severity === 'ERROR' ? 'fail' : 'info');
          return;
        }
        const e = Object.assign(new Error(x.message), x.code === undefined ? {} : { code: x.code });
        expect(classifyPgError(e).outcome).toBe('info');
      }),
      { seed: 20261205, numRuns: 300 },
    );
  });

  it('PATRONI_SYNC is refused in one line on another target or with another value', async () => {
    await expect(createTarget('etcd', { patroniSync: 'strict' })).rejects.toThrow(/^PATRONI_SYNC applies to TARGET=postgres-patroni only, not etcd$/);
    await expect(createTarget('postgres-patroni', { patroniSync: 'on' as never })).rejects.toThrow(/^PATRONI_SYNC must be off or strict, got on$/);
  });
});

describe("the adapter's connections", () => {
  it("hear their own 'error' events from the moment they are made (an unheard one would end the run)", () => {
    const fatal = Object.assign(new Error('terminating connection due to unexpected postmaster exit'), { code: '57P01', severity: 'FATAL' });
    // a plain pg.Client without a listener throws the event out (the failure this guards against)
    expect(() => new pg.Client({ host: '127.0.0.1' }).emit('error', fatal)).toThrow(/unexpected postmaster exit/);
    const c = new GuardedPgClient({ host: '127.0.0.1' });
    expect(c.listenerCount('error')).toBe(1);
    expect(c.emit('error', fatal)).toBe(true);
  });
});
