import type { IResponseHeader } from 'etcd3';
import type { ClientOptions, ReadOutcome, TargetAck, TargetAttempt, TargetClient, WriteOutcome, WriteRequest } from '../target.js';
import { classifyEtcdError, etcdNotSent } from './etcd-outcome.js';
import type { EtcdMembers } from './etcd-members.js';

/** Ops of one etcd transaction at most (etcd's --max-txn-ops default is 128). */
export const ETCD_TXN_OPS = 100;

/** The etcd key of a workload key: `<store>/<key>`. */
export function etcdKey(store: string, key: string): Buffer {
  return Buffer.from(`${store}/${key}`);
}

/** The fence key of a workload key (never deleted; its mod revision is that of the key's last write of any kind). */
export function etcdFenceKey(store: string, key: string): Buffer {
  return Buffer.from(`zaris-certify-fence/${store}/${key}`);
}

/**
 * The etcd client adapter (issue 15) over etcd3 1.1.2, one client per member, etcd3's own
 * retries and circuit breakers off (every attempt is recorded):
 * - put: `Put`; create: a `Txn` comparing the key's create revision with 0; cas: a `Txn` comparing
 *   its mod revision with `ifMatchVersion`; delete: `DeleteRange` (deleting nothing is NotFound).
 *   A failed comparison is `Conflict`: fail (the Txn applied nothing).
 * - The ack: `epoch` = the response header's Raft term, `node` = the leader of that term (from the
 *   term book the sampler and this adapter fill through Status calls; when no member can say any
 *   more, the member that answered, and the attempt says so), `version` = `revision` = the header's
 *   store revision (the key's mod revision after a put: it only grows, across leaders too).
 * - Attempts go to the leader of the newest term known, else round-robin. Only a call that surely
 *   never left the client (no connection) moves on to the next member, up to one attempt per
 *   member; every other error ends the write with the outcome of {@link classifyEtcdError} and
 *   starts a background round of Status calls, so the next operations go to the current leader
 *   (as etcd's own client moves to another endpoint when one fails).
 * - Reads: `Range` (linearizable: etcd's default), a batch is one `Txn` of ranges per 100 keys.
 * - The fence: a request etcd received but had not yet handled when the client gave up on it (a
 *   paused member: the bytes wait in its socket, and gRPC starts the request's deadline when it
 *   reads them, after the resume) is applied when the member wakes, possibly after later writes
 *   of the same key were acknowledged: etcd may, an indeterminate write may take effect at any
 *   later time, but the ledger orders a key's writes by their sequence and would see the later
 *   ack lost (a 90 s docker run: 27 acks overwritten by puts sent to a member paused 14 s).
 *   So every write is one `Txn` that also puts the key's fence key (`etcdFenceKey`, never
 *   deleted) and applies only if the fence's mod revision is at most the highest store revision
 *   the adapter had seen in any response when it sent the write. A later write of the key
 *   acknowledged in between has a higher revision, so the late one is refused (Conflict, nothing
 *   applied); a write not late applies, since the key's last acknowledged write was seen. A write
 *   sent just after an indeterminate one that then applied at a revision not yet seen is refused
 *   too (Conflict: a definite failure).
 */
export class EtcdClient implements TargetClient {
  private rr = 0;
  /** The highest store revision any response header named so far (0: none yet). */
  private maxRevision = 0;
  private refreshing: Promise<void> | null = null;
  private closed = false;
  private readonly timeoutMs: number;

  constructor(
    private readonly members: EtcdMembers,
    private readonly opts: ClientOptions,
  ) {
    this.timeoutMs = opts.operationTimeoutMs ?? 5_000;
  }

  /** Member order for one operation: the newest known leader first, then the rest round-robin. */
  private order(): string[] {
    const ids = this.members.cluster.nodes.map((n) => n.id);
    const start = this.rr++ % ids.length;
    const rot = [...ids.slice(start), ...ids.slice(0, start)];
    const leader = this.members.terms.latest();
    return leader && rot.includes(leader) ? [leader, ...rot.filter((n) => n !== leader)] : rot;
  }

  async write(req: WriteRequest): Promise<WriteOutcome> {
    if (this.closed) throw new Error('etcd client is closed');
    const attempts: TargetAttempt[] = [];
    const deadline = Date.now() + this.timeoutMs;
    const key = etcdKey(req.store, req.key);
    const fence = etcdFenceKey(req.store, req.key);
    const value = Buffer.from(req.valueId);
    for (const node of this.order()) {
      const startMs = this.opts.now();
      const c = this.members.client(node);
      const callOpts = { deadline };
      let header: IResponseHeader;
      let status = 'OK';
      try {
        // the fence (see the class comment): this write applies only while the key's last write
        // is one the adapter had seen the revision of when it sent this one
        const seen = this.maxRevision > 0 ? this.maxRevision : await this.learnRevision(c, fence, callOpts);
        const fenced = { key: fence, target: 'Mod' as const, result: 'Less' as const, mod_revision: seen + 1 };
        const guard =
          req.op === 'create'
            ? [{ key, target: 'Create' as const, result: 'Equal' as const, create_revision: 0 }, fenced]
            : req.op === 'cas'
              ? [{ key, target: 'Mod' as const, result: 'Equal' as const, mod_revision: req.ifMatchVersion ?? 0 }, fenced]
              : [fenced];
        const change = req.op === 'delete' ? { request_delete_range: { key } } : { request_put: { key, value } };
        const r = await c.kv.txn({ compare: guard, success: [change, { request_put: { key: fence, value: Buffer.alloc(0) } }], failure: [] }, callOpts);
        header = r.header;
        this.saw(header);
        if (!r.succeeded) status = 'Conflict';
        else if (req.op === 'delete' && Number(r.responses[0]?.response_delete_range?.deleted ?? 0) === 0) status = 'NotFound';
      } catch (e) {
        const o = classifyEtcdError(e);
        attempts.push({ n: attempts.length + 1, node, status: o.status, startMs, endMs: this.opts.now() });
        if (o.outcome === 'fail' && etcdNotSent(o) && Date.now() < deadline) continue;
        // the member did not answer in time or refused: learn where the leader is now (in the
        // background, one round at a time) so the next operations go there
        this.refreshLeader();
        return { outcome: o.outcome, status: o.status, attempts };
      }
      const term = Number(header!.raft_term);
      const endMs = this.opts.now();
      attempts.push({ n: attempts.length + 1, node, status, epoch: term, startMs, endMs });
      // every earlier attempt surely never left the client: a refused condition changed nothing
      if (status !== 'OK') return { outcome: 'fail', status, attempts };
      const revision = Number(header!.revision);
      const leader = await this.leaderOf(term, String(header!.member_id), node);
      if (!leader.known) attempts[attempts.length - 1].note = `no member could name the leader of term ${term}: the ack names the member that answered`;
      const ack: TargetAck = { node: leader.node, epoch: term, version: revision, revision };
      return { outcome: 'ok', status, ack, attempts };
    }
    // every member refused the connection
    return { outcome: 'fail', status: attempts[attempts.length - 1]?.status ?? 'NoConnection', attempts };
  }

  /** Notes the store revision of a response header (the fence's bound only grows). */
  private saw(header: IResponseHeader | undefined): void {
    const r = Number(header?.revision ?? 0);
    if (r > this.maxRevision) this.maxRevision = r;
  }

  /** The store revision now, from a read of `fence` on the member at hand (only before the first header). */
  private async learnRevision(c: ReturnType<EtcdMembers['client']>, fence: Buffer, callOpts: { deadline: number }): Promise<number> {
    const r = await c.kv.range({ key: fence }, callOpts);
    this.saw(r.header);
    return this.maxRevision;
  }

  /**
   * The node that led `term`: the term book, else a Status call to the member that answered (and
   * then to every member) to learn it. Falls back to the answering member's node when no member is
   * still in that term (a term shorter than a sampling round that nobody reported).
   */
  private async leaderOf(term: number, memberId: string, answered: string): Promise<{ node: string; known: boolean }> {
    const known = this.members.terms.get(term);
    if (known) return { node: known, known: true };
    const answering = (await this.members.nodeOf(memberId)) ?? answered;
    await this.members.status(answering, 1_000);
    if (!this.members.terms.get(term)) await Promise.all(this.members.cluster.nodes.map((n) => this.members.status(n.id, 1_000)));
    const learned = this.members.terms.get(term);
    return learned ? { node: learned, known: true } : { node: answering, known: false };
  }

  /** Asks every member's Status (which feeds the term book), one round at a time, in the background. */
  private refreshLeader(): void {
    if (this.refreshing || this.closed) return;
    this.refreshing = Promise.all(this.members.cluster.nodes.map((n) => this.members.status(n.id, 1_000))).then(() => {
      this.refreshing = null;
    });
  }

  async read(store: string, key: string): Promise<ReadOutcome> {
    return (await this.readMany(store, [key]))[0];
  }

  async readMany(store: string, keys: readonly string[]): Promise<ReadOutcome[]> {
    if (this.closed) throw new Error('etcd client is closed');
    const out: ReadOutcome[] = [];
    for (let i = 0; i < keys.length; i += ETCD_TXN_OPS) out.push(...(await this.readChunk(store, keys.slice(i, i + ETCD_TXN_OPS))));
    return out;
  }

  private async readChunk(store: string, keys: readonly string[]): Promise<ReadOutcome[]> {
    const deadline = Date.now() + this.timeoutMs;
    let last: { outcome: 'fail' | 'info'; status: string; node: string | null } = { outcome: 'fail', status: 'NoConnection', node: null };
    for (const node of this.order()) {
      try {
        const r = await this.members.client(node).kv.txn({ success: keys.map((k) => ({ request_range: { key: etcdKey(store, k) } })) }, { deadline });
        this.saw(r.header);
        return keys.map((k, i) => {
          const kv = r.responses[i]?.response_range?.kvs?.[0];
          return { key: k, outcome: 'ok' as const, status: kv ? 'OK' : 'NotFound', node, value: kv ? Buffer.from(kv.value).toString('utf8') : null };
        });
      } catch (e) {
        const o = classifyEtcdError(e);
        last = { ...o, node };
        if (!(etcdNotSent(o) && Date.now() < deadline)) {
          this.refreshLeader();
          break;
        }
      }
    }
    return keys.map((k) => ({ key: k, outcome: last.outcome, status: last.status, node: last.node, value: null }));
  }

  /** Closes the member clients. */
  async close(): Promise<void> {
    this.closed = true;
    await this.refreshing;
    this.members.close();
  }
}
