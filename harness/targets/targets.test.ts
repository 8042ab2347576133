import { describe, expect, it } from 'vitest';
import { createTarget, isTargetName, TARGET_NAMES } from './targets.js';

describe('createTarget', () => {
  it('zaris runs on the Zaris runtimes: no Target', async () => {
    expect(await createTarget('zaris')).toBeNull();
  });

  it('etcd and redis-sentinel load their module on demand and name themselves', async () => {
    expect((await createTarget('etcd'))?.name).toBe('etcd');
    expect((await createTarget('redis-sentinel'))?.name).toBe('redis-sentinel');
    expect((await createTarget('redis-sentinel', { redisMinReplicas: 0 }))?.name).toBe('redis-sentinel');
    expect((await createTarget('example-kv'))?.nodeIds).toEqual(['n1']);
    expect((await createTarget('nats-jetstream'))?.name).toBe('nats-jetstream');
    expect((await createTarget('nats-jetstream', { natsReads: true }))?.workload).toEqual({ writesPerKey: { min: 1, max: 1 } });
  });

  it('refuses a setting the target does not take, or a value out of range, with a RangeError', async () => {
    await expect(createTarget('etcd', { redisMinReplicas: 1 })).rejects.toThrow(/REDIS_MIN_REPLICAS applies to TARGET=redis-sentinel only, not etcd/);
    await expect(createTarget('zaris', { redisMinReplicas: 1 })).rejects.toThrow(RangeError);
    await expect(createTarget('etcd', { natsReads: true })).rejects.toThrow(/NATS_READS applies to TARGET=nats-jetstream only, not etcd/);
    await expect(createTarget('redis-sentinel', { redisMinReplicas: 3 })).rejects.toThrow(/must be 0, 1 or 2/);
    await expect(createTarget('redis-sentinel', { redisMinReplicas: 1.5 })).rejects.toThrow(/must be 0, 1 or 2/);
  });

  it('knows every TARGET name and no other', () => {
    expect(TARGET_NAMES.every(isTargetName)).toBe(true);
    expect(TARGET_NAMES).toEqual(['zaris', 'etcd', 'redis-sentinel', 'nats-jetstream', 'postgres-patroni', 'example-kv']);
    expect(isTargetName('cassandra')).toBe(false);
  });
});
