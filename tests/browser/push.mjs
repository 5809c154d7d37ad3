// Web Push in the client, in Debian's headless Chromium, against a real server with
// `[push]` on (client-protocol/notifications.md#web-push):
//
//   node tests/browser/push.mjs http://127.0.0.1:7482/
//
// On his own profile Ben finds the "Push notifications on this device" switch, usable
// once the service worker (/sw.js) is installed, and a push box per kind: a kind turned
// off stays off when the page is drawn again. (Subscribing itself needs the browser's
// push service, which a machine without the Internet has not: tests/push.rs plays that.)

import { LAPTOP, assert, devLogin, log, openPage, problems, run, shot } from './lib.mjs';

await run('push', async () => {
  const ben = await openPage('ben', { viewport: LAPTOP });
  await devLogin(ben, 'ben');
  await ben.click('[data-testid="nav-profile"]');

  log('the switch, once the service worker is installed');
  const device = ben.locator('[data-testid="notify-push-device"]');
  await device.waitFor();
  await ben.waitForFunction(() => !document.querySelector('[data-testid="notify-push-device"]')?.disabled);
  assert(!(await device.isChecked()), 'this device is not subscribed yet');
  const worker = await ben.evaluate(async () => (await navigator.serviceWorker.getRegistration('/'))?.active?.scriptURL
    || (await navigator.serviceWorker.ready).active.scriptURL);
  assert(worker.endsWith('/sw.js'), `the client's service worker runs: ${worker}`);

  log('a kind turned off for push stays off');
  const box = ben.locator('[data-testid="notify-push-game_ended"]');
  assert(await box.isChecked(), 'every kind is pushed until turned off');
  await box.uncheck();
  await ben.click('[data-testid="notify-save"]');
  await ben.locator('[data-testid="toast-ok"]').waitFor();
  await ben.click('[data-testid="profile-refresh"]');
  await ben.locator('[data-testid="notify-push-game_ended"]').waitFor();
  await ben.waitForFunction(() => document.querySelector('[data-testid="notify-push-game_ended"]')?.checked === false);
  assert(await ben.locator('[data-testid="notify-push-your_move"]').isChecked(), 'the other kinds stay on');
  await shot(ben, 'push-settings.png', { fullPage: true });

  // Ben has played no game: each load of his profile reads a 404 for its ratings, which
  // the page shows and the browser logs. Those, and no other, are expected.
  const notFound = 'ben: console error: Failed to load resource: the server responded with a status of 404 (Not Found)';
  problems.splice(0, problems.length, ...problems.filter((p) => p !== notFound));
});
