/**
 * A key's staged rows in key_log form (key-packer.ts): rows sorted in place, and merged into the
 * row the key already has (each write once by its seq, each read once by its rid).
 */
import { unpackRows } from './column-pack.js';
import { KR_FIELDS, KW_FIELDS, packKey, parseExtra, type KeyExtra } from './key-log.js';

/** Sorts n rows of `fields` numbers in place (rarely needed: rows mostly arrive in order). */
export function sortRows(data: Float64Array, n: number, fields: number, cmp: (a: Float64Array, b: Float64Array) => number): void {
  const rows: Float64Array[] = [];
  for (let i = 0; i < n; i++) rows.push(data.slice(i * fields, (i + 1) * fields));
  rows.sort(cmp);
  rows.forEach((r, i) => data.set(r, i * fields));
}

/** A key's stored key_log row (its packed writes, packed reads and extra texts). */
export interface StoredKeyRow {
  writes: Buffer | null;
  reads: Buffer | null;
  extra: string | null;
}

/**
 * Merges staged rows (nW write rows of KW_FIELDS in `sw`, nR read rows of KR_FIELDS in `sr`, their
 * texts in `extra`) into a key's stored row: each write once (by seq), each read once (by rid);
 * writes in seq order, reads in (invoke, rid) order.
 * @returns the packed row to store and the number of writes it adds.
 */
export function mergeKeyRow(
  old: StoredKeyRow,
  sw: Float64Array,
  nW: number,
  sr: Float64Array,
  nR: number,
  extra: KeyExtra,
): { row: ReturnType<typeof packKey>; added: number } {
  let added = 0;
  const oe = parseExtra(old.extra) ?? {};
  const ow = old.writes === null ? { n: 0, rows: new Float64Array(0) } : unpackRows(old.writes);
  const or = old.reads === null ? { n: 0, rows: new Float64Array(0) } : unpackRows(old.reads);
  const seqs = new Set<number>();
  for (let i = 0; i < ow.n; i++) seqs.add(ow.rows[i * KW_FIELDS]);
  const rids = new Set<number>();
  for (let i = 0; i < or.n; i++) rids.add(or.rows[i * KR_FIELDS]);
  const W = new Float64Array((ow.n + nW) * KW_FIELDS);
  W.set(ow.rows.subarray(0, ow.n * KW_FIELDS));
  let w = ow.n;
  const traces = new Map<number, string>(oe.t ?? []);
  const newTraces = new Map<number, string>(extra.t ?? []);
  for (let i = 0; i < nW; i++) {
    const seq = sw[i * KW_FIELDS];
    if (seqs.has(seq)) continue;
    seqs.add(seq);
    W.set(sw.subarray(i * KW_FIELDS, (i + 1) * KW_FIELDS), w * KW_FIELDS);
    const t = newTraces.get(seq);
    if (t !== undefined) traces.set(seq, t);
    w++;
    added++;
  }
  sortRows(W, w, KW_FIELDS, (a, b) => a[0] - b[0]);
  const R = new Float64Array((or.n + nR) * KR_FIELDS);
  R.set(or.rows.subarray(0, or.n * KR_FIELDS));
  const readText = new Map<number, string>();
  for (const [pos, t] of oe.x ?? []) readText.set(or.rows[pos * KR_FIELDS], t);
  for (const [pos, t] of extra.x ?? []) readText.set(sr[pos * KR_FIELDS], t);
  let r = or.n;
  for (let i = 0; i < nR; i++) {
    if (rids.has(sr[i * KR_FIELDS])) continue;
    R.set(sr.subarray(i * KR_FIELDS, (i + 1) * KR_FIELDS), r * KR_FIELDS);
    r++;
  }
  sortRows(R, r, KR_FIELDS, (a, b) => a[1] - b[1] || a[0] - b[0]);
  const merged: KeyExtra = {};
  if (traces.size > 0) merged.t = [...traces].sort((a, b) => a[0] - b[0]);
  for (let j = 0; j < r; j++) {
    const t = readText.get(R[j * KR_FIELDS]);
    if (t !== undefined) (merged.x ??= []).push([j, t]);
  }
  return { row: packKey(W, w, R, r, merged), added };
}
