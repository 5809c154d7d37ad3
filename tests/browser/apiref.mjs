// The HTTP API reference page (web/api.html), in Debian's headless Chromium, against a real
// server:
//
//   TENGEN_OPERATIONS=23 node tests/browser/apiref.mjs http://127.0.0.1:7482/
//
// Every operation of the OpenAPI document is rendered with its responses, a parameter
// table where it has parameters, its body's schema linked to a rendered schema, and no
// console error (the page's policy allows only its own server).

import path from 'node:path';
import { artifacts, assert, base, browser, problems, run } from './lib.mjs';

const operations = Number(process.env.TENGEN_OPERATIONS);

await run('apiref', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`uncaught exception: ${e.message}`));
  await page.goto(`${base}api.html`);
  await page.waitForSelector('[data-testid="apiref-status"][data-loaded="true"]', { state: 'attached' });
  const shown = await page.locator('[data-testid="apiref-op"]').count();
  assert(shown === operations, `${shown} operations shown, the document has ${operations}`);
  const games = page.locator('#get-api-games');
  assert(await games.locator('.apiref-params tr').count() === 4, 'GET /api/games shows its 4 parameters');
  assert(await games.locator('tr[data-status="400"]').count() === 1, 'GET /api/games shows its 400');
  // A body's schema links to the schema, which is on the page with its fields.
  const login = page.locator('#post-api-auth-login');
  await login.getByRole('link', { name: 'LoginRequest' }).click();
  const schema = page.locator('#schema-LoginRequest');
  assert((await schema.locator('strong').allTextContents()).includes('password'), 'LoginRequest shows `password` as required');
  await page.screenshot({ path: path.join(artifacts, 'apiref.png') });
});
