import fc from 'fast-check';
import { ReplyError } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { classifyRedisError, MASTER_UNCONFIRMED } from './redis-outcome.js';

const reply = (msg: string): Error => new ReplyError(msg);

describe('Redis outcome rules', () => {
  it('refusals Redis gives before running the script are fail', () => {
    expect(classifyRedisError(reply("READONLY You can't write against a read only replica."))).toEqual({ outcome: 'fail', status: 'READONLY' });
    expect(classifyRedisError(reply('NOREPLICAS Not enough good replicas to write.'))).toEqual({ outcome: 'fail', status: 'NOREPLICAS' });
    expect(classifyRedisError(reply('MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.'))).toEqual({ outcome: 'fail', status: 'MASTERDOWN' });
    expect(classifyRedisError(reply('LOADING Redis is loading the dataset in memory'))).toEqual({ outcome: 'fail', status: 'LOADING' });
    expect(classifyRedisError(reply('NOSCRIPT No matching script. Please use EVAL.'))).toEqual({ outcome: 'fail', status: 'NOSCRIPT' });
    expect(classifyRedisError(reply('BUSY Redis is busy running a script.'))).toEqual({ outcome: 'fail', status: 'BUSY' });
  });

  it('what ioredis or the adapter never sent is fail', () => {
    expect(classifyRedisError(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toEqual({ outcome: 'fail', status: 'NotConnected' });
    expect(classifyRedisError(new Error(MASTER_UNCONFIRMED))).toEqual({ outcome: 'fail', status: MASTER_UNCONFIRMED });
  });

  it('timeouts, lost connections and errors from inside a script are info', () => {
    expect(classifyRedisError(new Error('Command timed out'))).toEqual({ outcome: 'info', status: 'Timeout' });
    expect(classifyRedisError(new Error('Connection is closed.'))).toEqual({ outcome: 'info', status: 'ConnectionClosed' });
    expect(classifyRedisError(reply('ERR Error running script (call to f_x): @user_script:9: Script attempted to access nonexistent global variable'))).toEqual({ outcome: 'info', status: 'ERR' });
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(classifyRedisError(reset)).toEqual({ outcome: 'info', status: 'ECONNRESET' });
    expect(classifyRedisError(42)).toEqual({ outcome: 'info', status: 'Error' });
  });

  it('property: an error reply whose code is not a refusal is never fail', () => {
    const refused = new Set(['READONLY', 'NOREPLICAS', 'MASTERDOWN', 'LOADING', 'BUSY', 'NOSCRIPT', 'OOM', 'NOAUTH', 'WRONGTYPE']);
    fc.assert(
      fc.property(fc.string(), (msg) => {
        fc.pre(!refused.has(msg.split(/\s/, 1)[0]));
        expect(classifyRedisError(reply(msg)).outcome).toBe('info');
      }),
      { seed: 15, numRuns: 2_000 },
    );
  });

  it('property: a plain error is fail only for the two never-sent messages', () => {
    fc.assert(
      fc.property(fc.string(), (msg) => {
        fc.pre(!msg.startsWith("Stream isn't writeable") && msg !== MASTER_UNCONFIRMED);
        expect(classifyRedisError(new Error(msg)).outcome).toBe('info');
      }),
      { seed: 15, numRuns: 2_000 },
    );
  });
});
