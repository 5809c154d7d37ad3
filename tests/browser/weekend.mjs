// A correspondence clock standing still on the game's page, in Debian's headless
// Chromium, against a real server that `tests/web_correspondence.rs` prepared: Wes
// (Black, to move, 3 days a move) has today and tomorrow as his weekend, and two games,
// one with `weekends` (WEEKEND_GAME) and one without (PLAIN_GAME).
//
//   WEEKEND_GAME=… PLAIN_GAME=… node tests/browser/weekend.mjs http://127.0.0.1:7482/
//
// On his weekend his clock shows the server's time (nothing charged), says until when
// it stands, and does not move when the page's clock runs ten minutes on (Playwright's
// fake clock); in the other game the same ten minutes are counted. On vacation (gone
// from his profile on his phone) that clock stands still too, at the server's time and
// saying so; back, it runs again.

import { PHONE, assert, devLogin, game, log, openPage, problems, run, shot } from './lib.mjs';

const DAY = 86_400_000;
const onWeekend = process.env.WEEKEND_GAME;
const plain = process.env.PLAIN_GAME;

/** The game's snapshot as a spectator's fresh connection gets it from the server. */
function serverSnapshot(page, gameId) {
  return page.evaluate((id) => new Promise((resolve, reject) => {
    const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`);
    ws.onmessage = (e) => {
      const msg = JSON.parse(e.data);
      if (msg.type === 'welcome') ws.send(JSON.stringify({ type: 'join', id: 1, game_id: id }));
      else if (msg.type === 'snapshot') {
        ws.close();
        resolve(msg);
      } else if (msg.type === 'error') reject(new Error(msg.message));
    };
  }), gameId);
}

/** `ms` as the page writes a clock. */
const formatted = (page, ms) => page.evaluate(async (v) => (await import('/js/ui.js')).formatMs(v), ms);

/** A clock's "h:mm:ss" in ms. */
const parsed = (text) => text.split(':').reduce((acc, part) => acc * 60 + Number(part), 0) * 1000;

await run('weekend', async () => {
  assert(onWeekend && plain, 'WEEKEND_GAME and PLAIN_GAME name the games');
  const wes = await openPage('wes', { before: (context) => context.clock.install() });
  await devLogin(wes, 'wes');
  const clock = wes.locator('[data-testid="clock-black"]');
  const shown = () => clock.locator('.clock-main').textContent();
  const open = async (id) => {
    await wes.goto(new URL(`#/game/${id}`, wes.url()).href);
    await game(wes).and(wes.locator(`[data-game-id="${id}"][data-phase="play"]`)).waitFor();
  };
  // Ten minutes on the page's clock, and a real moment for the ticker to draw them.
  const tenMinutesOn = async () => {
    await wes.clock.fastForward('10:00');
    await wes.waitForTimeout(300);
  };

  log('on his weekend, wes\'s clock stands at the server\'s time and says until when');
  await open(onWeekend);
  await wes.locator('[data-testid="clock-black"][data-still="weekend"]').waitFor();
  const snap = await serverSnapshot(wes, onWeekend);
  assert(snap.clock.running === 'black', `black's clock is the running one: ${JSON.stringify(snap.clock)}`);
  assert(snap.clock.black.period_ms === 3 * DAY, `nothing charged on his weekend: ${snap.clock.black.period_ms}`);
  const weekend = snap.clock.weekend;
  assert(weekend && weekend.from === undefined && weekend.until > snap.server_time, `the weekend is under way: ${JSON.stringify(weekend)}`);
  const full = await formatted(wes, snap.clock.black.period_ms);
  assert(await shown() === full, `the server's time: ${await shown()} (${full})`);
  const hint = await wes.textContent('[data-testid="clock-still-black"]');
  const until = await wes.evaluate((ms) => new Date(ms).toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit' }), weekend.until);
  assert(hint === `weekend until ${until}`, `until when: ${hint} (${until})`);
  assert(!(await clock.getAttribute('class')).includes('running'), 'not drawn as running');
  await tenMinutesOn();
  assert(await shown() === full, `ten minutes on, it still stands: ${await shown()}`);
  await shot(wes, 'clock-weekend.png');

  log('the game without weekends counts the same ten minutes');
  await open(plain);
  await wes.locator('[data-testid="clock-black"].running').waitFor();
  assert(await clock.getAttribute('data-still') === null, 'nothing stands still here');
  const before = parsed(await shown());
  await tenMinutesOn();
  const after = parsed(await shown());
  assert(before - after >= 10 * 60_000 && before - after < 11 * 60_000, `ten minutes counted: ${before} → ${after}`);

  log('on vacation his clock stands still at the server\'s time; back, it runs');
  const phone = await openPage('wes-phone', { viewport: PHONE });
  await devLogin(phone, 'wes');
  await phone.goto(new URL('#/user/wes', phone.url()).href);
  await phone.click('[data-testid="vacation-start"]');
  await phone.locator('[data-testid="vacation-away"]').waitFor();
  await wes.locator('[data-testid="clock-black"][data-still="vacation"]').waitFor();
  assert(await wes.textContent('[data-testid="clock-still-black"]') === 'on vacation', 'says why');
  const away = await serverSnapshot(wes, plain);
  assert(away.clock.running === null, `the server runs no clock: ${JSON.stringify(away.clock)}`);
  const held = await formatted(wes, away.clock.black.period_ms);
  assert(await shown() === held, `the server's time: ${await shown()} (${held})`);
  await tenMinutesOn();
  assert(await shown() === held, `ten minutes on, it still stands: ${await shown()}`);
  await shot(wes, 'clock-vacation.png');
  await phone.click('[data-testid="vacation-end"]');
  await wes.locator('[data-testid="clock-black"].running').waitFor();
  assert(await clock.getAttribute('data-still') === null, 'back: it runs');

  // Wes has no rated game: his profile's ratings are a 404, which the page shows and the
  // browser logs, once.
  const notFound = problems.indexOf('wes-phone: console error: Failed to load resource: the server responded with a status of 404 (Not Found)');
  if (notFound >= 0) problems.splice(notFound, 1);
});
