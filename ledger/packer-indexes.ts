/**
 * The key packer's in-memory indexes (key-packer.ts): staged rows in typed arrays, open keys,
 * activity marks by time, keys by id, rows per batch, writes awaiting their completion.
 */

/** A staged field with no value (SQL NULL). */
export const NULL = NaN;

function grownF64(a: Float64Array, n: number): Float64Array {
  const b = new Float64Array(n);
  b.set(a);
  return b;
}

function grownI32(a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}

/**
 * A growable Float64Array of fixed-width rows with a free list, a next-link per row and the
 * batches each row came from (its invoke's or read's, and its completion's).
 */
export class Staging {
  data: Float64Array;
  next: Int32Array;
  batchA: Int32Array;
  batchB: Int32Array;
  /** The key of each row. */
  keyOf: Float64Array;
  /** 1 when the row has a text beside it (a trace, a read value that is not a write id). */
  text: Uint8Array;
  private free: Int32Array;
  private freeN = 0;
  private size = 0;
  used = 0;

  constructor(
    readonly fields: number,
    cap = 4096,
  ) {
    this.data = new Float64Array(cap * fields);
    this.next = new Int32Array(cap);
    this.batchA = new Int32Array(cap);
    this.batchB = new Int32Array(cap);
    this.keyOf = new Float64Array(cap);
    this.text = new Uint8Array(cap);
    this.free = new Int32Array(cap);
  }

  alloc(): number {
    this.used++;
    if (this.freeN > 0) return this.free[--this.freeN];
    if (this.size === this.next.length) {
      const cap = this.next.length * 2;
      this.data = grownF64(this.data, cap * this.fields);
      this.next = grownI32(this.next, cap);
      this.batchA = grownI32(this.batchA, cap);
      this.batchB = grownI32(this.batchB, cap);
      this.keyOf = grownF64(this.keyOf, cap);
      const t = new Uint8Array(cap);
      t.set(this.text);
      this.text = t;
      this.free = grownI32(this.free, cap);
    }
    return this.size++;
  }

  release(slot: number): void {
    this.used--;
    this.text[slot] = 0;
    this.free[this.freeN++] = slot;
  }
}

/** An open key: its staged rows (linked lists), writes in flight, last activity. */
export interface OpenKey {
  headW: number;
  tailW: number;
  headR: number;
  tailR: number;
  nW: number;
  nR: number;
  outstanding: number;
  last: number;
  idle: boolean;
}

/** A FIFO of (key, time) activity marks, in nondecreasing time. */
export class ActivityQueue {
  private keys: Float64Array = new Float64Array(1 << 14);
  private times: Float64Array = new Float64Array(1 << 14);
  private head = 0;
  private tail = 0;

  push(key: number, t: number): void {
    if (this.tail === this.keys.length) {
      if (this.head > this.keys.length / 2) {
        this.keys.copyWithin(0, this.head, this.tail);
        this.times.copyWithin(0, this.head, this.tail);
        this.tail -= this.head;
        this.head = 0;
      } else {
        this.keys = grownF64(this.keys, this.keys.length * 2);
        this.times = grownF64(this.times, this.times.length * 2);
      }
    }
    this.keys[this.tail] = key;
    this.times[this.tail++] = t;
  }

  /** Pops every mark older than `before`, calling fn(key, time). */
  popBefore(before: number, fn: (key: number, t: number) => void): void {
    while (this.head < this.tail && this.times[this.head] < before) {
      const k = this.keys[this.head];
      const t = this.times[this.head++];
      fn(k, t);
    }
  }
}

/** A min-heap of key ids (lazy: entries of keys no longer open are skipped when they surface). */
export class MinHeap {
  private a: number[] = [];
  push(x: number): void {
    const a = this.a;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p] <= x) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = x;
  }
  peek(): number | undefined {
    return this.a[0];
  }
  get size(): number {
    return this.a.length;
  }
  pop(): void {
    const a = this.a;
    const last = a.pop()!;
    if (a.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= a.length) break;
      const r = l + 1;
      const c = r < a.length && a[r] < a[l] ? r : l;
      if (a[c] >= last) break;
      a[i] = a[c];
      i = c;
    }
    a[i] = last;
  }
}

/** Counts per batch id (a ring by id, a map for collisions); a count of 0 frees its entry. */
export class BatchCounts {
  private readonly mask = (1 << 18) - 1;
  private readonly n = new Int32Array(1 << 18);
  private readonly id = new Float64Array(1 << 18).fill(NaN);
  private readonly other = new Map<number, number>();

  /** Adds delta to batch's count; returns the new count. */
  add(batch: number, delta: number): number {
    const i = batch & this.mask;
    if (this.id[i] === batch) {
      const v = (this.n[i] += delta);
      if (v === 0) this.id[i] = NaN;
      return v;
    }
    if (this.id[i] !== this.id[i] && !this.other.has(batch)) {
      this.id[i] = batch;
      this.n[i] = delta;
      if (delta === 0) this.id[i] = NaN;
      return delta;
    }
    const v = (this.other.get(batch) ?? 0) + delta;
    if (v === 0) this.other.delete(batch);
    else this.other.set(batch, v);
    return v;
  }

  has(batch: number): boolean {
    return this.id[batch & this.mask] === batch || this.other.has(batch);
  }
}

/** Pending completions: write number w -> staging row (a ring by w, a map for collisions). */
export class Pending {
  private readonly mask = (1 << 20) - 1;
  private readonly slot = new Float64Array(1 << 20).fill(-1);
  private readonly w = new Float64Array(1 << 20).fill(NaN);
  private readonly other = new Map<number, number>();

  set(w: number, s: number): void {
    const i = w & this.mask;
    if (this.slot[i] < 0) {
      this.slot[i] = s;
      this.w[i] = w;
    } else this.other.set(w, s);
  }

  take(w: number): number {
    const i = w & this.mask;
    if (this.w[i] === w && this.slot[i] >= 0) {
      const s = this.slot[i];
      this.slot[i] = -1;
      this.w[i] = NaN;
      return s;
    }
    const s = this.other.get(w);
    if (s === undefined) return -1;
    this.other.delete(w);
    return s;
  }
}
