// Notices in the client, in Debian's headless Chromium, against a real server:
//
//   node tests/browser/notices.mjs http://127.0.0.1:7482/
//
// Ann challenges Ben: the bell in Ben's header counts one unread notice, opens the list
// with the challenge, and marking it read brings the count to nothing. On his own
// profile Ben finds his notification settings: an address that is not one is refused
// with the server's words and nothing is kept; a real one is kept unverified, and a
// kind turned off stays off when the page is drawn again.

import { LAPTOP, assert, devLogin, expectAttr, log, openPage, problems, run, shot } from './lib.mjs';

const bell = '[data-testid="notice-bell"]';

await run('notices', async () => {
  const ann = await openPage('ann', { viewport: LAPTOP });
  const ben = await openPage('ben', { viewport: LAPTOP });
  await devLogin(ann, 'ann');
  await devLogin(ben, 'ben');
  await expectAttr(ben, bell, 'data-unread', '0');

  log('ann challenges ben');
  await ann.selectOption('[data-testid="seek-size"]', '9');
  await ann.fill('[data-testid="seek-opponent"]', 'ben');
  await ann.click('[data-testid="seek-submit"]');
  await expectAttr(ben, bell, 'data-unread', '1');
  assert((await ben.textContent('[data-testid="notice-count"]')) === '1', 'the bell shows the count');

  await ben.click(bell);
  const row = ben.locator('[data-testid="notice-row"][data-kind="challenge_received"]');
  await row.waitFor();
  assert((await row.getAttribute('data-read')) === 'false', 'the new notice is unread');
  assert((await row.textContent()).includes('ann challenges you'), `the notice says who: ${await row.textContent()}`);
  await shot(ben, 'notices-bell.png');
  await ben.click('[data-testid="notices-read"]');
  await expectAttr(ben, bell, 'data-unread', '0');
  await expectAttr(ben, '[data-testid="notice-row"]', 'data-read', 'true');
  assert((await ben.textContent('[data-testid="notice-count"]')) === '', 'no count once read');

  log('ben\'s notification settings');
  await ben.click(bell);
  await ben.click('[data-testid="nav-profile"]');
  const address = ben.locator('[data-testid="notify-address"]');
  await address.waitFor();
  await ben.locator('[data-testid="notify-no-mail"]').waitFor();
  await ben.locator('[data-testid="profile-missing"]').waitFor();
  await address.fill('ben at example');
  await ben.click('[data-testid="notify-save"]');
  const refusal = ben.locator('[data-testid="toast-error"]');
  await refusal.waitFor();
  assert((await refusal.textContent()).includes('not a mail address'), `the refusal says why: ${await refusal.textContent()}`);

  await ben.click('[data-testid="profile-refresh"]');
  await address.waitFor();
  await ben.waitForFunction(() => document.querySelector('[data-testid="notify-address"]')?.value === '');
  await address.fill('ben@example.org');
  await ben.selectOption('[data-testid="notify-mode-game_ended"]', 'off');
  await ben.click('[data-testid="notify-save"]');
  await ben.locator('[data-testid="toast-ok"]').waitFor();
  await expectAttr(ben, '[data-testid="notify-verified"]', 'data-verified', 'false');

  await ben.click('[data-testid="profile-refresh"]');
  await ben.waitForFunction(() => document.querySelector('[data-testid="notify-address"]')?.value === 'ben@example.org');
  const mode = await ben.locator('[data-testid="notify-mode-game_ended"]').inputValue();
  assert(mode === 'off', `the kind turned off stays off: ${mode}`);
  await shot(ben, 'notify-settings.png', { fullPage: true });

  // Ben has played no game, so each of the three loads of his profile read a 404 for
  // its ratings, which the page shows (profile-missing) and the browser logs: those
  // three, and no other, are expected.
  const notFound = 'ben: console error: Failed to load resource: the server responded with a status of 404 (Not Found)';
  const seen = problems.filter((p) => p === notFound).length;
  assert(seen === 3, `the profile was read three times, each a 404: ${seen}`);
  problems.splice(0, problems.length, ...problems.filter((p) => p !== notFound));
});
