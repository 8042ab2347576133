/**
 * example-kv: the store of the example target (docs/targets.md, "Write a target for your own
 * store"): one node, an in-memory map of keys, every write appended to a log file in its data
 * folder and fsynced before it is acknowledged, the log replayed at start. Small on purpose: the
 * example is about the target around it, not about the store.
 *
 * HTTP on `<host>:<port>` (node:http), JSON bodies:
 * - `POST /write` `{ key, op: put|cas|create|delete, value, ifMatchVersion?, seq }`: 200
 *   `{ status: 'OK', version, revision }` once the write is on disk; 409 `{ status: 'Conflict' }`
 *   (create of a present key, cas on another version, or a late write: `seq` not above the
 *   key's last applied one), 404 `{ status: 'NotFound' }` (delete of an absent key); a refused
 *   write changes nothing. `version` counts the key's applied writes, `revision` every applied
 *   write of the store; both survive restarts.
 * - `GET /read?key=K` and `POST /read-many` `{ keys }`: `{ values: [value or null, ...] }`.
 * - `GET /status`: `{ revision }` (the sampler's view).
 *
 * Usage: `node example-kv-server.js <host> <port> <dataDir>`. Writes are group-committed: the
 * writes of one event-loop turn share one write() and one fsync().
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';

/** One key's state; `value` null after a delete. */
interface Entry {
  value: string | null;
  version: number;
  /** The highest client sequence number applied (the fence against late writes). */
  seq: number;
}

/** One line of the log: the key's state after the write, and the store's revision. */
interface LogLine {
  k: string;
  v: string | null;
  ver: number;
  seq: number;
  rev: number;
}

/** What a write answers (HTTP status and JSON body). */
export interface WriteAnswer {
  code: 200 | 400 | 404 | 409;
  body: Record<string, unknown>;
}

/**
 * The store's state machine (pure but for the log it is given): `apply` decides a write and
 * returns the log line to persist (null when refused) with the answer.
 */
export class ExampleKv {
  readonly keys = new Map<string, Entry>();
  revision = 0;

  /** Replays log text: every complete line in order; a torn last line (a crash mid-append) is ignored. */
  replay(text: string): void {
    for (const line of text.split('\n')) {
      let l: LogLine;
      try {
        l = JSON.parse(line) as LogLine;
      } catch {
        continue;
      }
      this.keys.set(l.k, { value: l.v, version: l.ver, seq: l.seq });
      this.revision = Math.max(this.revision, l.rev);
    }
  }

  /** Decides one write (see the module comment). */
  apply(w: { key?: unknown; op?: unknown; value?: unknown; ifMatchVersion?: unknown; seq?: unknown }): { line: LogLine | null; answer: WriteAnswer } {
    const bad = (why: string): { line: null; answer: WriteAnswer } => ({ line: null, answer: { code: 400, body: { status: 'InvalidInput', why } } });
    if (typeof w.key !== 'string' || typeof w.seq !== 'number' || !['put', 'cas', 'create', 'delete'].includes(w.op as string)) return bad('key, op and seq are required');
    if (w.op !== 'delete' && typeof w.value !== 'string') return bad('value is required');
    const e = this.keys.get(w.key);
    const present = e !== undefined && e.value !== null;
    const refuse = (code: 404 | 409, status: string): { line: null; answer: WriteAnswer } => ({ line: null, answer: { code, body: { status } } });
    if (e !== undefined && w.seq <= e.seq) return refuse(409, 'Conflict');
    if (w.op === 'create' && present) return refuse(409, 'Conflict');
    if (w.op === 'cas' && (!present || e.version !== w.ifMatchVersion)) return refuse(409, 'Conflict');
    if (w.op === 'delete' && !present) return refuse(404, 'NotFound');
    const version = (e?.version ?? 0) + 1;
    const line: LogLine = { k: w.key, v: w.op === 'delete' ? null : (w.value as string), ver: version, seq: w.seq, rev: ++this.revision };
    this.keys.set(w.key, { value: line.v, version, seq: w.seq });
    return { line, answer: { code: 200, body: { status: 'OK', version, revision: line.rev } } };
  }

  /** The value of a key, null when absent. */
  read(key: string): string | null {
    return this.keys.get(key)?.value ?? null;
  }
}

function body(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
        resolve(typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});
      } catch {
        resolve({});
      }
    });
  });
}

/**
 * Starts the store: replays `<dataDir>/example-kv.log`, listens on host:port.
 * @returns the HTTP server (listening).
 */
export function startExampleKv(host: string, port: number, dataDir: string): Promise<http.Server> {
  const file = path.join(dataDir, 'example-kv.log');
  const kv = new ExampleKv();
  if (existsSync(file)) kv.replay(readFileSync(file, 'utf8'));
  const fd = openSync(file, 'a');
  // group commit: the writes of one turn are written and fsynced together, then answered
  let pending: Array<{ line: LogLine; done: () => void }> = [];
  const flush = (): void => {
    const batch = pending;
    pending = [];
    writeSync(fd, batch.map((p) => `${JSON.stringify(p.line)}\n`).join(''));
    fsyncSync(fd);
    for (const p of batch) p.done();
  };
  const send = (res: http.ServerResponse, code: number, b: unknown): void => {
    res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(b));
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/status') return send(res, 200, { revision: kv.revision });
    if (req.method === 'GET' && url.pathname === '/read') return send(res, 200, { values: [kv.read(url.searchParams.get('key') ?? '')] });
    void body(req).then((b) => {
      if (req.method === 'POST' && url.pathname === '/read-many') return send(res, 200, { values: (Array.isArray(b.keys) ? b.keys : []).map((k) => kv.read(String(k))) });
      if (req.method !== 'POST' || url.pathname !== '/write') return send(res, 404, { status: 'NoSuchEndpoint' });
      const { line, answer } = kv.apply(b);
      if (line === null) return send(res, answer.code, answer.body);
      if (pending.length === 0) setImmediate(flush);
      pending.push({ line, done: () => send(res, answer.code, answer.body) });
    });
  });
  server.on('close', () => closeSync(fd));
  return new Promise((resolve) => server.listen(port, host, () => resolve(server)));
}

// run as a program: node example-kv-server.js <host> <port> <dataDir>
if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${path.resolve(process.argv[1])}`).href) {
  const [host, port, dataDir] = process.argv.slice(2);
  if (!host || !port || !dataDir || !Number.isInteger(Number(port))) {
    process.stderr.write('usage: example-kv-server <host> <port> <dataDir>\n');
    process.exit(64);
  }
  void startExampleKv(host, Number(port), dataDir).then(() => process.stdout.write(`example-kv listening on ${host}:${port}\n`));
}
