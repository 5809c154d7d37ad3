// A whole game in the web client, in Debian's headless Chromium, against a real server.
//
//   node tests/browser/game.mjs http://127.0.0.1:7482/
//
// Alice and Bob log in with the local dev login in two browser contexts and play a 9x9
// game with byo-yomi: walls, a capture, an illegal (suicide) move refused with a message,
// a pause agreed and lifted, players' chat, two passes, dead stones marked (and one mark
// taken back), and the count accepted by both. Carol, a third context that never logs in,
// watches from the lobby, loses her connection mid-game and must still see every move
// and the result. The final board is saved as a screenshot; any console error or
// uncaught exception on any page fails the run.

import path from 'node:path';
import {
  artifacts, assert, devLogin, expectAttr, game, log, openPage, run, socketUrls,
} from './lib.mjs';

let alice;
let bob;
let carol;
await run('game', async () => {
  alice = await openPage('alice');
  bob = await openPage('bob');
  carol = await openPage('carol');
  const everyone = [alice, bob, carol];
  log('three pages open');

  await devLogin(alice, 'alice');
  await devLogin(bob, 'bob');
  assert(await carol.locator('[data-testid="guest"]').isVisible(), 'carol should be a guest');
  log('alice and bob logged in with the dev login; carol is a guest');

  // Alice posts a seek: 9x9, she takes Black, 10 min + 5 x 30 s byo-yomi.
  await alice.selectOption('[data-testid="seek-size"]', '9');
  await alice.selectOption('[data-testid="seek-color"]', 'black');
  await alice.selectOption('[data-testid="seek-time"]', 'byoyomi');
  await alice.fill('[data-testid="seek-main"]', '10');
  await alice.fill('[data-testid="seek-periods"]', '5');
  await alice.fill('[data-testid="seek-period"]', '30');
  await alice.click('[data-testid="seek-submit"]');
  const seek = bob.locator('[data-testid="seek-row"][data-from="alice"]');
  await seek.waitFor();
  assert((await seek.textContent()).includes('9×9'), 'the seek shows its size');
  await carol.locator('[data-testid="seek-row"][data-from="alice"]').waitFor();
  await bob.screenshot({ path: path.join(artifacts, 'lobby.png') });
  await seek.locator('[data-testid="accept"]').click();
  log('bob accepted alice\'s seek');

  await game(alice).and(alice.locator('[data-phase="play"]')).waitFor();
  await game(bob).and(bob.locator('[data-phase="play"]')).waitFor();
  const gameId = await game(alice).getAttribute('data-game-id');
  assert(gameId === (await game(bob).getAttribute('data-game-id')), 'both players are in the same game');
  assert((await game(alice).getAttribute('data-role')) === 'black', 'alice plays black');
  assert((await game(bob).getAttribute('data-role')) === 'white', 'bob plays white');

  // Carol finds the game in the lobby's list and watches; its spectators are counted
  // beside an eye drawn in SVG, not an emoji a system may lack.
  const listed = carol.locator(`[data-testid="game-row"][data-game-id="${gameId}"]`);
  await listed.locator('[data-testid="spectators"] svg[data-icon="eye"]').waitFor();
  assert(!/\p{Extended_Pictographic}/u.test(await listed.textContent()), `no emoji in the lobby's row: ${await listed.textContent()}`);
  await carol.locator(`[data-testid="game-row"][data-game-id="${gameId}"] [data-testid="open-game"]`).click();
  await game(carol).and(carol.locator('[data-role="spectator"]')).waitFor();
  await carol.locator('[data-testid="watching"]').waitFor();
  log(`game ${gameId}: carol is watching`);

  // Clocks tick smoothly for the side to move, and show byo-yomi periods.
  const clockText = () => carol.locator('[data-testid="clock-black"] .clock-main').textContent();
  const before = await clockText();
  await carol.waitForTimeout(1300);
  const after = await clockText();
  assert(before !== after, `black's clock should tick (${before} then ${after})`);
  const extra = await carol.locator('[data-testid="clock-black"] .clock-extra').textContent();
  assert(extra.includes('5 × 0:30'), `the byo-yomi periods are shown: ${extra}`);
  log(`black's clock ticks: ${before} → ${after} (${extra})`);

  // Hovering an empty point on your turn shows a shadow stone.
  await alice.hover('[data-testid="goban"] [data-vertex="C3"]');
  await alice.waitForSelector('.hover-stone.hover-black[visibility="visible"]');

  let moveNumber = 0;
  async function play(page, colour, vertex) {
    moveNumber += 1;
    const n = String(moveNumber);
    if (vertex === 'pass') {
      await page.click('[data-testid="pass"]');
      // A pass that would end play asks for a second click.
      if (await page.locator('[data-testid="pass"][data-armed="yes"]').count()) await page.click('[data-testid="pass"]');
    } else await page.click(`[data-testid="goban"] [data-vertex="${vertex}"]`);
    for (const p of everyone) {
      await expectAttr(p, '[data-testid="game"]', 'data-moves', n);
      if (vertex !== 'pass') {
        await p.locator(`[data-stone="${vertex}"][data-color="${colour}"]`).waitFor();
        await expectAttr(p, '[data-testid="last-move"]', 'data-vertex', vertex);
      }
    }
  }

  // Walls: Black on the E line, White on the F line.
  for (let row = 1; row <= 9; row++) {
    await play(alice, 'black', `E${row}`);
    await play(bob, 'white', `F${row}`);
    if (row === 1) {
      await alice.fill('[data-testid="chat-input"]', 'have a good game');
      await alice.click('[data-testid="chat-send"]');
      for (const p of [bob, carol]) await p.locator('[data-testid="chat-log"] li', { hasText: 'have a good game' }).waitFor();
      log('players\' chat reaches the opponent and the spectator');
    }
    if (row === 2) {
      // A pause, asked by one and agreed by the other; then resumed the same way.
      await alice.click('[data-testid="pause"]');
      await bob.locator('[data-testid="pause"]', { hasText: 'Agree to pause' }).click();
      for (const p of everyone) await p.locator('[data-testid="status"]', { hasText: 'Paused' }).waitFor();
      await bob.click('[data-testid="resume"]');
      await alice.locator('[data-testid="resume"]', { hasText: 'Agree to resume' }).click();
      for (const p of everyone) await p.locator('[data-testid="status"]', { hasText: 'Your move' }).or(p.locator('[data-testid="status"]', { hasText: 'Black to move' })).waitFor();
      log('pause asked, agreed, and lifted');
    }
    if (row === 5) {
      // Carol's connection drops; she must reconnect and catch up (from a fresh snapshot).
      const welcomes = await carol.evaluate(() => window.tengen.conn.welcomes);
      await carol.evaluate(() => window.tengen.conn.socket.close());
      await play(alice, 'black', 'E6');
      await play(bob, 'white', 'F6');
      const now = await carol.evaluate(() => window.tengen.conn.welcomes);
      assert(now === welcomes + 1, `carol reconnected once (${welcomes} → ${now})`);
      log('carol lost her connection, reconnected and caught up');
      row += 1;
    }
  }

  await play(alice, 'black', 'H5');
  await play(bob, 'white', 'G5');
  await play(alice, 'black', 'A2');
  await play(bob, 'white', 'H4');
  await play(alice, 'black', 'B1');
  await play(bob, 'white', 'H6');
  await play(alice, 'black', 'B5');

  // A1 is suicide for White: the server refuses, and Bob is told why, in words.
  await bob.click('[data-testid="goban"] [data-vertex="A1"]');
  const refusal = bob.locator('[data-testid="toast-error"]', { hasText: /suicide/i });
  await refusal.waitFor();
  log(`bob's suicide was refused: "${(await refusal.textContent()).replace('×', '').trim()}"`);
  assert((await game(bob).getAttribute('data-moves')) === String(moveNumber), 'a refused move changes nothing');

  // J5 captures Black's H5.
  await play(bob, 'white', 'J5');
  for (const p of everyone) {
    await p.locator('[data-stone="H5"]').waitFor({ state: 'detached' });
    await p.locator('[data-testid="captures-white"]', { hasText: 'Captures: 1' }).waitFor();
  }
  log('J5 captured H5; every page shows White\'s capture');

  await play(alice, 'black', 'pass');
  await play(bob, 'white', 'C5');
  await play(alice, 'black', 'pass');
  await play(bob, 'white', 'pass');
  for (const p of everyone) await expectAttr(p, '[data-testid="game"]', 'data-phase', 'scoring');
  log('two passes: the dead-stone phase');

  // Alice marks White's C5 dead; Bob wrongly marks Black's B5; Alice takes that back.
  const deadOn = (p, v) => p.locator(`[data-stone="${v}"][data-dead="true"]`);
  await alice.click('[data-testid="goban"] [data-vertex="C5"]');
  for (const p of everyone) await deadOn(p, 'C5').waitFor();
  await bob.click('[data-testid="goban"] [data-vertex="B5"]');
  for (const p of everyone) await deadOn(p, 'B5').waitFor();
  await alice.click('[data-testid="goban"] [data-vertex="B5"]');
  for (const p of everyone) {
    await deadOn(p, 'B5').waitFor({ state: 'detached' });
    await expectAttr(p, '[data-testid="count"]', 'data-estimate', 'B+1.5');
  }
  log('marks: C5 dead, B5 marked and unmarked; every page counts B+1.5');
  await alice.screenshot({ path: path.join(artifacts, 'scoring.png') });

  await bob.click('[data-testid="accept-score"]');
  await alice.locator('[data-testid="accepted"]', { hasText: 'bob accepted' }).waitFor();
  await alice.click('[data-testid="accept-score"]');
  for (const p of everyone) {
    await expectAttr(p, '[data-testid="game"]', 'data-phase', 'ended');
    await expectAttr(p, '[data-testid="result"]', 'data-result', 'B+1.5');
    const text = await p.locator('[data-testid="result"]').textContent();
    assert(text.includes('Black wins by 1.5 points') && text.includes('¾ stone') && text.includes('黑胜3/4子'),
      `the result in points and in stones: ${text}`);
    // The Chinese is shown, drawn in the server's own font where the system has none.
    await p.locator('[data-testid="result-chinese"]').waitFor();
  }
  log('both accepted: B+1.5, Black wins by ¾ stone, on every page');

  const sgf = await carol.locator('[data-testid="sgf"]').getAttribute('href');
  assert(sgf === `/api/games/${gameId}/sgf`, `the SGF link: ${sgf}`);

  // The pictures show the board, not the passing notices.
  for (const p of everyone) await p.evaluate(() => document.getElementById('toasts').replaceChildren());
  const shot = path.join(artifacts, 'final-board.png');
  await carol.screenshot({ path: shot });
  await carol.locator('[data-testid="goban"]').screenshot({ path: path.join(artifacts, 'final-board-only.png') });
  await carol.setViewportSize({ width: 390, height: 844 });
  await carol.waitForTimeout(200);
  await carol.screenshot({ path: path.join(artifacts, 'final-board-phone.png'), fullPage: true });
  await alice.screenshot({ path: path.join(artifacts, 'final-board-black.png') });
  log(`screenshots in ${artifacts}`);

  // The token never travels in a URL (browsers print those in their error logs).
  assert(socketUrls.length >= 4 && socketUrls.every((u) => !/token/i.test(u)), `WebSocket URLs carry no token: ${socketUrls.join(' ')}`);
});
