import { describe, expect, it } from 'vitest';
import { defaultMayHaveBeenSent, isTransportError, TRANSPORT_ERROR_KINDS, TransportError } from './transport-error.js';

describe('TransportError (seed 000)', () => {
  it('defaults mayHaveBeenSent by kind', () => {
    expect(TRANSPORT_ERROR_KINDS.map((k) => [k, new TransportError(k).mayHaveBeenSent])).toEqual([
      ['PartitionUnavailable', false],
      ['NodeUnavailable', false],
      ['Transport', true],
      ['Socket', true],
      ['Timeout', true],
      ['ConnectRefused', false],
    ]);
    expect(TRANSPORT_ERROR_KINDS.filter(defaultMayHaveBeenSent)).toEqual(['Transport', 'Socket', 'Timeout']);
  });

  it('takes an explicit mayHaveBeenSent, message and cause', () => {
    const cause = new Error('ECONNRESET');
    const e = new TransportError('NodeUnavailable', { mayHaveBeenSent: true, cause });
    expect([e.kind, e.mayHaveBeenSent, e.cause, e.name]).toEqual(['NodeUnavailable', true, cause, 'TransportError']);
    expect(e.message).toBe('transport failure: NodeUnavailable (request may have been sent)');
    expect(new TransportError('Socket', { mayHaveBeenSent: false, message: 'connect EHOSTUNREACH' }).message).toBe('connect EHOSTUNREACH');
    expect(isTransportError(e)).toBe(true);
    expect(isTransportError(new Error('x'))).toBe(false);
    expect(e).toBeInstanceOf(Error);
  });

  it('refuses a sent ConnectRefused and an unknown kind', () => {
    expect(() => new TransportError('ConnectRefused', { mayHaveBeenSent: true })).toThrow(RangeError);
    expect(() => new TransportError('Reset' as never)).toThrow(/unknown transport error kind "Reset"/);
  });
});
