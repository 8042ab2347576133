import assert from 'node:assert';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHarnessBug, isTransientError, isWorldError, WorldError, worldErrorOf, worldErrorReason } from './runtime-errors.js';

/** An error as dockerode makes it from an engine answer. */
function engineError(statusCode: number, text: string): Error {
  return Object.assign(new Error(`(HTTP code ${statusCode}) ${statusCode >= 500 ? 'server error' : 'unexpected'} - ${text}`), { statusCode });
}

describe('runtime errors: transient or not, world or harness', () => {
  it('calls the docker exec race of issue 22 transient, wrapped or not', () => {
    const raw = 'OCI runtime exec failed: exec failed: unable to start container process: read init-p: connection reset by peer';
    expect(isTransientError(new Error(raw))).toBe(true);
    expect(isTransientError(new Error(`docker runtime: partition in n1 failed (exit 126): ${raw}`))).toBe(true);
  });

  it('calls engine 5xx answers, socket errors, timeouts and the xtables lock transient', () => {
    expect(isTransientError(engineError(500, 'driver failed programming external connectivity'))).toBe(true);
    expect(isTransientError(engineError(503, 'service unavailable'))).toBe(true);
    expect(isTransientError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(true);
    expect(isTransientError(Object.assign(new Error('connect ECONNREFUSED /var/run/docker.sock'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isTransientError(new Error('socket hang up'))).toBe(true);
    expect(isTransientError(Object.assign(new Error('Command timed out after 30000 milliseconds: iptables -w 10 -F x'), { timedOut: true }))).toBe(true);
    expect(isTransientError(new Error('iptables -w 10 -A x: Another app is currently holding the xtables lock. Stopped waiting after 10s.'))).toBe(true);
  });

  it('calls refusals that a second attempt meets again permanent', () => {
    expect(isTransientError(engineError(404, 'No such container: 1f2e'))).toBe(false);
    expect(isTransientError(engineError(409, 'Container 1f2e is not running'))).toBe(false);
    expect(isTransientError(new Error('node n2 exited during start-up (see runs/x/nodes/n2.log)'))).toBe(false);
    expect(isTransientError(new Error("iptables v1.8.9 (nf_tables): Couldn't load target `DROPX'"))).toBe(false);
    expect(isTransientError('connection reset by peer')).toBe(false); // not an Error: nothing to retry on
  });

  it('never retries a harness bug or a world error whose retries are over', () => {
    expect(isHarnessBug(new TypeError('x is undefined'))).toBe(true);
    expect(isHarnessBug(new RangeError('bad'))).toBe(true);
    let assertion: unknown;
    try {
      assert.strictEqual(1, 2);
    } catch (e) {
      assertion = e;
    }
    expect(isHarnessBug(assertion)).toBe(true);
    expect(isHarnessBug(new Error('connection reset by peer'))).toBe(false);
    expect(isTransientError(new TypeError('connection reset by peer'))).toBe(false);
    const w = new WorldError('partition: read init-p: connection reset by peer (4 attempts)', { source: 'runtime', op: 'partition', attempts: 4, transient: true });
    expect(isTransientError(w)).toBe(false);
    expect(isWorldError(w)).toBe(true);
  });

  it('wraps a failed call as a one-line WorldError naming the call and its attempts; an engine answer is the engine\'s', () => {
    const w = worldErrorOf(new Error('docker runtime: partition in n1 failed (exit 126): OCI runtime exec failed: read init-p: connection reset by peer\nmore'), { source: 'runtime', op: 'partition', attempts: 4 });
    assert(isWorldError(w));
    expect(w.message).toBe('partition: docker runtime: partition in n1 failed (exit 126): OCI runtime exec failed: read init-p: connection reset by peer (4 attempts)');
    expect(w.transient).toBe(true);
    expect(w.source).toBe('runtime');
    expect(worldErrorReason(w)).toBe(`runtime error: ${w.message}`);
    const e = worldErrorOf(engineError(500, 'oops'), { source: 'runtime', op: 'pause n2', attempts: 1 });
    assert(isWorldError(e));
    expect(e.source).toBe('engine');
    expect(e.message).toBe('pause n2: (HTTP code 500) server error - oops');
    expect(worldErrorReason(e)).toBe('Docker engine error: pause n2: (HTTP code 500) server error - oops');
    const bug = new TypeError('boom');
    expect(worldErrorOf(bug, { source: 'runtime', op: 'kill n1', attempts: 1 })).toBe(bug);
  });

  it('property: any message wraps to one line that starts with the call; programming errors are never the world\'s', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom('kill n1', 'partition', 'cluster start'), fc.integer({ min: 1, max: 9 }), fc.constantFrom<'runtime' | 'target'>('runtime', 'target'), (msg, op, attempts, source) => {
        const w = worldErrorOf(new Error(msg), { source, op, attempts });
        assert(isWorldError(w));
        expect(w.message.includes('\n')).toBe(false);
        expect(w.message.startsWith(`${op}: `)).toBe(true);
        expect(w.attempts).toBe(attempts);
        for (const Bug of [TypeError, RangeError, ReferenceError]) {
          const b = new Bug(msg);
          expect(isTransientError(b)).toBe(false);
          expect(worldErrorOf(b, { source, op, attempts })).toBe(b);
        }
      }),
    );
  });
});
