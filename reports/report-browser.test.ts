import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { needs } from '../test-support/capabilities.js';
import { launchChromium, openReport, type HeadlessChromium, type OpenedReport } from './browser.js';
import { INCIDENTS_SHOWN } from './incidents-section.js';
import sharp from 'sharp';
import { reportLayout, screenshotReport, WINDOW } from './report-screenshot.js';
import { writeSyntheticReport, type SyntheticReport } from './test-support/synthetic-reports.js';

/**
 * report.html in a real browser (DESIGN.md §6: one self-contained page that opens offline):
 * Debian's Chromium, headless, in a 1400 x 900 window, for a CERTIFIED and a FAILED synthetic
 * run (reports/test-support/synthetic-reports.ts). Skipped, with the reason, where
 * /usr/bin/chromium is missing (.ci/run installs it).
 */

/** Page-side: every chart canvas, with how many of its pixels are drawn and in how many colours (at most 50 counted). */
const CANVAS_INK_JS = `[...document.querySelectorAll('#charts .chart canvas')].map((c) => {
  const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
  let inked = 0;
  const colours = new Set();
  for (let i = 0; i < data.length; i += 4) {
    if (data[i + 3] === 0) continue;
    inked++;
    if (colours.size < 50) colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
  }
  return { chart: c.closest('.chart').id, pixels: c.width * c.height, inked, colours: colours.size };
})`;

/** Page-side: the chart elements that have data (the others say "No data recorded."). */
const CHARTS_WITH_DATA_JS = `[...document.querySelectorAll('#charts .chart')].filter((el) => el.querySelector('.nodata') === null).map((el) => el.id)`;

const chromium = needs('chromium');

describe.skipIf(chromium.skip)(chromium.title('report.html in headless Chromium, 1400 x 900'), () => {
  let work: string;
  let browser: HeadlessChromium;
  const runs: Partial<Record<'FAILED' | 'CERTIFIED', SyntheticReport>> = {};
  const pages: Partial<Record<'FAILED' | 'CERTIFIED', OpenedReport>> = {};

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'zaris-certify-report-browser-'));
    for (const v of ['FAILED', 'CERTIFIED'] as const) {
      mkdirSync(join(work, v));
      runs[v] = writeSyntheticReport(join(work, v), v);
    }
    browser = await launchChromium(WINDOW);
    for (const v of ['FAILED', 'CERTIFIED'] as const) pages[v] = await openReport(browser, runs[v]!.report);
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  }, 60_000);

  it.each(['CERTIFIED', 'FAILED'] as const)('%s: loads offline with no console error, shows the verdict in the banner, draws every chart', async (v) => {
    const { page, errors, external, chartsDrawn, chartErrors } = pages[v]!;
    expect(errors).toEqual([]);
    expect(external).toEqual([]);
    expect((await page.locator('.banner .verdict').textContent())?.startsWith(`${v} exit code ${v === 'FAILED' ? 1 : 0}`)).toBe(true);
    expect(await page.locator(`.banner.b-${v}`).isVisible()).toBe(true);
    // every chart with data drawn by the chart script, each canvas inked in several colours
    const withData = (await page.evaluate(CHARTS_WITH_DATA_JS)) as string[];
    expect(withData.length).toBeGreaterThanOrEqual(9); // writes and latency per store (3 + 3), statuses, epochs, memory
    expect(chartErrors).toBe(0);
    expect(chartsDrawn).toBe(withData.length);
    const canvases = (await page.evaluate(CANVAS_INK_JS)) as Array<{ chart: string; pixels: number; inked: number; colours: number }>;
    expect(canvases.map((c) => c.chart)).toEqual(withData);
    for (const c of canvases) {
      expect(c.inked, c.chart).toBeGreaterThan(c.pixels / 100);
      expect(c.colours, c.chart).toBeGreaterThanOrEqual(3);
    }
    // everything collapsed until the reader opens it
    expect(await page.locator('details[open]').count()).toBe(0);
  });

  it('FAILED: the charts start within the first two screens, the fault timeline is linked from the top; no incident lists more than 20 keys', async () => {
    const { page } = pages.FAILED!;
    const layout = await reportLayout(page);
    process.stdout.write(`report-browser: FAILED report in ${WINDOW.width} x ${WINDOW.height}: charts at ${layout.chartsTopPx} px, fault timeline at ${layout.faultsTopPx} px, page ${layout.pageHeightPx} px\n`);
    expect(layout.chartsTopPx).not.toBeNull();
    expect(layout.chartsTopPx!).toBeLessThanOrEqual(2 * WINDOW.height);
    // the fault timeline is one click away: the contents bar at the top links to it
    expect(await page.locator('nav a[href="#faults"]').isVisible()).toBe(true);
    expect(await page.locator('nav a[href="#charts"]').isVisible()).toBe(true);
    const results = runs.FAILED!.results;
    expect(layout.incidentsShown).toBe(Math.min(INCIDENTS_SHOWN, results.incidents.length));
    expect(Math.max(...results.incidents.map((i) => i.count))).toBeGreaterThan(20);
    expect(layout.maxKeysPerIncident).toBe(20);
  });

  it('FAILED: an incident opens on click into its first 20 keys, how many more, and one key\'s drill-down', async () => {
    const { page } = pages.FAILED!;
    const results = runs.FAILED!.results;
    const big = [...results.incidents].sort((a, b) => b.count - a.count || a.id - b.id)[0];
    const inc = page.locator(`#incident-${big.id}`);
    const writes = inc.locator('table.writes');
    expect(await writes.isVisible()).toBe(false);
    await inc.locator(':scope > summary').click();
    expect(await inc.getAttribute('open')).toBe('');
    expect(await writes.isVisible()).toBe(true);
    expect(await inc.locator(':scope > ul.keys > li').count()).toBe(20);
    expect(await inc.locator(':scope > p.more').textContent()).toBe(`${big.count - 20} more: the full list is in results.json, the findings with "incident": ${big.id}.`);
    // the key it drills into is the incident's example
    expect(await inc.locator(':scope > p').filter({ hasText: /^Key / }).textContent()).toBe(`Key ${big.store}/${big.example.key} (${big.example.kind}, ${big.example.class}):`);
  });

  it('make report-screenshot: a palette PNG of the top of the page, down to the end of the first chart', async () => {
    const out = join(work, 'FAILED', 'report.png');
    const { layout, bytes, heightPx } = await screenshotReport(runs.FAILED!.report, out);
    expect(heightPx).toBe(layout.firstChartBottomPx! + 16);
    expect(heightPx).toBeGreaterThan(layout.chartsTopPx!);
    const meta = await sharp(out).metadata();
    expect([meta.format, meta.width, meta.height, meta.isPalette]).toEqual(['png', WINDOW.width, heightPx, true]);
    expect(bytes).toBeLessThan(300_000);
  }, 120_000);
});
