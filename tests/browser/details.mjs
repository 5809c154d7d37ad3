// The client around one game, in Debian's headless Chromium, against a real server:
//
//   node tests/browser/details.mjs http://127.0.0.1:7482/
//
// Dana plays on a wide screen, Eve on a phone (390x844, touch). One set of speed names
// (the server's classes) in the lobby's filter and in automatch; a challenge's notice
// brings its card on screen with the heading below the sticky header; the "game started"
// notice and a pause request's notice keep off Pass, Pause and Resign; a pass confirmed
// by a second tap on the phone, and on any screen when it would end play (one click
// otherwise on the wide screen); the Chinese result drawn in the font the server serves;
// review with each move's clocks and time used; an analysis board saved as a review
// whose address survives a reload and opens where the analysis began; the archive's
// filters kept in the address, "Recent games" starting from none; a rematch declined,
// then accepted, with the same settings and the colours swapped.

import { PHONE, WIDE, assert, devLogin, expectAttr, game, log, openPage, run, shot } from './lib.mjs';

const seconds = (text) => text.split(':').reduce((acc, part) => acc * 60 + Number(part), 0);
const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/**
 * Waits while a notice is shown for Pass, Pause and Resign to be uncovered (each one's
 * middle is the button itself); fails if the notice goes first.
 */
async function noticeOffControls(page, what) {
  const state = await page.waitForFunction(() => {
    if (!document.querySelector('#toasts .toast')) return 'gone';
    const covered = ['pass', 'pause', 'resign'].filter((t) => {
      const b = document.querySelector(`[data-testid="${t}"]`);
      const r = b.getBoundingClientRect();
      return !b.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
    });
    return covered.length ? false : 'clear';
  }, null, { timeout: 12000 });
  assert((await state.jsonValue()) === 'clear', `${what} keeps off Pass, Pause and Resign while it is shown`);
}

await run('details', async () => {
  const dana = await openPage('dana', { viewport: WIDE });
  const eve = await openPage('eve', { viewport: PHONE, touch: true });
  await devLogin(dana, 'dana');
  await devLogin(eve, 'eve');

  // One set of speed names: the lobby filters by the classes automatch asks for.
  const filter = await eve.locator('[data-testid="filter-speed"] option').evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
  const asked = await eve.locator('[data-testid^="automatch-speed-"]').evaluateAll((cs) => cs.map((c) => c.dataset.testid.replace('automatch-speed-', '')));
  assert(filter.join() === 'blitz,live,long' && asked.join() === filter.join(), `the lobby's speeds (${filter}) are automatch's (${asked}), the server's classes`);

  // Dana challenges Eve, who is far down the lobby; tapping the notice brings the
  // challenge on screen with its card's heading below the sticky header.
  await eve.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  await dana.selectOption('[data-testid="seek-size"]', '9');
  await dana.selectOption('[data-testid="seek-color"]', 'black');
  await dana.selectOption('[data-testid="seek-time"]', 'absolute');
  await dana.fill('[data-testid="seek-main"]', '10');
  await dana.fill('[data-testid="seek-opponent"]', 'eve');
  await dana.click('[data-testid="seek-submit"]');
  await eve.locator('[data-testid="toast-tap"]').tap();
  const row = eve.locator('[data-testid="seek-row"][data-from="dana"]');
  await row.waitFor();
  const heading = () => eve.evaluate(() => {
    const h = document.querySelector('#seeks h2').getBoundingClientRect();
    return { top: Math.round(h.top), header: Math.round(document.querySelector('.masthead').getBoundingClientRect().bottom) };
  });
  try {
    await eve.waitForFunction(() => {
      const h = document.querySelector('#seeks h2').getBoundingClientRect();
      return h.top >= document.querySelector('.masthead').getBoundingClientRect().bottom && h.top < innerHeight / 2;
    }, null, { timeout: 5000 });
  } catch {
    throw new Error(`the challenges' heading is on screen below the header: ${JSON.stringify(await heading())}`);
  }
  await row.locator('[data-testid="accept"]').tap();
  await game(dana).and(dana.locator('[data-phase="play"]')).waitFor();
  await game(eve).and(eve.locator('[data-phase="play"]')).waitFor();
  const gameId = await game(dana).getAttribute('data-game-id');
  const settings = await dana.locator('[data-testid="game-settings"]').textContent();
  log(`eve accepted from the notice: game ${gameId} (${settings})`);

  // The notices keep off the controls: Eve has scrolled down to them.
  await eve.locator('[data-testid="resign"]').evaluate((b) => b.scrollIntoView({ block: 'end' }));
  await noticeOffControls(eve, 'the "game started" notice');
  await dana.click('[data-testid="pause"]');
  await eve.locator('[data-testid="pause"]', { hasText: 'Agree to pause' }).waitFor();
  await noticeOffControls(eve, 'the notice of a pause request');
  log('notices keep off Pass, Pause and Resign on the phone');

  let moves = 0;
  const played = async () => {
    moves += 1;
    for (const p of [dana, eve]) await expectAttr(p, '[data-testid="game"]', 'data-moves', String(moves));
  };
  const point = (p, v) => p.locator(`[data-testid="goban"] [data-vertex="${v}"]`);
  const unplayed = async (p, why) => {
    await p.locator('[data-testid="pass"][data-armed="yes"]').waitFor();
    await sleep(300);
    assert((await game(p).getAttribute('data-moves')) === String(moves), why);
  };

  await point(dana, 'E5').click();
  await played();
  // On the phone a pass needs a second tap, as a stone does.
  await eve.locator('[data-testid="pass"]').tap();
  await unplayed(eve, 'one tap on Pass does not pass on a phone');
  await eve.locator('[data-testid="pass"]').tap();
  await played();
  // After the opponent's pass a pass would end play: a second click even on the wide
  // screen. Dana thinks it over (2.5 s) and plays a stone instead.
  await sleep(2500);
  await dana.click('[data-testid="pass"]');
  await unplayed(dana, 'one click on Pass after the opponent\'s pass does not end play');
  await point(dana, 'G5').click();
  await played();
  await point(eve, 'C3').tap();
  await point(eve, 'C3').tap();
  await played();
  // A pass that ends nothing takes one click on the wide screen.
  await dana.click('[data-testid="pass"]');
  await played();
  await eve.locator('[data-testid="pass"]').tap();
  await unplayed(eve, 'one tap on Pass after the opponent\'s pass does not end play');
  await eve.locator('[data-testid="pass"]').tap();
  await played();
  for (const p of [dana, eve]) await expectAttr(p, '[data-testid="game"]', 'data-phase', 'scoring');
  log('passes confirmed: twice on the phone, twice on the wide screen when play would end');

  await dana.click('[data-testid="accept-score"]');
  await eve.locator('[data-testid="accept-score"]').tap();
  for (const p of [dana, eve]) {
    await expectAttr(p, '[data-testid="result"]', 'data-result', 'W+6.5');
    // The Chinese result is drawn, in the font the server serves when the system has none.
    await p.locator('[data-testid="result-chinese"]', { hasText: '白胜3又1/4子' }).waitFor();
    const font = await p.evaluate(() => [...document.fonts].filter((f) => f.family.replace(/"/g, '') === 'tengen CJK').map((f) => f.status));
    assert(font.includes('loaded'), `the served CJK font is loaded: ${font}`);
  }
  log('counted: W+6.5, 白胜3又1/4子 shown in the served font');

  // Review: each move's clocks and the time it took, not the final clocks.
  await dana.locator('body').click({ position: { x: 5, y: 300 } });
  const clock = async (colour) => seconds(await dana.locator(`[data-testid="clock-${colour}"] .clock-main`).textContent());
  const finalBlack = await clock('black');
  await dana.keyboard.press('Home');
  await expectAttr(dana, '[data-testid="game"]', 'data-view', '0');
  assert((await clock('black')) === 600 && (await clock('white')) === 600, 'the start: both clocks full');
  await dana.keyboard.press('ArrowRight');
  await expectAttr(dana, '[data-testid="game"]', 'data-view', '1');
  const afterOne = await clock('black');
  await dana.keyboard.press('ArrowRight');
  await dana.keyboard.press('ArrowRight');
  await expectAttr(dana, '[data-testid="game"]', 'data-view', '3');
  const afterThree = await clock('black');
  const took = dana.locator('[data-testid="used-black"]');
  assert((await took.getAttribute('data-move')) === '3' && Number(await took.getAttribute('data-used-ms')) >= 2500,
    `move 3's time is shown: ${await took.getAttribute('data-used-ms')} ms (${await took.textContent()})`);
  assert(afterOne >= afterThree + 2 && afterThree >= finalBlack, `black's clock after move 1 (${afterOne} s), after move 3 (${afterThree} s), at the end (${finalBlack} s)`);
  // Where the clock does not tell (a byo-yomi period starts afresh), the time since the
  // opponent's move, less the lag credit; nothing when the clocks stopped in between.
  const byoyomi = await dana.evaluate(async () => {
    const { MoveTimes } = await import('/js/clock.js');
    const side = { main_ms: 0, periods_left: 3, period_ms: 30000, moves_left: 0 };
    const clock = { black: side, white: side, running: null, paused: false };
    const times = new MoveTimes({ system: 'byoyomi', main_ms: 0, periods: 3, period_ms: 30000 });
    const move = (n, color, at, extra = {}) => times.add({ type: 'move_played', move_number: n, color, clock, at, ...extra });
    move(1, 'black', 1000);
    move(2, 'white', 13000, { lag_credit_ms: 40 });
    times.add({ type: 'paused' });
    times.add({ type: 'resumed' });
    move(3, 'black', 90000);
    return [1, 2, 3].map((k) => times.used(k)).join();
  });
  assert(byoyomi === ',11960,', `byo-yomi moves' times: ${byoyomi}`);
  await shot(dana, 'review-clocks-wide.png');
  log(`review: black's clock ${afterOne} s after move 1, ${afterThree} s after move 3, which took ${await took.textContent()}`);

  // The analysis board from move 3, saved: its address stays the review's through a
  // reload, and it opens where the analysis began.
  await dana.click('[data-testid="analyze"]');
  await expectAttr(dana, '[data-testid="analysis"]', 'data-moves', '3');
  await dana.click('[data-testid="analysis-save"]');
  const review = await dana.locator('[data-testid="review-link"]').getAttribute('href');
  for (const when of ['saved', 'reloaded']) {
    if (when === 'reloaded') {
      await dana.reload();
      await dana.locator(`[data-testid="review-link"][href="${review}"]`).waitFor();
    }
    await expectAttr(dana, '[data-testid="analysis"]', 'data-moves', '3');
    await dana.locator('[data-stone="G5"][data-color="black"]').waitFor();
    const address = new URL(dana.url()).hash;
    assert(address === review, `${when}, the address is the review's (${review}): ${address}`);
  }
  log(`the saved review ${review} keeps its address and opens at move 3`);

  // The archive keeps its filters in the address; "Recent games" starts from none.
  await eve.goto(new URL('#/archive', eve.url()).href);
  const archived = eve.locator(`[data-testid="archive-row"][data-game-id="${gameId}"]`);
  await archived.waitFor();
  await eve.selectOption('[data-testid="archive-size"]', '13');
  await archived.waitFor({ state: 'detached' });
  const filtered = new URL(eve.url()).hash;
  assert(/size=13/.test(filtered) && /player=eve/.test(filtered), `the filters are in the address: ${filtered}`);
  await eve.reload();
  await eve.locator('[data-testid="archive-empty"]').waitFor();
  assert((await eve.locator('[data-testid="archive-size"]').inputValue()) === '13', 'a reload keeps the size filter');
  await eve.locator('[data-testid="archive-recent"]').tap();
  await archived.waitFor();
  assert((await eve.locator('[data-testid="archive-size"]').inputValue()) === '', 'Recent games drops the old size filter');
  assert(!/size=/.test(new URL(eve.url()).hash), `and so does the address: ${new URL(eve.url()).hash}`);
  log('the archive: filters in the address, Recent games from no filter');

  // A rematch: Dana offers it from the ended game; Eve, on its page, declines, then
  // accepts the next one: same settings, colours swapped.
  await dana.goto(new URL(`#/game/${gameId}`, dana.url()).href);
  await eve.goto(new URL(`#/game/${gameId}`, eve.url()).href);
  for (const p of [dana, eve]) await expectAttr(p, '[data-testid="game"]', 'data-phase', 'ended');
  await dana.click('[data-testid="rematch"]');
  await dana.locator('[data-testid="rematch-sent"]').waitFor();
  await eve.locator('[data-testid="rematch-offer"]', { hasText: 'dana offers a rematch · you play black' }).waitFor();
  assert((await eve.locator('[data-testid="toast-tap"]').count()) === 0, 'the offer is shown in the game, not as a challenge to go and find');
  await shot(eve, 'rematch-phone.png', { fullPage: true });
  await eve.locator('[data-testid="rematch-decline"]').tap();
  await dana.locator('[data-testid="rematch-note"]', { hasText: 'eve declined the rematch.' }).waitFor();
  await eve.locator('[data-testid="rematch"]').waitFor();
  await dana.click('[data-testid="rematch"]');
  await eve.locator('[data-testid="rematch-accept"]').tap();
  for (const [p, colour] of [[dana, 'white'], [eve, 'black']]) {
    await game(p).and(p.locator('[data-phase="play"]')).waitFor();
    const id = await game(p).getAttribute('data-game-id');
    assert(id !== gameId, `${colour} is in a new game`);
    await expectAttr(p, '[data-testid="game"]', 'data-role', colour);
    assert((await p.locator('[data-testid="game-settings"]').textContent()) === settings, 'the rematch has the same settings');
  }
  log('a rematch declined, then accepted: colours swapped, settings the same');
});
