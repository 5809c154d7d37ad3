// What the browser scenarios share: Debian's headless Chromium, pages that fail the run
// on any console error or uncaught exception, the dev login, small waits and checks,
// screenshots in the artifact directory, and the pass/fail exit.

import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
export const base = process.argv[2] || 'http://127.0.0.1:7482/';
export const artifacts = process.env.TENGEN_ARTIFACTS || path.resolve(here, '../../target/browser-artifacts');
const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
export const WAIT = 15000;

/** Screen sizes the scenarios use. */
export const WIDE = { width: 1920, height: 1080 };
export const LAPTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };
export const PHONE_LANDSCAPE = { width: 844, height: 390 };

fs.mkdirSync(artifacts, { recursive: true });
const started = Date.now();
export const log = (...a) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s]`, ...a);

export const browser = await chromium.launch({
  executablePath,
  headless: true,
  args: [
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
});

export const problems = [];
export const pages = {};
/** Every WebSocket URL any page opened. */
export const socketUrls = [];

/**
 * Opens the client for `who` in a fresh browser context. `touch` makes a phone (touch
 * events, coarse pointer); `before(context)` runs before the page loads (e.g. a fake
 * clock).
 */
export async function openPage(who, { viewport = LAPTOP, touch = false, before = null, path: at = '', timezoneId } = {}) {
  const context = await browser.newContext({ viewport, hasTouch: touch, isMobile: touch, timezoneId });
  if (before) await before(context);
  const page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    // While the server is down on purpose, the browser says so about each retry.
    if (restarting && /WebSocket connection to .* failed/.test(m.text())) return;
    problems.push(`${who}: console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`${who}: uncaught exception: ${e.message}`));
  page.on('websocket', (ws) => socketUrls.push(ws.url()));
  pages[who] = page;
  if (process.env.TENGEN_WEB_DIR) await serveFromDisk(context);
  await page.goto(base + at);
  await page.waitForSelector('[data-testid="conn-status"][data-status="online"]', { state: 'attached' });
  return page;
}

/**
 * For working on the client: `TENGEN_WEB_DIR=web` serves the page's files from that
 * directory instead of the server's compiled-in copy, so a change needs no rebuild.
 */
async function serveFromDisk(context) {
  const dir = path.resolve(process.env.TENGEN_WEB_DIR);
  await context.route(/\/(js\/[a-z]+\.js|style\.css|fonts\/[a-z-]+\.woff2)$/, (route) => {
    const file = path.join(dir, new URL(route.request().url()).pathname);
    const type = { css: 'text/css', woff2: 'font/woff2' }[file.split('.').pop()] || 'text/javascript';
    route.fulfill({ path: file, contentType: type });
  });
}

/** The harness's answers, when it can restart the server (`tests/web.rs` can). */
const answers = process.env.TENGEN_RESTART === '1'
  ? readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]()
  : null;
export const canRestart = answers !== null;
let restarting = false;

/**
 * Has the harness restart the server (it stays down a few seconds) and waits until
 * every page in `online` is connected again.
 */
export async function restartServer(online) {
  restarting = true;
  console.log('@restart');
  const { value } = await answers.next();
  assert(value === 'restarted', `the harness restarted the server: ${value}`);
  for (const page of online) {
    await page.waitForSelector('[data-testid="conn-status"][data-status="online"]', { state: 'attached', timeout: 30000 });
  }
  restarting = false;
}

/** What has the keyboard focus, as its `data-testid` (or tag name). */
export function focused(page) {
  return page.evaluate(() => document.activeElement?.dataset.testid || document.activeElement?.tagName.toLowerCase());
}

/** Waits until the element `testid` has the focus; fails saying what has it instead. */
export async function expectFocus(page, testid, why) {
  try {
    await page.waitForFunction((t) => document.activeElement?.dataset.testid === t, testid, { timeout: 5000 });
  } catch {
    throw new Error(`${why}: the focus is on ${await focused(page)}, not ${testid}`);
  }
}

/** Logs in with the dev login, typing the name where the dialog put the cursor. */
export async function devLogin(page, name) {
  await page.click('[data-testid="login-open"]');
  await expectFocus(page, 'dev-name', 'the login dialog puts the cursor in the dev login\'s name');
  await page.keyboard.type(name);
  await page.click('[data-testid="dev-submit"]');
  await page.waitForSelector(`[data-testid="whoami"]:text-is("${name}")`);
}

export const game = (page) => page.locator('[data-testid="game"]');

export async function expectAttr(page, selector, attr, value) {
  await page.waitForFunction(([s, a, v]) => document.querySelector(s)?.getAttribute(a) === v, [selector, attr, value]);
}

export function assert(cond, message) {
  if (!cond) throw new Error(message);
}

export async function shot(page, name, options = {}) {
  await page.evaluate(() => document.getElementById('toasts').replaceChildren());
  await page.screenshot({ path: path.join(artifacts, name), ...options });
}

/** Runs a scenario: screenshots of every page on failure, then exits 0 or 1. */
export async function run(name, scenario) {
  try {
    await scenario();
  } catch (err) {
    problems.push(`the scenario failed: ${err.stack || err}`);
    for (const [who, page] of Object.entries(pages)) {
      await page.screenshot({ path: path.join(artifacts, `failure-${name}-${who}.png`) }).catch(() => {});
    }
  }
  await browser.close();
  if (problems.length) {
    console.error(`FAILED:\n- ${problems.join('\n- ')}`);
    process.exit(1);
  }
  log(`PASS: ${name}, with no console errors`);
  // The harness's stdin, read for restarts, would keep the process alive.
  process.exit(0);
}
