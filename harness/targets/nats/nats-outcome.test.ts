import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyNatsError, natsRetryable } from './nats-outcome.js';

/** A nats.js-shaped error (NatsError has `code`, and `api_error` for JetStream API errors). */
function natsError(code: string, api?: { code: number; err_code?: number; description: string }): Error {
  const e = new Error(code) as Error & { code: string; api_error?: unknown };
  e.name = 'NatsError';
  e.code = code;
  if (api) e.api_error = api;
  return e;
}

describe('NATS outcome rules', () => {
  it('no responders (no stream leader) is a definite failure, retried', () => {
    const o = classifyNatsError(natsError('503'));
    expect(o).toEqual({ outcome: 'fail', status: 'NoResponders' });
    expect(natsRetryable(o)).toBe(true);
  });

  it('a JetStream API error in the PubAck is a definite failure named by its err_code, not retried', () => {
    expect(classifyNatsError(natsError('400', { code: 400, err_code: 10071, description: 'wrong last sequence: 4' }))).toEqual({ outcome: 'fail', status: 'JS10071' });
    // JetStream's own 503 (temporarily unavailable) comes with api_error: refused, not "no responders"
    const js503 = classifyNatsError(natsError('503', { code: 503, err_code: 10008, description: 'jetstream temporarily unavailable' }));
    expect(js503).toEqual({ outcome: 'fail', status: 'JS10008' });
    expect(natsRetryable(js503)).toBe(false);
    expect(classifyNatsError(natsError('500', { code: 500, description: 'no err_code' }))).toEqual({ outcome: 'fail', status: 'JSError' });
  });

  it('a timeout is indeterminate and retried (same Nats-Msg-Id); a closed connection is indeterminate', () => {
    const t = classifyNatsError(natsError('TIMEOUT'));
    expect(t).toEqual({ outcome: 'info', status: 'Timeout' });
    expect(natsRetryable(t)).toBe(true);
    expect(classifyNatsError(natsError('CONNECTION_CLOSED'))).toEqual({ outcome: 'info', status: 'ConnectionClosed' });
    expect(natsRetryable(classifyNatsError(natsError('CONNECTION_CLOSED')))).toBe(false);
    expect(classifyNatsError(natsError('CANCELLED'))).toEqual({ outcome: 'info', status: 'Cancelled' });
    expect(classifyNatsError(natsError('DISCONNECT'))).toEqual({ outcome: 'info', status: 'Disconnect' });
  });

  it('anything else is indeterminate: unknown codes, plain errors, non-errors', () => {
    expect(classifyNatsError(natsError('BAD_HEADER'))).toEqual({ outcome: 'info', status: 'BAD_HEADER' });
    expect(classifyNatsError(new Error('boom'))).toEqual({ outcome: 'info', status: 'Error' });
    expect(classifyNatsError('boom')).toEqual({ outcome: 'info', status: 'Error' });
    expect(classifyNatsError(null)).toEqual({ outcome: 'info', status: 'Error' });
    expect(classifyNatsError(natsError('a code with spaces'))).toEqual({ outcome: 'info', status: 'Error' });
  });

  it('property: without a JetStream API error, only "503" is ever a failure', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.constantFrom('TIMEOUT', '503', 'CONNECTION_CLOSED', '404', '408', '409')), fc.anything(), (code, other) => {
        const e = Object.assign(new Error('x'), { code, other });
        const o = classifyNatsError(e);
        expect(o.outcome === 'fail').toBe(code === '503');
        if (code === '503') expect(o.status).toBe('NoResponders');
        expect(o.status).toMatch(/^[A-Za-z0-9_]{1,40}$/);
      }),
    );
  });

  it('property: with a JetStream API error, always a failure whatever the code', () => {
    fc.assert(
      fc.property(fc.string(), fc.option(fc.integer({ min: 10000, max: 10999 }), { nil: undefined }), (code, errCode) => {
        const o = classifyNatsError(Object.assign(new Error('x'), { code, api_error: { code: 400, err_code: errCode, description: 'd' } }));
        expect(o).toEqual({ outcome: 'fail', status: errCode === undefined ? 'JSError' : `JS${errCode}` });
      }),
    );
  });
});
