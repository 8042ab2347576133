/**
 * Container logs of the docker runtime (DESIGN.md §4: node logs in the run directory).
 * The engine returns the logs of a container started without a TTY as a multiplexed stream:
 * frames of an 8-byte header (byte 0: stream, 1 stdin / 1 stdout / 2 stderr; bytes 1-3 zero;
 * bytes 4-7: payload length, big-endian) followed by the payload.
 */

/** One frame of a multiplexed docker log. */
export interface DockerLogFrame {
  /** 0 stdin, 1 stdout, 2 stderr. */
  stream: number;
  payload: Buffer;
}

/** Encodes frames as the engine does (used by tests to produce engine-shaped input). */
export function muxDockerLog(frames: readonly DockerLogFrame[]): Buffer {
  const parts: Buffer[] = [];
  for (const f of frames) {
    const h = Buffer.alloc(8);
    h[0] = f.stream;
    h.writeUInt32BE(f.payload.length, 4);
    parts.push(h, f.payload);
  }
  return Buffer.concat(parts);
}

/**
 * Decodes a multiplexed docker log into its stdout and stderr bytes interleaved in arrival
 * order (stdin frames dropped). A buffer that does not start with a valid header (a TTY
 * container's raw log) is returned unchanged; a truncated last frame keeps the bytes present.
 */
export function demuxDockerLog(buf: Buffer): Buffer {
  const valid = (at: number): boolean => buf.length - at >= 8 && buf[at] <= 2 && buf[at + 1] === 0 && buf[at + 2] === 0 && buf[at + 3] === 0;
  if (buf.length === 0 || !valid(0)) return buf;
  const out: Buffer[] = [];
  let at = 0;
  while (at < buf.length) {
    if (!valid(at)) {
      out.push(buf.subarray(at));
      break;
    }
    const stream = buf[at];
    const len = buf.readUInt32BE(at + 4);
    const payload = buf.subarray(at + 8, Math.min(buf.length, at + 8 + len));
    if (stream !== 0) out.push(payload);
    at += 8 + len;
  }
  return Buffer.concat(out);
}
