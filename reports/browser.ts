import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/**
 * report.html in a real browser: the system's Chromium (Debian's `chromium` package), driven
 * headless through playwright-core. Never a downloaded browser: playwright-core is pointed at
 * {@link CHROMIUM_PATH} and the page is loaded offline from its file. Used by the report's
 * browser test and by `make report-screenshot`.
 */

/** The Chromium this uses (Debian's chromium package). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Chromium's flags: headless in a container as root (no sandbox, no GPU), and nothing that
 * reaches the network on its own (no QUIC, no background networking, component updates or sync).
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why {@link CHROMIUM_PATH} cannot be run here (one line), or null when it can. */
export function chromiumMissing(): string | null {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return null;
  } catch {
    return `no Chromium: ${CHROMIUM_PATH} is not installed (apt-get install -y chromium, or run .ci/run)`;
  }
}

/** A headless Chromium with a fresh profile; `close` ends it and removes the profile. */
export interface HeadlessChromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Starts {@link CHROMIUM_PATH} headless with {@link CHROMIUM_ARGS}, a fresh user data folder
 * (`zaris-certify-chromium-*` under the temporary folder) and a window of `viewport` CSS px
 * (default 1400 x 900), device scale 1.
 * @throws Error when Chromium is missing or does not start within 60 s.
 */
export async function launchChromium(viewport: { width: number; height: number } = { width: 1400, height: 900 }): Promise<HeadlessChromium> {
  const missing = chromiumMissing();
  if (missing !== null) throw new Error(missing);
  const profile = mkdtempSync(path.join(os.tmpdir(), 'zaris-certify-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS],
      viewport,
      deviceScaleFactor: 1,
      timeout: 60_000,
    });
  } catch (e) {
    rmSync(profile, { recursive: true, force: true });
    throw e;
  }
  return {
    context,
    close: async () => {
      try {
        await context.close();
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
    },
  };
}

/** A report opened in a page, with what went wrong while it loaded. */
export interface OpenedReport {
  page: Page;
  /** Console errors and uncaught exceptions of the page, in order. */
  errors: string[];
  /** Requests the page made for anything but its own file (each refused): a self-contained page makes none. */
  external: string[];
  /** The chart script's own counts (its `data-charts-drawn` and `data-chart-errors` on the body). */
  chartsDrawn: number;
  chartErrors: number;
}

/**
 * Opens `file` (a report.html) in a new page of `browser`, refusing every request that is not
 * for a file: or data: URL, and waits for the chart script to have finished (the body's
 * `data-charts-drawn`).
 * @throws Error when the page does not load, or its charts are not done, within `timeoutMs` (default 60 s).
 */
export async function openReport(browser: HeadlessChromium, file: string, timeoutMs = 60_000): Promise<OpenedReport> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  const external: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`exception: ${e.message}`));
  await page.route(
    (url) => url.protocol !== 'file:' && url.protocol !== 'data:',
    async (route) => {
      external.push(route.request().url());
      await route.abort();
    },
  );
  await page.goto(pathToFileURL(path.resolve(file)).href, { waitUntil: 'load', timeout: timeoutMs });
  // page-side code as text: this project compiles without the DOM's types
  await page.waitForFunction("document.body.hasAttribute('data-charts-drawn')", undefined, { timeout: timeoutMs });
  const counts = (await page.evaluate("[Number(document.body.getAttribute('data-charts-drawn')), Number(document.body.getAttribute('data-chart-errors'))]")) as [number, number];
  return { page, errors, external, chartsDrawn: counts[0], chartErrors: counts[1] };
}
