/**
 * Length-prefixed framing shared by the client and cluster ports (DESIGN.md §2 "Protocol").
 *
 * A frame is a 4-byte big-endian unsigned length followed by that many payload bytes.
 * {@link FrameReader} reassembles frames from TCP chunks without copying whole frames twice and
 * rejects a frame longer than the configured maximum before buffering it.
 */

/** Bytes of the length prefix. */
export const FRAME_HEADER_BYTES = 4;

/** A frame the peer should not have sent; the connection must be closed after answering. */
export class FrameError extends Error {
  override name = 'FrameError';
}

/**
 * Streaming frame reassembler.
 * `push(chunk)` returns the complete payloads now available (each a Buffer view, valid until the
 * next push) and throws FrameError when a frame header announces more than `maxFrameBytes`.
 */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);
  private off = 0;

  /** @param maxFrameBytes largest accepted payload, bytes. */
  constructor(private readonly maxFrameBytes: number) {}

  /**
   * Appends a chunk and returns the complete frame payloads.
   * @throws FrameError if a frame is longer than maxFrameBytes or empty.
   */
  push(chunk: Buffer): Buffer[] {
    if (this.off >= this.buf.length) {
      this.buf = chunk;
    } else {
      this.buf = Buffer.concat([this.buf.subarray(this.off), chunk]);
    }
    this.off = 0;
    const out: Buffer[] = [];
    for (;;) {
      const avail = this.buf.length - this.off;
      if (avail < FRAME_HEADER_BYTES) break;
      const len = this.buf.readUInt32BE(this.off);
      if (len > this.maxFrameBytes) throw new FrameError(`frame of ${len} bytes exceeds the limit of ${this.maxFrameBytes}`);
      if (len === 0) throw new FrameError('empty frame');
      if (avail < FRAME_HEADER_BYTES + len) break;
      out.push(this.buf.subarray(this.off + FRAME_HEADER_BYTES, this.off + FRAME_HEADER_BYTES + len));
      this.off += FRAME_HEADER_BYTES + len;
    }
    if (this.off === this.buf.length) {
      this.buf = Buffer.alloc(0);
      this.off = 0;
    }
    return out;
  }

  /** Bytes buffered waiting for the rest of a frame. */
  get pendingBytes(): number {
    return this.buf.length - this.off;
  }
}

/**
 * A growable output buffer that writes many frames into one allocation, so a burst of responses
 * goes out in one socket write.
 */
export class FrameWriter {
  private buf: Buffer;
  private pos = 0;
  private frameStart = -1;

  constructor(initialBytes = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  /** Reserve room for n more bytes. */
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Starts a frame (reserves its length prefix). */
  begin(): void {
    this.ensure(FRAME_HEADER_BYTES);
    this.frameStart = this.pos;
    this.pos += FRAME_HEADER_BYTES;
  }

  /** Ends the current frame, writing its length prefix. */
  end(): void {
    this.buf.writeUInt32BE(this.pos - this.frameStart - FRAME_HEADER_BYTES, this.frameStart);
    this.frameStart = -1;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  u16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.pos);
    this.pos += 2;
  }

  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v >>> 0, this.pos);
    this.pos += 4;
  }

  /** A double: the encoding of every epoch, version and revision (exact up to 2^53). */
  f64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  /** A string with a 1-byte length (<= 255 UTF-8 bytes). @throws RangeError if longer. */
  str8(s: string): void {
    const n = Buffer.byteLength(s);
    if (n > 255) throw new RangeError(`string of ${n} bytes does not fit a 1-byte length`);
    this.ensure(1 + n);
    this.buf[this.pos++] = n;
    this.pos += this.buf.write(s, this.pos);
  }

  /** A string with a 2-byte length (<= 65535 UTF-8 bytes). @throws RangeError if longer. */
  str16(s: string): void {
    const n = Buffer.byteLength(s);
    if (n > 65535) throw new RangeError(`string of ${n} bytes does not fit a 2-byte length`);
    this.ensure(2 + n);
    this.buf.writeUInt16BE(n, this.pos);
    this.pos += 2;
    this.pos += this.buf.write(s, this.pos);
  }

  /** Bytes with a 4-byte length. */
  bytes32(b: Uint8Array): void {
    this.ensure(4 + b.length);
    this.buf.writeUInt32BE(b.length, this.pos);
    this.pos += 4;
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Raw bytes, no length. */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.pos;
  }

  /** Takes the written bytes (a copy) and resets the writer. */
  take(): Buffer {
    const out = Buffer.from(this.buf.subarray(0, this.pos));
    this.pos = 0;
    if (this.buf.length > 1024 * 1024) this.buf = Buffer.allocUnsafe(64 * 1024);
    return out;
  }
}

/** Sequential reader over one frame payload. Every read throws RangeError past the end. */
export class PayloadReader {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new RangeError('truncated payload');
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleBE(this.pos);
    this.pos += 8;
    return v;
  }

  str8(): string {
    const n = this.u8();
    this.need(n);
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  str16(): string {
    const n = this.u16();
    this.need(n);
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** Bytes with a 4-byte length (a copy, safe to keep). */
  bytes32(): Buffer {
    const n = this.u32();
    this.need(n);
    const b = Buffer.from(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return b;
  }

  /** Remaining bytes (a view). */
  rest(): Buffer {
    const b = this.buf.subarray(this.pos);
    this.pos = this.buf.length;
    return b;
  }

  get remaining(): number {
    return this.buf.length - this.pos;
  }
}
