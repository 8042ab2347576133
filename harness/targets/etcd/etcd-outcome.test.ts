import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyEtcdError, etcdNotSent } from './etcd-outcome.js';

/** etcd3's cast errors keep grpc-js's message form: `<code> <NAME>: <details>`. */
function grpcError(name: string, message: string): Error {
  const e = new Error(message);
  e.name = name;
  return e;
}

const DEFINITE_MARKERS = ['No connection established', 'raft proposal dropped', 'etcdserver: no leader', 'etcdserver: too many requests', 'etcdserver: request is too large', 'etcdserver: not capable', 'database space exceeded', 'etcdserver: no space'];

describe('etcd outcome rules', () => {
  it('a call that never got a connection is a definite failure, and the only one another member may retry', () => {
    const o = classifyEtcdError(grpcError('GRPCUnavailableError', '14 UNAVAILABLE: No connection established. Last error: Error: connect ECONNREFUSED 127.1.2.11:2379. Resolution note: '));
    expect(o).toEqual({ outcome: 'fail', status: 'NoConnection' });
    expect(etcdNotSent(o)).toBe(true);
    expect(etcdNotSent({ outcome: 'fail', status: 'NoLeader' })).toBe(false);
  });

  it('refusals before the proposal are fail', () => {
    expect(classifyEtcdError(grpcError('GRPCUnknownError', '2 UNKNOWN: raft proposal dropped'))).toEqual({ outcome: 'fail', status: 'ProposalDropped' });
    expect(classifyEtcdError(grpcError('GRPCUnavailableError', '14 UNAVAILABLE: etcdserver: no leader'))).toEqual({ outcome: 'fail', status: 'NoLeader' });
    expect(classifyEtcdError(grpcError('GRPCResourceExhastedError', '8 RESOURCE_EXHAUSTED: etcdserver: too many requests'))).toEqual({ outcome: 'fail', status: 'TooManyRequests' });
    expect(classifyEtcdError(grpcError('GRPCResourceExhastedError', '8 RESOURCE_EXHAUSTED: etcdserver: mvcc: database space exceeded'))).toEqual({ outcome: 'fail', status: 'NoSpace' });
    const closed = new Error('etcd3 client closed');
    closed.name = 'ClientClosedError';
    expect(classifyEtcdError(closed)).toEqual({ outcome: 'fail', status: 'ClientClosed' });
  });

  it('timeouts, a stopping server and lost connections are info', () => {
    expect(classifyEtcdError(grpcError('GRPCDeadlineExceededError', '4 DEADLINE_EXCEEDED: Deadline exceeded after 1.501s,remote_addr=127.1.2.11:2379'))).toEqual({ outcome: 'info', status: 'DeadlineExceeded' });
    expect(classifyEtcdError(grpcError('GRPCUnavailableError', '14 UNAVAILABLE: etcdserver: request timed out, possibly due to previous leader failure'))).toEqual({ outcome: 'info', status: 'RequestTimedOut' });
    expect(classifyEtcdError(grpcError('GRPCUnavailableError', '14 UNAVAILABLE: etcdserver: server stopped'))).toEqual({ outcome: 'info', status: 'ServerStopped' });
    expect(classifyEtcdError(grpcError('GRPCUnavailableError', '14 UNAVAILABLE: Connection dropped'))).toEqual({ outcome: 'info', status: 'Unavailable' });
    expect(classifyEtcdError(grpcError('GRPCCancelledError', '1 CANCELLED: Call cancelled'))).toEqual({ outcome: 'info', status: 'Cancelled' });
    expect(classifyEtcdError(grpcError('GRPCInternalError', '13 INTERNAL: Received RST_STREAM with code 2'))).toEqual({ outcome: 'info', status: 'GRPCInternalError' });
    expect(classifyEtcdError('not an error')).toEqual({ outcome: 'info', status: 'Error' });
  });

  it('property: an error without a definite marker is never fail (unknown means indeterminate)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (name, message) => {
        fc.pre(!DEFINITE_MARKERS.some((m) => message.includes(m)) && name !== 'ClientClosedError');
        expect(classifyEtcdError(grpcError(name, message)).outcome).toBe('info');
      }),
      { seed: 15, numRuns: 2_000 },
    );
  });

  it('property: a definite marker anywhere in the message makes it fail', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom(...DEFINITE_MARKERS), fc.string(), (pre, marker, post) => {
        expect(classifyEtcdError(grpcError('GRPCGenericError', `${pre}${marker}${post}`)).outcome).toBe('fail');
      }),
      { seed: 15, numRuns: 500 },
    );
  });
});
