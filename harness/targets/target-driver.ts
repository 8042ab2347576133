/**
 * A target's client adapter as the workload's driver (harness/workload-driver.ts): the workload
 * records each write at invoke before the driver sends it, and completes it with what the
 * adapter says, exactly as for the Zaris client (DESIGN.md §4): outcome ok / fail / info by the
 * store's own client rules, the attempt trace (`{n, s, node, e, t0, t1, note}` per attempt), and
 * on ok the ack's node, epoch, version, revision (and copies where the store says) with the
 * store's configured ack mode.
 */
import type { DriverBatch, DriverRead, DriverWrite, DriverWriteRequest, TraceAttempt, WorkloadDriver } from '../workload-driver.js';
import { round3 } from '../workload-driver.js';
import type { TargetAttempt, TargetClient } from './target.js';

/** One adapter attempt as the ledger's trace records it. */
export function traceOf(a: TargetAttempt): TraceAttempt {
  return { n: a.n, s: a.status, node: a.node, ...(a.epoch !== undefined ? { e: a.epoch } : {}), t0: round3(a.startMs), t1: round3(a.endMs), ...(a.note ? { note: a.note } : {}) };
}

/** The workload's driver over a {@link TargetClient}. */
export class TargetDriver implements WorkloadDriver {
  /** @param driverName the client library, e.g. `etcd3 1.1.2` (Target.clientLibrary). */
  constructor(
    private readonly client: TargetClient,
    readonly driverName: string,
  ) {}

  async write(req: DriverWriteRequest): Promise<DriverWrite> {
    const o = await this.client.write({ store: req.store, key: req.key, op: req.op, valueId: req.valueId, ...(req.op === 'cas' ? { ifMatchVersion: req.ifMatchVersion } : {}) });
    const attempts = o.attempts.length > 0 ? o.attempts.map(traceOf) : [{ n: 1, s: o.status, node: null, t0: 0, t1: 0, note: 'the adapter reported no attempt' }];
    if (o.outcome === 'ok' && o.ack) {
      const a = o.ack;
      return { outcome: 'ok', status: o.status, ack: { node: a.node, epoch: a.epoch, version: a.version, revision: a.revision, ackMode: req.ackMode, ...(a.copies !== undefined ? { copies: a.copies } : {}) }, attempts };
    }
    return {
      outcome: o.outcome === 'ok' ? 'info' : o.outcome,
      status: o.status,
      attempts,
      ...(o.outcome === 'fail' && (o.status === 'Conflict' || o.status === 'NotFound') ? { staleView: true } : {}),
    };
  }

  async read(store: string, key: string): Promise<DriverRead> {
    const r = await this.client.read(store, key);
    return { outcome: r.outcome, node: r.node, value: r.outcome === 'ok' ? r.value : null, statusName: `get:${r.status}` };
  }

  async readMany(store: string, keys: readonly string[]): Promise<DriverBatch> {
    const rs = await this.client.readMany(store, keys);
    const answers = new Map<string, { node: string | null; value: string | null }>();
    for (const r of rs) if (r.outcome === 'ok') answers.set(r.key, { node: r.node, value: r.value });
    const failed = rs.find((r) => r.outcome !== 'ok');
    return { answers, statusName: answers.size < keys.length ? `getMany:${failed?.status ?? 'incomplete'}` : 'getMany:Ok' };
  }
}
