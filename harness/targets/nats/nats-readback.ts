/**
 * The mapping of a JetStream stream onto the verifier's per-key model (the NATS target's final
 * read; docs/targets.md "NATS JetStream").
 *
 * The verifier judges keys: per key, its writes in order and one final read F (a value id, or
 * absent). A stream is an append log, so the NATS target makes every publish a key of its own:
 * the workload writes each key once (`writesPerKey` 1..1), as one message on the subject
 * `<prefix>.<store>.<key>` whose `Nats-Msg-Id` header is the write's value id `w<key_id>.1`. After
 * the heal the whole stream is read back and each key's F is:
 * - its value id when a message of the key carries it (present);
 * - absent when no message of the key was read and the read was complete;
 * - unknown (the key stays unverified) when the read was incomplete and found none;
 * - the offending id (or `(no Nats-Msg-Id)`) when a message on the key's subject carries any other
 *   id: no write of the ledger has it, so the verifier reports `unexpected`.
 * Then the verifier's own rules say the rest: an acknowledged publish absent is `lost` (the
 * contract claims no loss: a violation); a publish that failed (`fail`) but is present is a
 * `phantom`; an indeterminate one present is `recovered` (fine, counted). The same value id read
 * again at another sequence is a duplicate: JetStream promises at-least-once, so duplicates are
 * counted here ({@link StreamReadback.duplicates}), never a finding. A message on a subject that
 * names no workload key is counted as an anomaly (no key to hang it on).
 *
 * Memory: one number per key id (a growable Float64Array of first sequences), plus maps for the
 * rare anomalies; about 8 bytes per publish, flat in the number of distinct subjects.
 */

/** The value a message without a `Nats-Msg-Id` header stands for (it names no write). */
export const NO_MSG_ID = '(no Nats-Msg-Id)';

/** At most this many duplicated ids are kept as samples (all are counted). */
export const DUPLICATE_SAMPLES = 20;

/** The subject of a workload key: `<prefix>.<store>.<key>`. */
export function subjectOf(prefix: string, store: string, key: string): string {
  return `${prefix}.${store}.${key}`;
}

/** The key id of a workload key name `k<key_id>` (positive integer), or null. */
export function keyIdOf(key: string): number | null {
  const m = /^k([1-9][0-9]{0,14})$/.exec(key);
  return m ? Number(m[1]) : null;
}

/** The value id of the only write of key `keyId` (the workload's write id of sequence 1). */
export function onlyWriteId(keyId: number): string {
  return `w${keyId}.1`;
}

/**
 * Accumulates one read of a stream (messages in any order, each once per sequence) and answers
 * each key's final value. Not thread-safe; one instance per read.
 */
export class StreamReadback {
  private first = new Float64Array(1024);
  /** Keys whose messages carry an id other than their only write's: the first such id. */
  private readonly odd = new Map<number, string>();
  /** Duplicated ids: id -> sequences (first {@link DUPLICATE_SAMPLES} ids only). */
  private readonly dupSamples = new Map<string, number[]>();
  private readonly prefixDot: string;
  /** Messages added. */
  read = 0;
  /** Distinct keys with at least one message. */
  keys = 0;
  /** Messages whose value id was already read (at another sequence). */
  duplicates = 0;
  /** Messages on subjects that name no workload key, or with an id other than their key's. */
  anomalies = 0;
  /** Highest sequence added (0: none). */
  lastSeq = 0;

  /** @param prefix the stream's subject prefix; @param store the workload store its keys belong to. */
  constructor(prefix: string, private readonly store: string) {
    this.prefixDot = `${prefix}.${store}.`;
  }

  /**
   * Adds one message: its stream sequence (>= 1), subject and `Nats-Msg-Id` (null: none).
   * @throws RangeError for a sequence that is not a positive integer.
   */
  add(seq: number, subject: string, msgId: string | null): void {
    if (!Number.isSafeInteger(seq) || seq < 1) throw new RangeError(`stream sequence must be a positive integer, got ${seq}`);
    this.read++;
    if (seq > this.lastSeq) this.lastSeq = seq;
    const keyId = subject.startsWith(this.prefixDot) ? keyIdOf(subject.slice(this.prefixDot.length)) : null;
    if (keyId === null) {
      this.anomalies++;
      return;
    }
    const id = msgId ?? NO_MSG_ID;
    const wasThere = this.has(keyId) || this.odd.has(keyId);
    if (id !== onlyWriteId(keyId)) {
      this.anomalies++;
      if (!this.odd.has(keyId)) this.odd.set(keyId, id);
      if (!wasThere) this.keys++;
      return;
    }
    if (this.has(keyId)) {
      this.duplicates++;
      let seqs = this.dupSamples.get(id);
      if (seqs === undefined && this.dupSamples.size < DUPLICATE_SAMPLES) {
        seqs = [this.first[keyId]];
        this.dupSamples.set(id, seqs);
      }
      seqs?.push(seq);
      return;
    }
    if (!wasThere) this.keys++;
    this.grow(keyId);
    this.first[keyId] = seq;
  }

  private has(keyId: number): boolean {
    return keyId < this.first.length && this.first[keyId] > 0;
  }

  private grow(keyId: number): void {
    if (keyId < this.first.length) return;
    let n = this.first.length;
    while (n <= keyId) n *= 2;
    const next = new Float64Array(n);
    next.set(this.first);
    this.first = next;
  }

  /** The sequence of a key's first message carrying its value id, or null. */
  seqOf(key: string): number | null {
    const id = keyIdOf(key);
    return id !== null && this.has(id) ? this.first[id] : null;
  }

  /**
   * A key's final value (see the module comment): the odd id when one was read, else its value id
   * when present, else null when `complete`, else undefined (unknown). A store other than this
   * read's, or a key name that is no workload key: undefined.
   */
  valueOf(store: string, key: string, complete: boolean): string | null | undefined {
    if (store !== this.store) return undefined;
    const keyId = keyIdOf(key);
    if (keyId === null) return undefined;
    const odd = this.odd.get(keyId);
    if (odd !== undefined) return odd;
    if (this.has(keyId)) return onlyWriteId(keyId);
    return complete ? null : undefined;
  }

  /** Up to {@link DUPLICATE_SAMPLES} duplicated ids with every sequence they were read at. */
  duplicateSamples(): Array<{ id: string; seqs: number[] }> {
    return [...this.dupSamples].map(([id, seqs]) => ({ id, seqs: [...seqs] }));
  }
}
