// Vacation on one's own profile, in Debian's headless Chromium, against a real server:
//
//   node tests/browser/vacation.mjs http://127.0.0.1:7482/
//
// Ben finds his vacation balance on his profile (the server's 10 days to start with),
// goes on vacation and is shown away, then comes back and has paid the hour begun. Ada,
// whose browser is in Berlin, takes its time zone when offered and picks Friday and
// Saturday for her weekend, a third day waiting while two are ticked.

import { PHONE, assert, devLogin, expectAttr, log, openPage, problems, run, shot } from './lib.mjs';

const DAY = 86_400_000;
const HOUR = 3_600_000;

await run('vacation', async () => {
  const ben = await openPage('ben', { viewport: PHONE });
  await devLogin(ben, 'ben');
  await ben.goto(new URL('#/user/ben', ben.url()).href);

  log('the balance on ben\'s profile');
  await expectAttr(ben, '[data-testid="vacation-balance"]', 'data-balance', String(10 * DAY));
  assert((await ben.textContent('[data-testid="vacation-balance"]')).includes('10 d 0 h'), 'days and hours');

  log('away, and back');
  await ben.click('[data-testid="vacation-start"]');
  await ben.locator('[data-testid="vacation-away"]').waitFor();
  await ben.locator('[data-testid="toast-ok"]').waitFor();
  await shot(ben, 'vacation-away.png', { fullPage: true });
  await ben.click('[data-testid="vacation-end"]');
  // The hour begun is paid (and the few ms since, gained again at 5 days in 30).
  await ben.locator('[data-testid="vacation-start"]').waitFor();
  const left = Number(await ben.getAttribute('[data-testid="vacation-balance"]', 'data-balance'));
  assert(left >= 10 * DAY - HOUR && left < 10 * DAY - HOUR + 60_000, `an hour paid: ${left}`);
  assert((await ben.textContent('[data-testid="vacation-balance"]')).includes('9 d 23 h'), 'days and hours');

  log('ada\'s weekend: her browser\'s time zone offered once, then two days at most');
  const ada = await openPage('ada', { viewport: PHONE, timezoneId: 'Europe/Berlin' });
  await devLogin(ada, 'ada');
  await ada.goto(new URL('#/user/ada', ada.url()).href);
  const calendar = '[data-testid="calendar"]';
  await expectAttr(ada, calendar, 'data-zone', 'UTC');
  await expectAttr(ada, calendar, 'data-weekend', 'saturday,sunday');
  await ada.click('[data-testid="calendar-suggest-yes"]');
  await expectAttr(ada, calendar, 'data-zone', 'Europe/Berlin');
  assert(await ada.locator('[data-testid="calendar-suggest"]').count() === 0, 'asked once');
  assert(await ada.isDisabled('[data-testid="calendar-day-friday"]'), 'a third day waits');
  await ada.uncheck('[data-testid="calendar-day-sunday"]');
  await ada.check('[data-testid="calendar-day-friday"]');
  await shot(ada, 'calendar.png', { fullPage: true });
  await ada.click('[data-testid="calendar-save"]');
  await expectAttr(ada, calendar, 'data-weekend', 'friday,saturday');

  log('the weekend is kept, and the zone is not offered again');
  await ada.goto(new URL('#/', ada.url()).href);
  await ada.goto(new URL('#/user/ada', ada.url()).href);
  await expectAttr(ada, calendar, 'data-weekend', 'friday,saturday');
  await expectAttr(ada, calendar, 'data-zone', 'Europe/Berlin');
  assert(await ada.locator('[data-testid="calendar-suggest"]').count() === 0, 'not offered again');

  // Neither has played a game: each profile's ratings are a 404, which the page shows
  // and the browser logs.
  const notFound = (who) => `${who}: console error: Failed to load resource: the server responded with a status of 404 (Not Found)`;
  problems.splice(0, problems.length, ...problems.filter((p) => p !== notFound('ben') && p !== notFound('ada')));
});
