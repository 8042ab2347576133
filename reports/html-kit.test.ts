import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { esc, fmtClock, fmtMs, htmlTable, nodeList, parseJson, reportContext } from './html-kit.js';

describe('html-kit', () => {
  it('esc escapes the five HTML characters and maps null/undefined to empty', () => {
    expect(esc(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(esc(null)).toBe('');
    expect(esc(undefined)).toBe('');
    expect(esc(0)).toBe('0');
  });

  it('htmlTable escapes cells, inserts pre-escaped cells as given, drops an all-empty header', () => {
    expect(htmlTable(['a', '<b>'], [['<i>', { html: '<em>x</em>' }]], 'num')).toBe(
      '<table class="num"><thead><tr><th>a</th><th>&lt;b&gt;</th></tr></thead><tbody>\n<tr><td>&lt;i&gt;</td><td><em>x</em></td></tr>\n</tbody></table>',
    );
    expect(htmlTable(['', ''], [[1, 2]])).toBe('<table><tbody>\n<tr><td>1</td><td>2</td></tr>\n</tbody></table>');
  });

  it('fmtMs rounds to 0.1 ms without trailing zeros', () => {
    expect([fmtMs(2957.991635), fmtMs(2957.94), fmtMs(300), fmtMs(null), fmtMs('x')]).toEqual(['2958', '2957.9', '300', '', 'x']);
  });

  it('fmtClock prints m:ss.s or h:mm:ss.s', () => {
    expect([fmtClock(0), fmtClock(2957.99), fmtClock(61_440), fmtClock(14_400_000), fmtClock(3_725_050), fmtClock(-1500), fmtClock(null)]).toEqual([
      '0:00.0', '0:03.0', '1:01.4', '4:00:00.0', '1:02:05.1', '-0:01.5', '',
    ]);
  });

  it('property: fmtClock reads back to the time within 0.05 s', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10 * 24 * 3_600_000 }), (ms) => {
      const parts = fmtClock(ms).split(':').map(Number);
      const s = parts.reduce((a, p) => a * 60 + p, 0);
      expect(Math.abs(s - ms / 1000)).toBeLessThanOrEqual(0.05 + 1e-9);
    }));
  });

  it('nodeList and parseJson read the ledger JSON columns leniently', () => {
    expect(nodeList('["n1","n2"]')).toBe('n1, n2');
    expect(nodeList('n1')).toBe('n1');
    expect(nodeList(null)).toBe('');
    expect(parseJson('{"a":1}')).toEqual({ a: 1 });
    expect(parseJson('{')).toBeNull();
    expect(parseJson(undefined)).toBeNull();
  });

  it('reportContext memoises per page', () => {
    const ctx = reportContext(null as never, null as never);
    let made = 0;
    const make = (): number => ++made;
    expect(ctx.memo('k', make)).toBe(1);
    expect(ctx.memo('k', make)).toBe(1);
    expect(reportContext(null as never, null as never).memo('k', make)).toBe(2);
  });
});
