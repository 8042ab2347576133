import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { clockTime, createProgressOutput, plainProgressOutput, progressLine, type ProgressSnapshot } from './run-progress.js';

const snap: ProgressSnapshot = {
  elapsedMs: 754_000,
  durationMs: 4 * 3600_000,
  acked: 2_211_345,
  ackedPerSec: 2_950.4,
  faults: 147,
  findings: null,
  ledgerBytes: 1.2 * 1024 ** 3,
  freeBytes: 40 * 1024 ** 3,
  rssMb: 158,
};

/** A stream that keeps what is written; a terminal when `tty`. */
function sink(tty: boolean): Writable & { text: () => string; isTTY?: boolean; columns?: number } {
  const chunks: string[] = [];
  const w = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  }) as Writable & { text: () => string; isTTY?: boolean; columns?: number };
  w.text = () => chunks.join('');
  if (tty) {
    w.isTTY = true;
    w.columns = 200;
  }
  return w;
}

describe('progressLine', () => {
  it('shows elapsed / planned (left), acked/s, faults, ledger, free disk and RSS', () => {
    expect(progressLine(snap)).toBe('fault phase 12:34 / 4:00:00 (3:47:26 left) | 2,950 acked/s (2,211,345 in all) | 147 faults | ledger 1.2 GB | 40.0 GB free | rss 158 MB');
  });

  it('adds the findings of the online checks when they report, and drops unknown sizes', () => {
    expect(progressLine({ ...snap, findings: 1, ledgerBytes: null, freeBytes: null, faults: 1 })).toBe(
      'fault phase 12:34 / 4:00:00 (3:47:26 left) | 2,950 acked/s (2,211,345 in all) | 1 fault | 1 finding so far | rss 158 MB',
    );
  });

  it('formats clock times, never negative', () => {
    expect(clockTime(0)).toBe('0:00');
    expect(clockTime(59_600)).toBe('1:00');
    expect(clockTime(3_599_000)).toBe('59:59');
    expect(clockTime(3_600_000)).toBe('1:00:00');
    expect(clockTime(-5_000)).toBe('0:00');
  });
});

describe('progress output', () => {
  it('elsewhere than a terminal: log lines as they come, a plain progress line every 30 s', () => {
    let t = 0;
    const lines: string[] = [];
    const out = plainProgressOutput((l) => lines.push(l), 30_000, () => t);
    out.log('run started');
    for (t = 0; t <= 95_000; t += 1_000) out.update({ ...snap, elapsedMs: t });
    out.done();
    expect(lines[0]).toBe('run started');
    const progress = lines.filter((l) => l.startsWith('progress: '));
    expect(progress.map((l) => l.slice('progress: fault phase '.length, 'progress: fault phase '.length + 4))).toEqual(['0:30', '1:00', '1:30']);
  });

  it('on a stream that is no terminal, createProgressOutput writes plain prefixed lines', () => {
    const s = sink(false);
    let t = 0;
    const out = createProgressOutput({ stream: s, prefix: 'zaris-certify: ', now: () => t });
    out.log('cluster up');
    out.update(snap);
    t = 30_000;
    out.update(snap);
    expect(s.text()).toBe(`zaris-certify: cluster up\nzaris-certify: progress: ${progressLine(snap)}\n`);
  });

  it('on a terminal: one line redrawn in place, log lines kept above it, the last line kept at the end', () => {
    const s = sink(true);
    const out = createProgressOutput({ stream: s, prefix: 'zc: ' });
    out.update({ ...snap, acked: 1 });
    out.update({ ...snap, acked: 2 });
    out.log('fault: kill n2');
    out.update({ ...snap, acked: 3 });
    out.done();
    out.update({ ...snap, acked: 4 }); // after done: ignored
    const text = s.text();
    const erase = '\u001B[2K'; // erase line: the redraw
    expect(text).toContain(erase);
    expect(text).toContain('zc: fault: kill n2\n');
    expect(text).toContain('(3 in all)');
    expect(text).not.toContain('(4 in all)');
    // after the log line, the progress line is drawn again below it
    expect(text.indexOf('(2 in all)', text.indexOf('zc: fault: kill n2'))).toBeGreaterThan(0);
  });
});
