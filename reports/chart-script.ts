import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * The report's charts at view time (DESIGN.md §6: one self-contained page that opens offline):
 * uPlot 1.6.32 (a package dependency) inlined from node_modules at render time, and the page's
 * own script that draws every chart of the timeline data with the fault intervals shaded and
 * the phases marked.
 */

/**
 * Band fill per fault kind (the page's swatches and the chart script use the same colours).
 * Where faults of several kinds cover the same pixel, the kind listed first is drawn.
 */
export const FAULT_COLORS: Readonly<Record<string, string>> = {
  kill: 'rgba(214,39,40,0.16)',
  stop: 'rgba(255,127,14,0.20)',
  partition: 'rgba(148,103,189,0.18)',
  pause: 'rgba(31,119,180,0.15)',
};
/** Band fill of a fault kind not in {@link FAULT_COLORS}. */
export const FAULT_COLOR_OTHER = 'rgba(127,127,127,0.16)';

/** The id of the element whose `data-json` attribute holds the timeline data (escaped JSON). */
export const TIMELINE_DATA_ID = 'timeline-data';

let assets: { js: string; css: string } | null = null;

/**
 * uPlot's minified IIFE build and stylesheet, read from node_modules once per process.
 * @throws Error when the uplot package cannot be found or read, or its script contains a
 *   closing script tag (it could not be inlined safely).
 */
export function uplotAssets(): { js: string; css: string } {
  if (assets !== null) return assets;
  const require = createRequire(import.meta.url);
  let js: string;
  let css: string;
  try {
    js = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
    css = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');
  } catch (e) {
    throw new Error(`cannot inline the uPlot chart library (npm package uplot): ${(e as Error).message.split('\n')[0]}`);
  }
  if (/<\/(script|style)/i.test(js + css)) throw new Error('cannot inline the uPlot chart library: it contains a closing script or style tag');
  assets = { js, css };
  return assets;
}

/**
 * The page's chart script (plain browser JavaScript, run after uPlot is defined). It reads the
 * timeline data (JSON: see timeline-data.ts TimelineData) from the `data-json` attribute of
 * `#timeline-data`, and for every chart with lines draws a uPlot chart into the element of the
 * chart's id: shared x axis (run time, h:mm:ss), cursors synchronised across charts, each fault
 * a shaded band in its kind's colour (one layer: each pixel column takes the first-listed kind
 * covering it, so a dense run stays a light tint) labelled "kind node(s)" where there is room,
 * each phase a
 * dashed line labelled with its name; under each chart, the faults and phase at the cursor.
 * Strings reach the page only through textContent and canvas text (never as markup). When done
 * it sets `data-charts-drawn` (count) and `data-chart-errors` (count) on the body.
 */
export const CHART_SCRIPT = String.raw`(function () {
  'use strict';
  var holder = document.getElementById('timeline-data');
  if (!holder || typeof uPlot !== 'function') return;
  var data = JSON.parse(holder.getAttribute('data-json'));
  var BANDS = data.faultColors, BAND_OTHER = data.faultColorOther, KINDS = Object.keys(BANDS);
  var PALETTE = ['#1f77b4', '#d62728', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  var NAMED = { acknowledged: '#2ca02c', failed: '#d62728', indeterminate: '#ff7f0e', p50: '#1f77b4', p95: '#9467bd', p99: '#ff7f0e', max: '#d62728' };
  var dpr = (typeof devicePixelRatio === 'number' && devicePixelRatio > 0) ? devicePixelRatio : 1;
  function pad(n) { return n < 10 ? '0' + n : String(n); }
  function clock(v) {
    var s = Math.max(0, Math.round(v)), h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return (h > 0 ? h + ':' + pad(m) : String(m)) + ':' + pad(s % 60);
  }
  function faultEnd(f) { return f[1] === null ? data.endS : f[1]; }
  function overlay(u) {
    var ctx = u.ctx, b = u.bbox, right = b.left + b.width, labelEnd = -1e9, labels = [];
    var n = Math.ceil(b.width) + 1, NONE = 32767, col = new Int16Array(n).fill(NONE);
    ctx.save();
    ctx.beginPath();
    ctx.rect(b.left, b.top, b.width, b.height);
    ctx.clip();
    ctx.font = Math.round(10 * dpr) + 'px sans-serif';
    ctx.textBaseline = 'top';
    // each pixel column takes the colour of the first-listed kind covering it (one layer, never
    // stacked): a run with a fault every few seconds stays a light tint over the lines
    for (var i = 0; i < data.faults.length; i++) {
      var f = data.faults[i];
      var x0 = u.valToPos(f[0], 'x', true), x1 = u.valToPos(faultEnd(f), 'x', true);
      if (x1 < b.left || x0 > right) continue;
      var rank = KINDS.indexOf(f[2]);
      if (rank < 0) rank = KINDS.length;
      var c0 = Math.max(0, Math.floor(x0 - b.left)), c1 = Math.min(n, Math.max(c0 + 1, Math.ceil(x1 - b.left)));
      for (var c = c0; c < c1; c++) if (rank < col[c]) col[c] = rank;
      var w = ctx.measureText(f[3]).width;
      if (x0 >= labelEnd && x0 + w < right) {
        labels.push([f[3], x0]);
        labelEnd = x0 + w + 6 * dpr;
      }
    }
    for (var s = 0; s < n;) {
      var r = col[s];
      if (r === NONE) { s++; continue; }
      var e = s;
      while (e < n && col[e] === r) e++;
      ctx.fillStyle = r < KINDS.length ? BANDS[KINDS[r]] : BAND_OTHER;
      ctx.fillRect(b.left + s, b.top, e - s, b.height);
      s = e;
    }
    ctx.fillStyle = '#333';
    labels.forEach(function (l) { ctx.fillText(l[0], l[1] + 2 * dpr, b.top + 2 * dpr); });
    ctx.strokeStyle = '#444';
    ctx.lineWidth = dpr;
    ctx.setLineDash([4 * dpr, 3 * dpr]);
    ctx.textBaseline = 'bottom';
    ctx.fillStyle = '#000';
    var phaseEnd = -1e9;
    for (var j = 0; j < data.phases.length; j++) {
      var p = data.phases[j], x = Math.round(u.valToPos(p[0], 'x', true));
      if (x < b.left || x > right) continue;
      ctx.beginPath();
      ctx.moveTo(x, b.top);
      ctx.lineTo(x, b.top + b.height);
      ctx.stroke();
      // the label right of its line, or left of it at the right edge; skipped where it would overlap
      var pw = ctx.measureText(p[1]).width, px = x + 3 * dpr;
      if (px + pw > right) px = x - 3 * dpr - pw;
      if (px < phaseEnd) continue;
      ctx.fillText(p[1], px, b.top + b.height - 2 * dpr);
      phaseEnd = px + pw + 4 * dpr;
    }
    ctx.restore();
  }
  function describe(t) {
    var hits = [], phase = null;
    for (var i = 0; i < data.faults.length; i++) {
      var f = data.faults[i];
      if (f[0] <= t + data.widthS && faultEnd(f) >= t) hits.push('fault ' + f[4] + ': ' + f[3] + ' (' + clock(f[0]) + '-' + (f[1] === null ? 'never healed' : clock(f[1])) + ')');
    }
    for (var j = 0; j < data.phases.length; j++) if (data.phases[j][0] <= t) phase = data.phases[j][1];
    var at = data.widthS > 1 ? clock(t) + '-' + clock(t + data.widthS) : clock(t);
    return 't=' + at + (phase === null ? '' : ', phase ' + phase) + (hits.length ? '; ' + hits.join('; ') : '');
  }
  var drawn = 0, errors = 0;
  data.charts.forEach(function (c) {
    var el = document.getElementById(c.id);
    if (!el || c.lines.length === 0) return;
    try {
      var info = document.createElement('div');
      info.className = 'chart-info';
      var series = [{ label: 'run time', value: function (u, v) { return v == null ? '-' : clock(v); } }];
      c.lines.forEach(function (l, i) {
        series.push({
          label: l.label,
          stroke: NAMED[l.label] || PALETTE[i % PALETTE.length],
          width: 1.5,
          spanGaps: false,
          points: { show: false },
          paths: l.step ? uPlot.paths.stepped({ align: 1 }) : undefined,
          value: function (u, v) { return v == null ? '-' : String(v); }
        });
      });
      var opts = {
        title: c.title,
        width: Math.max(480, Math.min(1400, (el.clientWidth || 960))),
        height: 230,
        cursor: { sync: { key: 'zaris-run', scales: ['x', null] } },
        scales: { x: { time: false, range: function (u, min, max) { return [Math.min(0, min), Math.max(data.endS, max)]; } } },
        series: series,
        axes: [
          { incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400], values: function (u, splits) { return splits.map(clock); } },
          { label: c.unit, size: 64 }
        ],
        hooks: {
          drawClear: [overlay],
          setCursor: [function (u) {
            var left = u.cursor.left;
            info.textContent = (left == null || left < 0) ? '' : describe(u.posToVal(left, 'x'));
          }]
        }
      };
      new uPlot(opts, [data.x].concat(c.values), el);
      el.appendChild(info);
      drawn++;
    } catch (e) {
      errors++;
      el.textContent = 'chart failed: ' + (e && e.message ? e.message : String(e));
    }
  });
  document.body.setAttribute('data-charts-drawn', String(drawn));
  document.body.setAttribute('data-chart-errors', String(errors));
})();
`;
