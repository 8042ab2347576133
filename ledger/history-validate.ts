/**
 * Reading a history (shared/cases/history-format.md): a parsed JSON value checked field by field
 * and returned typed, with the first thing wrong named in a one-line HistoryFormatError.
 */
import { parseContract } from './contract.js';
import { FAULT_KINDS, FAULT_KINDS_V1, HISTORY_FORMAT_V1, HISTORY_FORMAT_V2, type History, type HistoryFault, type HistoryFinalRead, type HistoryFormat, HistoryFormatError, type HistoryOwnership, type HistoryPartition, type HistoryRead, type HistoryRun, type HistoryStall, type HistoryStore, type HistoryWrite, OUTCOMES, READ_KINDS, RUN_STATUSES, WRITE_OPS } from './history-types.js';

function bad(msg: string): never {
  throw new HistoryFormatError(msg);
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function obj(v: unknown, where: string): Obj {
  if (!isObj(v)) bad(`${where} must be an object`);
  return v;
}

function arr(v: unknown, where: string): unknown[] {
  if (!Array.isArray(v)) bad(`${where} must be an array`);
  return v;
}

function str(v: unknown, where: string): string {
  if (typeof v !== 'string' || v.length === 0) bad(`${where} must be a non-empty string`);
  return v;
}

function time(v: unknown, where: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) bad(`${where} must be a number of milliseconds >= 0`);
  return v;
}

function optTime(v: unknown, where: string): number | null {
  return v === undefined || v === null ? null : time(v, where);
}

function count(v: unknown, where: string, min: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) bad(`${where} must be an integer >= ${min}`);
  return v;
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[], where: string): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    const list = allowed.length === 2 ? `${allowed[0]} or ${allowed[1]}` : `${allowed.slice(0, -1).join(', ')} or ${allowed[allowed.length - 1]}`;
    bad(`${where} must be ${list}`);
  }
  return v as T;
}

function nodeRef(v: unknown, nodes: ReadonlySet<string>, where: string): string {
  const id = str(v, where);
  if (!nodes.has(id)) bad(`${where} names unknown node "${id}"`);
  return id;
}

function nodeList(v: unknown, nodes: ReadonlySet<string>, where: string): string[] {
  const list = arr(v, where);
  if (list.length === 0) bad(`${where} must list at least one node`);
  const out = list.map((n, i) => nodeRef(n, nodes, `${where}[${i}]`));
  if (new Set(out).size !== out.length) bad(`${where} lists a node twice`);
  return out;
}

function optNodeList(v: unknown, nodes: ReadonlySet<string>, where: string, allowEmpty: boolean): string[] | undefined {
  if (v === undefined) return undefined;
  if (allowEmpty && Array.isArray(v) && v.length === 0) return [];
  return nodeList(v, nodes, where);
}

/**
 * Validates a parsed JSON value as `zaris-history/1` or `zaris-history/2` (history-format.md)
 * and returns it typed, with only the known fields of its version copied (unknown fields are
 * ignored). Checks, beyond field types: every store, partition and node referenced is declared;
 * ids are unique (fault ids, write ids within a key, (store, key) of final reads, read ids); a
 * key's seqs are unique and its writes share one partition; `ack` is present exactly on `ok`
 * writes; `complete` is required unless the outcome is `info`, and is not before `invoke`; a
 * fault's `end` is not before its `start`, and `caughtUp` (kill/stop only) not before its `end`;
 * an unreadable final read has value null. v2 also: `run` (status, beyondBudget, asyncLagMaxMs
 * required; the extension `contract` as ledger/contract.ts checks it); a fault's `effective` not
 * before its `start`, `isolated` on partition faults only; samples' `node`, `inSync`, `revisions`,
 * `replicas` name declared nodes; `ack.copies` an integer >= 0; reads (value only on `ok`); the
 * extension `stalls` (a declared node, `end` not before `start`).
 * @throws HistoryFormatError whose one-line message names the bad field, e.g.
 *   `writes[3].outcome must be ok, fail or info`.
 */
export function validateHistory(raw: unknown): History {
  const r = obj(raw, 'history');
  if (r.format !== HISTORY_FORMAT_V1 && r.format !== HISTORY_FORMAT_V2) bad(`format must be "${HISTORY_FORMAT_V1}" or "${HISTORY_FORMAT_V2}"`);
  const format: HistoryFormat = r.format;
  const v2 = format === HISTORY_FORMAT_V2;
  let run: HistoryRun | undefined;
  if (v2) {
    const o = obj(r.run, 'run');
    const reason = o.inconclusiveReason;
    if (reason !== undefined && reason !== null && typeof reason !== 'string') bad('run.inconclusiveReason must be text or null');
    if (typeof o.beyondBudget !== 'boolean') bad('run.beyondBudget must be true or false');
    const bug = o.selfTestBug;
    if (bug !== undefined && bug !== null && typeof bug !== 'string') bad('run.selfTestBug must be text or null');
    run = {
      status: oneOf(o.status, RUN_STATUSES, 'run.status'),
      inconclusiveReason: typeof reason === 'string' ? reason : null,
      beyondBudget: o.beyondBudget,
      asyncLagMaxMs: time(o.asyncLagMaxMs, 'run.asyncLagMaxMs'),
      selfTestBug: typeof bug === 'string' ? bug : null,
    };
    if (o.leaseMs !== undefined) run.leaseMs = optTime(o.leaseMs, 'run.leaseMs');
    if (o.contract !== undefined) run.contract = parseContract(o.contract, 'run.contract', bad);
  }

  const nodes = arr(r.nodes, 'nodes').map((n, i) => str(n, `nodes[${i}]`));
  const nodeSet = new Set(nodes);
  if (nodeSet.size !== nodes.length) bad('nodes lists a node twice');

  const storeByName = new Map<string, HistoryStore>();
  const stores = arr(r.stores, 'stores').map((s, i): HistoryStore => {
    const w = `stores[${i}]`;
    const o = obj(s, w);
    const name = str(o.name, `${w}.name`);
    if (storeByName.has(name)) bad(`${w}.name "${name}" is declared twice`);
    const store: HistoryStore = {
      name,
      replicationFactor: count(o.replicationFactor, `${w}.replicationFactor`, 1),
      ackMode: oneOf(o.ackMode, ['sync', 'async'] as const, `${w}.ackMode`),
    };
    storeByName.set(name, store);
    return store;
  });

  const partitionKeys = new Set<string>();
  const partitions = arr(r.partitions, 'partitions').map((p, i): HistoryPartition => {
    const w = `partitions[${i}]`;
    const o = obj(p, w);
    const store = str(o.store, `${w}.store`);
    if (!storeByName.has(store)) bad(`${w}.store names unknown store "${store}"`);
    const partition = count(o.partition, `${w}.partition`, 0);
    const pk = `${store}\u0000${partition}`;
    if (partitionKeys.has(pk)) bad(`${w} declares partition ${partition} of store ${store} twice`);
    partitionKeys.add(pk);
    return { store, partition, replicas: nodeList(o.replicas, nodeSet, `${w}.replicas`) };
  });

  const checkPartition = (store: unknown, partition: unknown, w: string): { store: string; partition: number } => {
    const s = str(store, `${w}.store`);
    if (!storeByName.has(s)) bad(`${w}.store names unknown store "${s}"`);
    const p = count(partition, `${w}.partition`, 0);
    if (!partitionKeys.has(`${s}\u0000${p}`)) bad(`${w}.partition ${p} is not a partition of store ${s}`);
    return { store: s, partition: p };
  };

  const faultIds = new Set<string>();
  const faults = arr(r.faults, 'faults').map((f, i): HistoryFault => {
    const w = `faults[${i}]`;
    const o = obj(f, w);
    const id = str(o.id, `${w}.id`);
    if (faultIds.has(id)) bad(`${w}.id "${id}" is used twice`);
    faultIds.add(id);
    const kind = oneOf(o.kind, v2 ? FAULT_KINDS : FAULT_KINDS_V1, `${w}.kind`);
    const start = time(o.start, `${w}.start`);
    const end = optTime(o.end, `${w}.end`);
    if (end !== null && end < start) bad(`${w}.end must not be before its start`);
    const caughtUp = optTime(o.caughtUp, `${w}.caughtUp`);
    if (caughtUp !== null) {
      if (kind !== 'kill' && kind !== 'stop') bad(`${w}.caughtUp is only allowed on kill and stop faults`);
      if (end === null) bad(`${w}.caughtUp needs an end`);
      if (caughtUp < end) bad(`${w}.caughtUp must not be before its end`);
    }
    const fault: HistoryFault = { id, kind, nodes: nodeList(o.nodes, nodeSet, `${w}.nodes`), start };
    if (end !== null) fault.end = end;
    if (caughtUp !== null) fault.caughtUp = caughtUp;
    if (v2) {
      const effective = optTime(o.effective, `${w}.effective`);
      if (effective !== null) {
        if (effective < start) bad(`${w}.effective must not be before its start`);
        fault.effective = effective;
      }
      if (o.isolated !== undefined && o.isolated !== null) {
        if (kind !== 'partition') bad(`${w}.isolated is only allowed on partition faults`);
        fault.isolated = optNodeList(o.isolated, nodeSet, `${w}.isolated`, true);
      }
    }
    return fault;
  });

  const ownership = arr(r.ownership, 'ownership').map((s, i): HistoryOwnership => {
    const w = `ownership[${i}]`;
    const o = obj(s, w);
    const t = time(o.t, `${w}.t`);
    const { store, partition } = checkPartition(o.store, o.partition, w);
    const active = o.active === null ? null : nodeRef(o.active, nodeSet, `${w}.active`);
    const sample: HistoryOwnership = {
      t,
      store,
      partition,
      active,
      epoch: count(o.epoch, `${w}.epoch`, 0),
      health: str(o.health, `${w}.health`),
      replicatedRevision: count(o.replicatedRevision, `${w}.replicatedRevision`, 0),
    };
    if (v2) {
      if (o.node !== undefined && o.node !== null) sample.node = nodeRef(o.node, nodeSet, `${w}.node`);
      if (o.inSync !== undefined && o.inSync !== null) sample.inSync = optNodeList(o.inSync, nodeSet, `${w}.inSync`, true);
      if (o.revisions !== undefined && o.revisions !== null) {
        const revs = obj(o.revisions, `${w}.revisions`);
        const out: Record<string, number> = {};
        for (const [n, rev] of Object.entries(revs)) {
          if (!nodeSet.has(n)) bad(`${w}.revisions names unknown node "${n}"`);
          out[n] = count(rev, `${w}.revisions.${n}`, 0);
        }
        sample.revisions = out;
      }
      if (o.replicas !== undefined && o.replicas !== null) sample.replicas = nodeList(o.replicas, nodeSet, `${w}.replicas`);
    }
    return sample;
  });

  interface KeySeen {
    partition: number;
    seqs: Set<number>;
    ids: Set<string>;
  }
  const keys = new Map<string, KeySeen>();
  const writes = arr(r.writes, 'writes').map((x, i): HistoryWrite => {
    const w = `writes[${i}]`;
    const o = obj(x, w);
    const id = str(o.id, `${w}.id`);
    const { store, partition } = checkPartition(o.store, o.partition, w);
    const key = str(o.key, `${w}.key`);
    const seq = count(o.seq, `${w}.seq`, 1);
    const op = oneOf(o.op, WRITE_OPS, `${w}.op`);
    const invoke = time(o.invoke, `${w}.invoke`);
    const outcome = oneOf(o.outcome, OUTCOMES, `${w}.outcome`);
    const complete = optTime(o.complete, `${w}.complete`);
    if (complete === null && outcome !== 'info') bad(`${w}.complete is required when outcome is ${outcome}`);
    if (complete !== null && complete < invoke) bad(`${w}.complete must not be before its invoke`);
    const kk = `${store}\u0000${key}`;
    let seen = keys.get(kk);
    if (seen === undefined) {
      seen = { partition, seqs: new Set(), ids: new Set() };
      keys.set(kk, seen);
    } else if (seen.partition !== partition) {
      bad(`${w}.partition ${partition} differs from the partition of the key's other writes (${seen.partition})`);
    }
    if (seen.seqs.has(seq)) bad(`${w}.seq ${seq} is used twice for key ${key} of store ${store}`);
    if (seen.ids.has(id)) bad(`${w}.id "${id}" is used twice for key ${key} of store ${store}`);
    seen.seqs.add(seq);
    seen.ids.add(id);
    const write: HistoryWrite = { id, store, key, partition, seq, op, invoke, outcome };
    if (complete !== null) write.complete = complete;
    if (outcome === 'ok') {
      const a = obj(o.ack, `${w}.ack`);
      write.ack = {
        node: nodeRef(a.node, nodeSet, `${w}.ack.node`),
        epoch: count(a.epoch, `${w}.ack.epoch`, 0),
        version: count(a.version, `${w}.ack.version`, 0),
        revision: count(a.revision, `${w}.ack.revision`, 0),
        ackMode: oneOf(a.ackMode, ['sync', 'async'] as const, `${w}.ack.ackMode`),
      };
      if (v2 && a.copies !== undefined && a.copies !== null) write.ack.copies = count(a.copies, `${w}.ack.copies`, 0);
    } else if (o.ack !== undefined && o.ack !== null) {
      bad(`${w}.ack is only allowed when outcome is ok`);
    }
    if (o.status !== undefined) write.status = str(o.status, `${w}.status`);
    if (o.attempts !== undefined) write.attempts = count(o.attempts, `${w}.attempts`, 0);
    if (o.trace !== undefined) {
      if (typeof o.trace !== 'string') bad(`${w}.trace must be a string`);
      write.trace = o.trace;
    }
    return write;
  });

  const readIds = new Set<string>();
  const reads = !v2
    ? undefined
    : (r.reads === undefined ? [] : arr(r.reads, 'reads')).map((x, i): HistoryRead => {
        const w = `reads[${i}]`;
        const o = obj(x, w);
        const id = str(o.id, `${w}.id`);
        if (readIds.has(id)) bad(`${w}.id "${id}" is used twice`);
        readIds.add(id);
        const store = str(o.store, `${w}.store`);
        if (!storeByName.has(store)) bad(`${w}.store names unknown store "${store}"`);
        const key = str(o.key, `${w}.key`);
        const invoke = time(o.invoke, `${w}.invoke`);
        const outcome = oneOf(o.outcome, OUTCOMES, `${w}.outcome`);
        const complete = optTime(o.complete, `${w}.complete`);
        if (complete === null && outcome !== 'info') bad(`${w}.complete is required when outcome is ${outcome}`);
        if (complete !== null && complete < invoke) bad(`${w}.complete must not be before its invoke`);
        const node = o.node === undefined || o.node === null ? null : nodeRef(o.node, nodeSet, `${w}.node`);
        let value: string | null = null;
        if (outcome === 'ok') {
          if (o.value === undefined || (o.value !== null && typeof o.value !== 'string')) bad(`${w}.value must be a write id (string) or null`);
          value = o.value;
        } else if (o.value !== undefined && o.value !== null) {
          bad(`${w}.value is only allowed when outcome is ok`);
        }
        const read: HistoryRead = { id, store, key, invoke, outcome, node, value };
        if (complete !== null) read.complete = complete;
        if (o.kind !== undefined) read.kind = oneOf(o.kind, READ_KINDS, `${w}.kind`);
        return read;
      });

  const readKeys = new Set<string>();
  const finalReads = arr(r.finalReads, 'finalReads').map((x, i): HistoryFinalRead => {
    const w = `finalReads[${i}]`;
    const o = obj(x, w);
    const store = str(o.store, `${w}.store`);
    if (!storeByName.has(store)) bad(`${w}.store names unknown store "${store}"`);
    const key = str(o.key, `${w}.key`);
    const kk = `${store}\u0000${key}`;
    if (readKeys.has(kk)) bad(`${w} reads key ${key} of store ${store} a second time`);
    readKeys.add(kk);
    if (o.value !== null && typeof o.value !== 'string') bad(`${w}.value must be a write id (string) or null`);
    const read: HistoryFinalRead = { store, key, value: o.value };
    if (o.unreadable !== undefined) {
      if (typeof o.unreadable !== 'boolean') bad(`${w}.unreadable must be true or false`);
      if (o.unreadable && o.value !== null) bad(`${w}.value must be null when unreadable is true`);
      read.unreadable = o.unreadable;
    }
    return read;
  });

  const history: History = { format, nodes, stores, partitions, faults, ownership, writes, finalReads };
  if (!v2) return history;
  const out: History = { ...history, run, reads };
  if (r.stalls !== undefined) {
    out.stalls = arr(r.stalls, 'stalls').map((x, i): HistoryStall => {
      const w = `stalls[${i}]`;
      const o = obj(x, w);
      const stall = { node: nodeRef(o.node, nodeSet, `${w}.node`), start: time(o.start, `${w}.start`), end: time(o.end, `${w}.end`) };
      if (stall.end < stall.start) bad(`${w}.end must not be before its start`);
      return stall;
    });
  }
  return out;
}

/**
 * Parses history JSON text (history-format.md, v1 or v2) and validates it with
 * {@link validateHistory}.
 * @throws HistoryFormatError (one line) when the text is not JSON or the history is invalid.
 */
export function parseHistory(json: string): History {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (e) {
    bad(`not valid JSON: ${(e as Error).message.replace(/\s*\n\s*/g, ' ')}`);
  }
  return validateHistory(raw);
}
