import type { ClientOptions, ErrorOutcome, ReadOutcome, TargetAttempt, TargetClient, TargetCluster, WriteOutcome, WriteRequest } from '../target.js';
import { endpointOf } from '../target.js';

/**
 * The outcome rules of the example store's client (Node's fetch): `fail` only when the request
 * surely never reached the store (the connection was refused: the node is down); everything else
 * (a timeout, a connection reset mid-request, an unknown error) may have been applied: `info`.
 */
export function classifyExampleError(error: unknown): ErrorOutcome {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  if (cause?.code === 'ECONNREFUSED') return { outcome: 'fail', status: 'ConnectionRefused' };
  if ((error as { name?: unknown } | null)?.name === 'TimeoutError') return { outcome: 'info', status: 'DeadlineExceeded' };
  return { outcome: 'info', status: typeof cause?.code === 'string' ? cause.code : 'Unknown' };
}

/**
 * The example target's client adapter: one HTTP request per operation to the one node (Node's
 * built-in fetch, bounded by the operation timeout), one attempt each. Every write carries a
 * sequence number, increasing per key in this adapter: the store applies a write only above the
 * key's last applied one, so a write the adapter gave up on (a paused node: it waits in the
 * socket) cannot take effect after a later write of its key (it is refused, Conflict).
 */
export class ExampleKvClient implements TargetClient {
  private readonly base: string;
  private readonly seqs = new Map<string, number>();
  private readonly timeoutMs: number;
  private closed = false;

  constructor(
    cluster: TargetCluster,
    private readonly opts: ClientOptions,
    private readonly node = cluster.nodes[0].id,
  ) {
    const e = endpointOf(cluster, this.node, 'http');
    this.base = `http://${e.host}:${e.port}`;
    this.timeoutMs = opts.operationTimeoutMs ?? 5_000;
  }

  private async call(pathAndQuery: string, body?: unknown): Promise<{ code: number; json: Record<string, unknown> }> {
    if (this.closed) throw new Error('example-kv client is closed');
    const res = await fetch(`${this.base}${pathAndQuery}`, {
      method: body === undefined ? 'GET' : 'POST',
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    return { code: res.status, json: (await res.json()) as Record<string, unknown> };
  }

  async write(req: WriteRequest): Promise<WriteOutcome> {
    const k = `${req.store}\u0000${req.key}`;
    const seq = (this.seqs.get(k) ?? 0) + 1;
    this.seqs.set(k, seq);
    const startMs = this.opts.now();
    const attempt = (status: string): TargetAttempt => ({ n: 1, node: this.node, status, epoch: 1, startMs, endMs: this.opts.now() });
    try {
      const { code, json } = await this.call('/write', { key: req.key, op: req.op, value: req.valueId, ifMatchVersion: req.ifMatchVersion, seq });
      const status = String(json.status);
      if (code === 200) return { outcome: 'ok', status: 'OK', ack: { node: this.node, epoch: 1, version: Number(json.version), revision: Number(json.revision) }, attempts: [attempt('OK')] };
      // a refusal applied nothing (Conflict, NotFound, InvalidInput)
      return { outcome: 'fail', status, attempts: [attempt(status)] };
    } catch (e) {
      const o = classifyExampleError(e);
      return { outcome: o.outcome, status: o.status, attempts: [attempt(o.status)] };
    }
  }

  async read(store: string, key: string): Promise<ReadOutcome> {
    return (await this.readMany(store, [key]))[0];
  }

  async readMany(_store: string, keys: readonly string[]): Promise<ReadOutcome[]> {
    try {
      const { code, json } = await this.call('/read-many', { keys });
      const values = Array.isArray(json.values) ? json.values : [];
      if (code !== 200 || values.length !== keys.length) return keys.map((key) => ({ key, outcome: 'fail', status: `HTTP${code}`, node: this.node, value: null }));
      return keys.map((key, i) => ({ key, outcome: 'ok', status: 'OK', node: this.node, value: typeof values[i] === 'string' ? (values[i] as string) : null }));
    } catch (e) {
      const o = classifyExampleError(e);
      return keys.map((key) => ({ key, outcome: o.outcome, status: o.status, node: this.node, value: null }));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
