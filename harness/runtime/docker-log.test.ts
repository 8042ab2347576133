import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { demuxDockerLog, muxDockerLog, type DockerLogFrame } from './docker-log.js';

const frame = fc.record({ stream: fc.constantFrom(0, 1, 2), payload: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) });

describe('demuxDockerLog', () => {
  it('returns the stdout and stderr payloads in arrival order, dropping stdin', () => {
    fc.assert(
      fc.property(fc.array(frame, { minLength: 1, maxLength: 20 }), (frames: DockerLogFrame[]) => {
        const want = Buffer.concat(frames.filter((f) => f.stream !== 0).map((f) => f.payload));
        expect(demuxDockerLog(muxDockerLog(frames)).equals(want)).toBe(true);
      }),
    );
  });

  it('decodes an engine-shaped log', () => {
    const raw = Buffer.concat([
      Buffer.from([1, 0, 0, 0, 0, 0, 0, 6]),
      Buffer.from('hello\n'),
      Buffer.from([2, 0, 0, 0, 0, 0, 0, 5]),
      Buffer.from('oops\n'),
    ]);
    expect(demuxDockerLog(raw).toString()).toBe('hello\noops\n');
  });

  it('keeps the bytes of a truncated last frame and passes a raw (TTY) log through', () => {
    const cut = muxDockerLog([{ stream: 1, payload: Buffer.from('abcdef') }]).subarray(0, 11);
    expect(demuxDockerLog(cut).toString()).toBe('abc');
    expect(demuxDockerLog(Buffer.from('plain text log\n')).toString()).toBe('plain text log\n');
    expect(demuxDockerLog(Buffer.alloc(0)).length).toBe(0);
  });
});
