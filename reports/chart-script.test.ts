import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CHART_SCRIPT, FAULT_COLOR_OTHER, FAULT_COLORS, TIMELINE_DATA_ID, uplotAssets } from './chart-script.js';
import type { TimelineData } from './timeline-data.js';

/** A minimal element: what the chart script touches. */
interface FakeEl {
  id: string | null;
  clientWidth: number;
  textContent: string;
  className: string;
  children: FakeEl[];
  attrs: Record<string, string>;
  appendChild(c: FakeEl): void;
  setAttribute(k: string, v: string): void;
  getAttribute(k: string): string | null;
}

function el(id: string | null): FakeEl {
  return {
    id,
    clientWidth: 1000,
    textContent: '',
    className: '',
    children: [],
    attrs: {},
    appendChild(c) {
      this.children.push(c);
    },
    setAttribute(k, v) {
      this.attrs[k] = v;
    },
    getAttribute(k) {
      return this.attrs[k] ?? null;
    },
  };
}

interface Made {
  opts: {
    title: string;
    width: number;
    series: { label: string; stroke?: string; paths?: unknown; value?: (u: unknown, v: number | null) => string }[];
    scales: { x: { time: boolean; range: (u: unknown, min: number, max: number) => [number, number] } };
    axes: { values?: (u: unknown, splits: number[]) => string[]; label?: string }[];
    hooks: { drawClear: ((u: unknown) => void)[]; setCursor: ((u: unknown) => void)[] };
  };
  data: (number | null)[][];
  target: FakeEl;
}

const DATA: TimelineData & { faultColors: Record<string, string>; faultColorOther: string } = {
  widthS: 1,
  endS: 10,
  x: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  faults: [
    [1, 3, 'kill', 'kill n3', 1],
    [2.5, 3.5, 'kill', 'kill n2', 4],
    [3.2, 3.4, 'pause', 'pause n1', 5],
    [4, 4.5, 'odd', 'odd n2', 3],
    [5, null, 'partition', 'partition <b>n1</b>', 2],
  ],
  phases: [[0.5, 'faults'], [5, 'heal'], [9.8, 'final-reads'], [9.9, 'done']],
  charts: [
    { id: 'chart-writes-0', title: 'Writes per second: sync3', unit: 'writes/s', lines: [{ label: 'acknowledged' }, { label: 'failed' }], values: [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]] },
    { id: 'chart-statuses', title: 'statuses', unit: 'attempts/s', lines: [], values: [] },
    { id: 'chart-epochs', title: 'Epoch per partition', unit: 'epoch', lines: [{ label: 'sync3/0', step: true }], values: [[1, 1, 2, 2, 2, 3, 3, 3, 3, null]] },
  ],
  faultColors: { ...FAULT_COLORS },
  faultColorOther: FAULT_COLOR_OTHER,
};

function run(data: unknown, opts: { failOn?: string } = {}): { made: Made[]; body: FakeEl; els: Map<string, FakeEl> } {
  const els = new Map<string, FakeEl>();
  const holder = el(TIMELINE_DATA_ID);
  holder.attrs['data-json'] = JSON.stringify(data);
  els.set(TIMELINE_DATA_ID, holder);
  for (const id of ['chart-writes-0', 'chart-statuses', 'chart-epochs']) els.set(id, el(id));
  const body = el('body');
  const made: Made[] = [];
  const uPlot = function (this: unknown, o: Made['opts'], d: Made['data'], target: FakeEl): void {
    if (o.title === opts.failOn) throw new Error('canvas unavailable');
    made.push({ opts: o, data: d, target });
  } as unknown as { paths: unknown };
  uPlot.paths = { stepped: (o: unknown) => ({ stepped: o }) };
  runInNewContext(CHART_SCRIPT, { document: { getElementById: (id: string) => els.get(id) ?? null, createElement: () => el(null), body }, uPlot, devicePixelRatio: 1 });
  return { made, body, els };
}

/** A canvas context that records what is drawn. */
function recordingCtx(): { ctx: Record<string, unknown>; fills: [string, number, number, number, number][]; texts: [string, number, number][]; strokes: number } {
  const rec = { fills: [] as [string, number, number, number, number][], texts: [] as [string, number, number][], strokes: 0 };
  const ctx: Record<string, unknown> = {
    fillStyle: '',
    save() {},
    restore() {},
    beginPath() {},
    rect() {},
    clip() {},
    moveTo() {},
    lineTo() {},
    setLineDash() {},
    stroke() {
      rec.strokes++;
    },
    fillRect(x: number, y: number, w: number, h: number) {
      rec.fills.push([String(ctx.fillStyle), x, y, w, h]);
    },
    measureText(t: string) {
      return { width: t.length * 6 };
    },
    fillText(t: string, x: number, y: number) {
      rec.texts.push([t, x, y]);
    },
  };
  return { ctx, ...rec, get strokes() {
    return rec.strokes;
  } };
}

describe('uplotAssets', () => {
  it('reads uPlot 1.6.32 (script and stylesheet) from node_modules', () => {
    const { js, css } = uplotAssets();
    expect(js).toMatch(/^\/\*! https:\/\/github\.com\/leeoniya\/uPlot \(v1\.6\.32\) \*\//);
    expect(js).toContain('var uPlot=');
    expect(css).toContain('.uplot');
    expect(uplotAssets()).toBe(uplotAssets());
  });
});

describe('CHART_SCRIPT', () => {
  it('contains nothing that would end its script element early', () => {
    expect(CHART_SCRIPT).not.toMatch(/<\/script|<!--/i);
  });

  it('draws one uPlot chart per chart with lines, on the shared x values, and reports the count', () => {
    const { made, body, els } = run(DATA);
    expect(made.map((m) => m.target.id)).toEqual(['chart-writes-0', 'chart-epochs']);
    expect(made[0].data).toEqual([DATA.x, ...DATA.charts[0].values]);
    expect(made[0].opts.title).toBe('Writes per second: sync3');
    expect(made[0].opts.series.map((s) => s.label)).toEqual(['run time', 'acknowledged', 'failed']);
    expect(made[0].opts.series[1].stroke).toBe('#2ca02c');
    expect(made[0].opts.series[1].paths).toBeUndefined();
    expect(made[1].opts.series[1].paths).toEqual({ stepped: { align: 1 } });
    expect(made[0].opts.axes[1].label).toBe('writes/s');
    expect(made[0].opts.width).toBe(1000);
    expect(els.get('chart-statuses')!.children).toEqual([]);
    expect(els.get('chart-writes-0')!.children.map((c) => c.className)).toEqual(['chart-info']);
    expect(body.attrs).toEqual({ 'data-charts-drawn': '2', 'data-chart-errors': '0' });
  });

  it('formats run time as h:mm:ss and spans the x axis over the whole run', () => {
    const { made } = run(DATA);
    const fmt = made[0].opts.axes[0].values!;
    expect(fmt(null, [0, 59.6, 61, 3725])).toEqual(['0:00', '1:00', '1:01', '1:02:05']);
    expect(made[0].opts.scales.x.time).toBe(false);
    expect(made[0].opts.scales.x.range(null, 0, 9)).toEqual([0, 10]);
    expect(made[0].opts.series[0].value!(null, 61)).toBe('1:01');
    expect(made[0].opts.series[1].value!(null, null)).toBe('-');
  });

  it('shades each fault in its kind colour, labels it where there is room, and marks the phases', () => {
    const { made } = run(DATA);
    const rec = recordingCtx();
    // x: value v at 100 + 50 v px; plot area 100..600 (v 0..10)
    made[0].opts.hooks.drawClear[0]({ ctx: rec.ctx, bbox: { left: 100, top: 10, width: 500, height: 200 }, valToPos: (v: number) => 100 + v * 50 });
    expect(rec.fills).toEqual([
      [FAULT_COLORS.kill, 150, 10, 125, 200], // faults 1 and 4 overlap: one fill; the pause under them is not drawn over them
      [FAULT_COLOR_OTHER, 300, 10, 25, 200],
      [FAULT_COLORS.partition, 350, 10, 250, 200], // never healed: to the end of the run
    ]);
    const texts = rec.texts.map((t) => t[0]);
    expect(texts).toEqual(['kill n3', 'kill n2', 'odd n2', 'partition <b>n1</b>', 'faults', 'heal', 'final-reads']); // 'pause n1' and 'done' would overlap a label: skipped
    expect(rec.texts.slice(4).map((t) => t[1])).toEqual([128, 353, 521]); // right of the line; left of it at the right edge
    expect(rec.strokes).toBe(4);
  });

  it('describes the faults and phase under the cursor as text', () => {
    const { made, els } = run(DATA);
    const info = els.get('chart-writes-0')!.children[0];
    const cursor = (left: number | null): void => made[0].opts.hooks.setCursor[0]({ cursor: { left }, posToVal: (px: number) => px / 50 });
    cursor(250); // t = 5 s
    expect(info.textContent).toBe('t=0:05, phase heal; fault 2: partition <b>n1</b> (0:05-never healed)');
    cursor(100); // t = 2 s
    expect(info.textContent).toBe('t=0:02, phase faults; fault 1: kill n3 (0:01-0:03); fault 4: kill n2 (0:03-0:04)');
    cursor(-10);
    expect(info.textContent).toBe('');
  });

  it('names the bucket a point stands for when buckets are wider than a second', () => {
    const { made, els } = run({ ...DATA, widthS: 8, endS: 80, x: DATA.x.map((x) => x * 8) });
    made[0].opts.hooks.setCursor[0]({ cursor: { left: 160 }, posToVal: (px: number) => px / 10 });
    expect(els.get('chart-writes-0')!.children[0].textContent).toBe('t=0:16-0:24, phase done; fault 2: partition <b>n1</b> (0:05-never healed)');
  });

  it('counts a chart that fails to draw and says so in its place', () => {
    const { made, body, els } = run(DATA, { failOn: 'Epoch per partition' });
    expect(made).toHaveLength(1);
    expect(els.get('chart-epochs')!.textContent).toBe('chart failed: canvas unavailable');
    expect(body.attrs).toEqual({ 'data-charts-drawn': '1', 'data-chart-errors': '1' });
  });
});
