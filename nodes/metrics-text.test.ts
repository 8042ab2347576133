import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ExpositionParseError, parseExposition, renderExposition, sampleValue, type MetricFamily } from './metrics-text.js';

describe('Prometheus text exposition (metrics-text.ts)', () => {
  it('renders HELP, TYPE and samples exactly as the format says, escaping labels and help', () => {
    const text = renderExposition([
      { name: 'zaris_x_total', type: 'counter', help: 'Lines\nand \\ backslash', samples: [{ labels: { node: 'n1', kind: 'a"b\\c\nd' }, value: 3 }] },
      { name: 'zaris_lag_ms', type: 'gauge', help: 'lag', samples: [{ labels: {}, value: 1.5 }, { labels: { p: '1' }, value: NaN }] },
    ]);
    expect(text).toBe(
      '# HELP zaris_x_total Lines\\nand \\\\ backslash\n# TYPE zaris_x_total counter\nzaris_x_total{node="n1",kind="a\\"b\\\\c\\nd"} 3\n' +
        '# HELP zaris_lag_ms lag\n# TYPE zaris_lag_ms gauge\nzaris_lag_ms 1.5\nzaris_lag_ms{p="1"} NaN\n',
    );
    const back = parseExposition(text);
    expect(back.get('zaris_x_total')).toEqual({ name: 'zaris_x_total', help: 'Lines\nand \\ backslash', type: 'counter', samples: [{ labels: { node: 'n1', kind: 'a"b\\c\nd' }, value: 3 }] });
    expect(sampleValue(back, 'zaris_lag_ms')).toBe(1.5);
    expect(sampleValue(back, 'zaris_lag_ms', { p: '1' })).toBeNaN();
    expect(sampleValue(back, 'zaris_lag_ms', { p: '2' })).toBeUndefined();
  });

  it('refuses invalid names and duplicate samples when rendering', () => {
    expect(() => renderExposition([{ name: '1bad', type: 'gauge', help: '', samples: [] }])).toThrow('invalid metric name "1bad"');
    expect(() => renderExposition([{ name: 'ok', type: 'gauge', help: '', samples: [{ labels: { 'a-b': 'x' }, value: 1 }] }])).toThrow('invalid label name "a-b" in ok');
    expect(() => renderExposition([{ name: 'ok', type: 'gauge', help: '', samples: [{ labels: { a: 'x' }, value: 1 }, { labels: { a: 'x' }, value: 2 }] }])).toThrow('duplicate sample ok{a="x"}');
  });

  it('reads strictly: the first bad line is named', () => {
    const cases: Array<[string, string]> = [
      ['a 1', 'exposition line 1: the text does not end in a line feed'],
      ['a one\n', 'exposition line 1: bad value "one"'],
      ['a{b="x} 1\n', 'exposition line 1: unterminated value of label b'],
      ['a{b="\\t"} 1\n', 'exposition line 1: bad escape \\t in label b'],
      ['a{b="1",b="2"} 1\n', 'exposition line 1: label b twice'],
      ['# TYPE a gauge\n# TYPE a counter\n', 'exposition line 2: second TYPE line for a'],
      ['a 1\n# TYPE a gauge\n', 'exposition line 2: TYPE line for a after its samples'],
      ['# TYPE a meter\n', 'exposition line 1: unknown type "meter" for a'],
      ['x\n', 'exposition line 1: not a sample line: "x"'],
    ];
    for (const [text, msg] of cases) {
      let err: unknown;
      try {
        parseExposition(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ExpositionParseError);
      expect((err as Error).message).toBe(msg);
    }
    // comments, blank lines, timestamps, exponents, +Inf and histogram parts are read
    const ok = parseExposition('# just a comment\n\n# TYPE h histogram\nh_bucket{le="+Inf"} 4 1700000000000\nh_sum 2.5e3\nh_count 4\ng -Inf\n');
    expect(ok.get('h')!.samples.map((s) => s.value)).toEqual([4, 2500, 4]);
    expect(sampleValue(ok, 'g')).toBe(-Infinity);
  });

  const label = fc.string({ maxLength: 12 });
  const family = fc.record({
    name: fc.stringMatching(/^[a-z_][a-z0-9_]{0,15}$/),
    help: fc.string({ maxLength: 30 }),
    type: fc.constantFrom('counter' as const, 'gauge' as const),
    samples: fc.uniqueArray(fc.record({ labels: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/), label, { maxKeys: 3 }), value: fc.oneof(fc.integer(), fc.double({ noNaN: true })) }), {
      maxLength: 4,
      selector: (s) => JSON.stringify(Object.entries(s.labels).sort()),
    }),
  });

  it('reads back what it renders, for any families (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(family, { maxLength: 4, selector: (f) => f.name }), (families: MetricFamily[]) => {
        const back = parseExposition(renderExposition(families));
        expect([...back.keys()]).toEqual(families.map((f) => f.name));
        for (const f of families) {
          const g = back.get(f.name)!;
          expect(g.type).toBe(f.type);
          expect(g.help).toBe(f.help);
          expect(g.samples).toEqual(f.samples.map((s) => ({ labels: s.labels, value: Object.is(s.value, -0) ? 0 : s.value })));
        }
      }),
      { seed: 14, numRuns: 300 },
    );
  });

  it('never throws anything but ExpositionParseError on arbitrary text (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (t) => {
        try {
          parseExposition(t);
        } catch (e) {
          expect(e).toBeInstanceOf(ExpositionParseError);
        }
      }),
      { seed: 14, numRuns: 500 },
    );
  });
});
