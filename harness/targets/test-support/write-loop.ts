import type { TargetClient, WriteOutcome } from '../target.js';

/** One write a test's loop made, with its outcome. */
export interface LoggedWrite {
  key: string;
  seq: number;
  valueId: string;
  invokeMs: number;
  completeMs: number;
  out: WriteOutcome;
}

/**
 * A bounded write loop for target tests: `keys` keys, each written sequentially (plain puts of
 * value ids `<key>.<seq>`) until stop() or `maxWrites` per key. Keeps every outcome.
 */
export class WriteLoop {
  readonly log: LoggedWrite[] = [];
  private stopped = false;
  private readonly loops: Promise<void>[];

  constructor(
    private readonly client: TargetClient,
    private readonly store: string,
    keys: readonly string[],
    private readonly opts: { maxWrites?: number; pauseMs?: number } = {},
  ) {
    this.loops = keys.map((k) => this.run(k));
  }

  private async run(key: string): Promise<void> {
    const max = this.opts.maxWrites ?? 100_000;
    for (let seq = 1; seq <= max && !this.stopped; seq++) {
      const valueId = `${key}.${seq}`;
      const invokeMs = performance.now();
      const out = await this.client.write({ store: this.store, key, op: 'put', valueId });
      this.log.push({ key, seq, valueId, invokeMs, completeMs: performance.now(), out });
      if (this.opts.pauseMs) await new Promise((r) => setTimeout(r, this.opts.pauseMs));
    }
  }

  /** Resolves once `pred` holds for some logged write (checked every 50 ms), or rejects after timeoutMs. */
  async until(pred: (w: LoggedWrite) => boolean, timeoutMs: number, what: string): Promise<LoggedWrite> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.log.find(pred);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${this.log.length} writes: ${JSON.stringify(this.counts())})`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
  }

  /** Writes by outcome and status, e.g. { 'ok OK': 120, 'info DeadlineExceeded': 3 }. */
  counts(): Record<string, number> {
    const c: Record<string, number> = {};
    for (const w of this.log) c[`${w.out.outcome} ${w.out.status}`] = (c[`${w.out.outcome} ${w.out.status}`] ?? 0) + 1;
    return c;
  }

  /**
   * The keys whose final value (`finals`: key -> value id or null) contradicts the log: per key,
   * the final value must be the last acknowledged write or a write after it whose outcome is
   * `info` (recovered); anything else (a lost ack, a failed write's value) is returned with why.
   */
  contradictions(finals: ReadonlyMap<string, string | null>): string[] {
    const byKey = new Map<string, LoggedWrite[]>();
    for (const w of this.log) byKey.set(w.key, [...(byKey.get(w.key) ?? []), w]);
    const out: string[] = [];
    for (const [key, ws] of byKey) {
      ws.sort((a, b) => a.seq - b.seq);
      const lastOk = ws.map((w) => w.out.outcome).lastIndexOf('ok');
      const allowed = new Set(ws.filter((w, i) => i === lastOk || (i > lastOk && w.out.outcome === 'info')).map((w) => w.valueId));
      const v = finals.get(key) ?? null;
      if (lastOk < 0 && v === null) continue;
      if (v === null || !allowed.has(v)) out.push(`${key}: final ${v}, last ack ${lastOk >= 0 ? ws[lastOk].valueId : 'none'}`);
    }
    return out;
  }
}
