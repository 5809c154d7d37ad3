// The referee in the web client, against a real server:
//
//   TENGEN_REFEREE_TOKEN=<a referee's token> node tests/browser/referee.mjs http://127.0.0.1:7480/
//
// Ann and Ben (dev login) play a 9x9 game that names Li its referee; Ann mutes Ben's
// chat (her page hides his lines, the one muted and the next); Ben calls the referee
// from the game. Li, a referee logged in with a pasted token, finds the game among hers
// and the call in the referee view (`#/referee`),
// opens the game and warns Ann with a reason: both players see the warning in the game's
// referee log, and Ann's card shows it. Ann reports the game; Li sees the report (citing
// the game's latest events) and closes it. Li adjourns the game, then ends it with a
// draw: both players see the adjournment, the ruling and the result.

import path from 'node:path';
import { artifacts, assert, devLogin, game, log, openPage, run } from './lib.mjs';

const token = process.env.TENGEN_REFEREE_TOKEN;

/** The referee log's lines of `type` on `page`. */
const notes = (page, type) => page.locator(`[data-testid="referee-log"] li[data-type="${type}"]`);

await run('referee', async () => {
  assert(token, 'TENGEN_REFEREE_TOKEN must hold a referee token');
  const ann = await openPage('ann');
  const ben = await openPage('ben');
  const li = await openPage('li');
  await devLogin(ann, 'ann');
  await devLogin(ben, 'ben');
  await li.click('[data-testid="login-open"]');
  await li.fill('[data-testid="token-input"]', token);
  await li.click('[data-testid="token-submit"]');
  await li.waitForSelector('[data-testid="whoami"]:text-is("li")');
  await li.locator('[data-testid="nav-referee"]').waitFor();
  assert(await ann.locator('[data-testid="nav-referee"]').count() === 0, 'players have no referee view in the header');
  log('ann and ben logged in; li logged in as a referee');

  // The game itself is started through each page's own connection; it names Li its
  // referee.
  const created = await ann.evaluate(() => window.tengen.conn.request({
    type: 'seek', settings: { board_size: 9, color: 'black', clock: { system: 'absolute', main_ms: 600000 }, referee: 'li' },
  }));
  const challengeId = created.challenge.challenge_id;
  await ben.evaluate((id) => window.tengen.conn.request({ type: 'accept', challenge_id: id }), challengeId);
  await game(ann).and(ann.locator('[data-phase="play"]')).waitFor();
  await game(ben).and(ben.locator('[data-phase="play"]')).waitFor();
  const gameId = await game(ann).getAttribute('data-game-id');
  log(`game ${gameId} started`);

  // Ann mutes Ben's chat: his lines, that one and the next, are hidden on her page only.
  await ben.fill('[data-testid="chat-input"]', 'you will lose anyway');
  await ben.click('[data-testid="chat-send"]');
  const benSays = (page) => page.locator('[data-testid="chat-log"] li[data-from="ben"]');
  await benSays(ann).waitFor();
  await benSays(ann).locator('[data-testid="mute"]').click();
  await benSays(ann).waitFor({ state: 'detached' });
  await ben.fill('[data-testid="chat-input"]', 'still there?');
  await ben.click('[data-testid="chat-send"]');
  await ben.locator('[data-testid="chat-log"] li[data-from="ben"]:nth-child(2)').waitFor();
  // Ann's page has the line (its game view holds both), and shows neither.
  await ann.waitForFunction(() => window.tengen.app.view.chat.length === 2);
  assert(await benSays(ann).count() === 0, 'a muted player\'s lines stay hidden');
  log('ann muted ben\'s chat');

  // Ben calls the referee; both players see the call in the referee log.
  await ben.fill('[data-testid="referee-call-input"]', 'my opponent keeps sending messages');
  await ben.click('[data-testid="referee-call-send"]');
  for (const page of [ann, ben]) await notes(page, 'referee_called').waitFor();
  assert((await notes(ann, 'referee_called').textContent()).includes('White called the referee'), 'the call names its caller');
  log('ben called the referee');

  // Li finds the call in the referee view and opens its game.
  await li.evaluate(() => { location.hash = '#/referee'; });
  await li.locator(`[data-testid="assigned"][data-game-id="${gameId}"]`).waitFor();
  const call = li.locator(`[data-testid="call"][data-game-id="${gameId}"]`);
  await call.waitFor();
  assert((await call.textContent()).includes('my opponent keeps sending messages'), 'the call shows its message');
  await li.screenshot({ path: path.join(artifacts, 'referee-view.png') });
  await call.locator('[data-testid="call-game"]').click();
  await game(li).and(li.locator('[data-role="spectator"]')).waitFor();
  await li.locator('[data-testid="referee-actions"]').waitFor();
  assert(await ann.locator('[data-testid="referee-actions"]').count() === 0, 'a player has no referee actions');
  // The log shows what happened before Li came, from the game's record.
  await notes(li, 'referee_called').waitFor();

  // A warning for Black, with its reason.
  await li.selectOption('[data-testid="ref-action"]', 'warn');
  await li.selectOption('[data-testid="ref-color"]', 'black');
  await li.fill('[data-testid="ref-reason"]', 'chat used to distract the opponent');
  await li.click('[data-testid="ref-apply"]');
  for (const page of [ann, ben, li]) await notes(page, 'warned').waitFor();
  const warned = await notes(ann, 'warned').textContent();
  assert(warned.includes('Referee li warned Black (warning 1): chat used to distract the opponent'), `the warning in words: ${warned}`);
  await ann.locator('[data-testid="warnings-black"]:text-is("1 warning")').waitFor();
  log('li warned ann; both players see it');

  // Ann reports the game; Li sees the report and closes it.
  await ann.fill('[data-testid="report-input"]', 'white is calling the referee to stall');
  await ann.click('[data-testid="report-send"]');
  await li.evaluate(() => { location.hash = '#/referee'; });
  const report = li.locator('[data-testid="report"]');
  await report.waitFor();
  const reportText = await report.textContent();
  assert(reportText.includes('by ann') && reportText.includes('about ben') && reportText.includes(gameId), `the report cites who and where: ${reportText}`);
  assert(/events 1–\d+/.test(reportText), `the report cites the game's events: ${reportText}`);
  await report.locator('[data-testid="close-report"]').click();
  await li.locator('[data-testid="no-reports"]').waitFor();
  await li.locator('[data-testid="no-calls"]').waitFor();
  log('li read and closed ann\'s report; the call was answered by the warning');

  // Back in the game, Li ends it with a draw.
  await li.evaluate((id) => { location.hash = `#/game/${id}`; }, gameId);
  await li.locator('[data-testid="referee-actions"]').waitFor();
  // An adjournment from now: the players see it scheduled.
  await li.selectOption('[data-testid="ref-action"]', 'adjourn');
  await li.fill('[data-testid="ref-minutes"]', '0');
  await li.fill('[data-testid="ref-reason"]', 'end of the session');
  await li.click('[data-testid="ref-apply"]');
  for (const page of [ann, ben]) await notes(page, 'adjournment_scheduled').waitFor();
  await li.selectOption('[data-testid="ref-action"]', 'rule');
  await li.selectOption('[data-testid="ref-ruling"]', 'draw');
  await li.fill('[data-testid="ref-reason"]', 'both players agree to stop');
  await li.click('[data-testid="ref-apply"]');
  for (const page of [ann, ben]) {
    await game(page).and(page.locator('[data-phase="ended"]')).waitFor();
    await notes(page, 'ruled').waitFor();
  }
  assert((await notes(ben, 'ruled').textContent()).includes('ruled: a draw: both players agree to stop'), 'the ruling in words');
  // Once the game is over, the referee may change the result instead.
  const after = await li.locator('[data-testid="ref-action"] option').allTextContents();
  assert(after.includes('Change the result'), `after the end the referee changes results: ${after}`);
  // A ruling is no escape: Ann's profile says she has none.
  await ann.evaluate(() => { location.hash = '#/user/ann'; });
  await ann.locator('[data-testid="escapes"][data-count="0"]').waitFor();
  await ann.evaluate((id) => { location.hash = `#/game/${id}`; }, gameId);
  await game(ann).and(ann.locator('[data-phase="ended"]')).waitFor();
  await notes(ann, 'ruled').waitFor();
  await li.screenshot({ path: path.join(artifacts, 'referee-game.png') });
  await ann.screenshot({ path: path.join(artifacts, 'referee-player.png') });
  log('li ruled a draw; both players see the ruling');
});
