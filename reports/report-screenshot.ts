import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { launchChromium, openReport } from './browser.js';

/**
 * `make report-screenshot RUN=runs/<dir> [OUT=file.png] [FULL=1]`: a PNG of a run's report.html
 * as a reader first sees it in a 1400 x 900 window: from the top (verdict, what happened,
 * incidents) down to the end of the first chart, or the whole page with FULL=1. Rendered by the
 * system's Chromium, offline (reports/browser.ts), and written as a palette PNG (256 colours,
 * quantized by sharp: about 40% of Chromium's own PNG, e.g. 126 KB for 1400 x 1405 px, for a page
 * that is text and flat colours). Prints the file, its size and where the charts and the fault
 * timeline start.
 */

/** The window the screenshot (and the report's browser test) uses, CSS px. */
export const WINDOW = { width: 1400, height: 900 } as const;
/** The tallest screenshot taken when not FULL, px. */
export const MAX_HEIGHT_PX = 3_000;

/** Where things are on the page, in CSS px from the top of the document. */
export interface ReportLayout {
  /** The top of the charts section and of the fault timeline section (null: not on the page). */
  chartsTopPx: number | null;
  faultsTopPx: number | null;
  /** The bottom of the first chart (null: none). */
  firstChartBottomPx: number | null;
  pageHeightPx: number;
  /** Incident lines visible without opening anything ("N more incidents" stays closed). */
  incidentsShown: number;
  /** The most findings any incident lists inline. */
  maxKeysPerIncident: number;
}

/** Page-side code of {@link reportLayout} (plain JavaScript: this project compiles without the DOM's types). */
const LAYOUT_JS = `(() => {
  const top = (sel) => { const el = document.querySelector(sel); return el === null ? null : Math.round(el.getBoundingClientRect().top + window.scrollY); };
  const chart = document.querySelector('#charts .chart');
  const incidents = [...document.querySelectorAll('#incidents details[id^="incident-"]')];
  return {
    chartsTopPx: top('#charts'),
    faultsTopPx: top('#faults'),
    firstChartBottomPx: chart === null ? null : Math.round(chart.getBoundingClientRect().bottom + window.scrollY),
    pageHeightPx: document.documentElement.scrollHeight,
    incidentsShown: incidents.filter((d) => d.closest('details.more-incidents') === null).length,
    maxKeysPerIncident: Math.max(0, ...incidents.map((d) => d.querySelectorAll(':scope > ul.keys > li').length)),
  };
})()`;

/** Measures an opened report (see {@link ReportLayout}), with every details element as the page left it. */
export async function reportLayout(page: Page): Promise<ReportLayout> {
  return (await page.evaluate(LAYOUT_JS)) as ReportLayout;
}

/**
 * Writes a PNG of `reportFile` to `outFile` (see the module comment).
 * @returns the layout measured and the PNG's size.
 * @throws Error when Chromium is missing, the page does not load, or the file cannot be written.
 */
export async function screenshotReport(reportFile: string, outFile: string, full = false): Promise<{ layout: ReportLayout; bytes: number; heightPx: number }> {
  const browser = await launchChromium(WINDOW);
  try {
    const { page, errors } = await openReport(browser, reportFile);
    if (errors.length > 0) process.stderr.write(`report-screenshot: the page reported: ${errors.join('; ')}\n`);
    const layout = await reportLayout(page);
    const bottom = layout.firstChartBottomPx === null ? WINDOW.height * 2 : layout.firstChartBottomPx + 16;
    const heightPx = full ? layout.pageHeightPx : Math.min(MAX_HEIGHT_PX, layout.pageHeightPx, bottom);
    // a clip is measured on the full page (it may reach below the window)
    const png = await page.screenshot({ type: 'png', fullPage: true, ...(full ? {} : { clip: { x: 0, y: 0, width: WINDOW.width, height: heightPx } }) });
    await sharp(png).png({ palette: true, colours: 256, effort: 10, compressionLevel: 9 }).toFile(outFile);
    return { layout, bytes: statSync(outFile).size, heightPx };
  } finally {
    await browser.close();
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const [run, out, fullArg] = argv;
  if (run === undefined || run === '') {
    process.stderr.write('usage: make report-screenshot RUN=runs/<dir> [OUT=file.png] [FULL=1]\n');
    return 64;
  }
  const report = run.endsWith('.html') ? run : path.join(run, 'report.html');
  if (!existsSync(report)) {
    process.stderr.write(`report-screenshot: no report at ${report} (make analyze RUN=${run} writes one)\n`);
    return 64;
  }
  const file = out === undefined || out === '' ? path.join(path.dirname(report), 'report.png') : out;
  const full = fullArg === '1' || fullArg === 'true' || fullArg === 'yes';
  const { layout, bytes, heightPx } = await screenshotReport(report, file, full);
  process.stdout.write(
    `${file}: ${Math.round(bytes / 1024)} KB, ${WINDOW.width} x ${heightPx} px; charts at ${layout.chartsTopPx ?? '-'} px, fault timeline at ${layout.faultsTopPx ?? '-'} px (window height ${WINDOW.height} px); ${layout.incidentsShown} incidents shown, at most ${layout.maxKeysPerIncident} keys listed per incident\n`,
  );
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`report-screenshot: ${(e as Error).message.split('\n')[0]}\n`);
      process.exit(3);
    },
  );
}
