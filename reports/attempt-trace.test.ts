import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTrace, TRACE_ATTEMPTS_SHOWN, traceHtml } from './attempt-trace.js';

const REAL =
  '[{"n":1,"s":"Unavailable","node":"n3","e":22,"t0":37479.183,"t1":37479.318},{"n":2,"s":"ConnectRefused","t0":37582.862,"t1":37583.629},{"n":3,"s":"Ok","node":"n2","e":26,"t0":37783.509,"t1":37784.037}]';

describe('parseTrace', () => {
  it('reads the ledger trace JSON, missing fields as null', () => {
    expect(parseTrace(REAL)).toEqual([
      { n: 1, s: 'Unavailable', node: 'n3', e: 22, t0: 37479.183, t1: 37479.318 },
      { n: 2, s: 'ConnectRefused', node: null, e: null, t0: 37582.862, t1: 37583.629 },
      { n: 3, s: 'Ok', node: 'n2', e: 26, t0: 37783.509, t1: 37784.037 },
    ]);
    expect(parseTrace('[{"s":7,"n":"x"}]')).toEqual([{ n: null, s: '7', node: null, e: null, t0: null, t1: null }]);
  });

  it('rejects what is not an array of attempt objects', () => {
    for (const t of [null, '', 'Unavailable then Ok', '{"n":1}', '[1,2]', '[[]]', '[null]']) expect(parseTrace(t)).toBeNull();
  });

  it('property: never throws, and gives back every attempt of a well-formed trace', () => {
    fc.assert(fc.property(fc.string(), (s) => {
      parseTrace(s);
    }));
    const attempt = fc.record({
      n: fc.nat(),
      s: fc.string(),
      node: fc.option(fc.string(), { nil: null }),
      e: fc.option(fc.nat(), { nil: null }),
      t0: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }),
      t1: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }),
    });
    fc.assert(fc.property(fc.array(attempt, { maxLength: 8 }), (attempts) => {
      expect(parseTrace(JSON.stringify(attempts))).toEqual(attempts.map((a) => ({ ...a, t0: a.t0 === null ? null : a.t0 + 0, t1: a.t1 === null ? null : a.t1 + 0 })));
    }));
  });
});

describe('traceHtml', () => {
  it('renders one line per attempt: status, node, epoch, times and duration', () => {
    expect(traceHtml(REAL)).toBe(
      '<ol class="trace">' +
        '<li>#1 <b class="st">Unavailable</b> · n3 · e22 · 37479.2 → 37479.3 (0.1 ms)</li>' +
        '<li>#2 <b class="st">ConnectRefused</b> · 37582.9 → 37583.6 (0.8 ms)</li>' +
        '<li>#3 <b class="st">Ok</b> · n2 · e26 · 37783.5 → 37784 (0.5 ms)</li></ol>',
    );
    expect(traceHtml(null)).toBe('');
  });

  it('escapes hostile statuses and node ids, and a trace that is not JSON', () => {
    const html = traceHtml('[{"n":1,"s":"<script>x</script>","node":"\\"n1\'"}]');
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;');
    expect(html).toContain('&quot;n1&#39;');
    expect(traceHtml('<b>Unavailable</b> then Ok')).toBe('<code>&lt;b&gt;Unavailable&lt;/b&gt; then Ok</code>');
    expect(traceHtml('x'.repeat(400))).toBe(`<code>${'x'.repeat(300)}…</code>`);
  });

  it('cuts a long trace with a note', () => {
    const long = JSON.stringify(Array.from({ length: TRACE_ATTEMPTS_SHOWN + 5 }, (_, i) => ({ n: i + 1, s: 'Timeout' })));
    const html = traceHtml(long);
    expect(html.match(/<li>/g)).toHaveLength(TRACE_ATTEMPTS_SHOWN + 1);
    expect(html).toContain('<li>… 5 more attempts</li>');
  });

  it('property: no markup from the trace survives unescaped', () => {
    fc.assert(fc.property(fc.array(fc.record({ n: fc.nat(), s: fc.string(), node: fc.string() }), { maxLength: 4 }), (attempts) => {
      const html = traceHtml(JSON.stringify(attempts));
      const stripped = html.replace(/<\/?(ol|li|b)( class="(trace|st)")?>/g, '');
      expect(stripped).not.toMatch(/[<>"']/);
    }));
  });
});
