// Correspondence Go in the web client, in Debian's headless Chromium, against a real
// server:
//
//   node tests/browser/correspondence.mjs http://127.0.0.1:7482/
//
// Alice challenges Bob to a correspondence game through the lobby's form (the switch
// turns the clock into days: three days a move), Bob accepts. Alice's dashboard shows
// the game under "Your move" with the days left, Bob's (on a phone) under "Their move".
// Alice plays, then stores a plan of two levels and two branches in the planner (a third
// branch entered and deleted); the page opened again shows the stored tree, and her
// dashboard says a plan is stored. Bob plays the planned move: Alice's reply is on both
// boards at once, marked as planned. A plan with a move the rules refuse (a ko
// recapture) is refused in the server's words, and nothing is stored: the refused tree
// stays a draft across a reload until Alice discards it. On his own turn Bob plans after
// his move, which storing plays; Alice's answer gets his planned reply. Alice's next plan
// has a branch added and not stored: the draft outlives a lost connection and a reload,
// marked as a draft, and storing it makes it the server's plan; a later draft is dropped,
// with a notice, when Bob plays off the plan (the server drops the plan).

import { PHONE, assert, devLogin, expectAttr, game, log, openPage, run, shot } from './lib.mjs';

const DAY = 86_400_000;

await run('correspondence', async () => {
  const alice = await openPage('alice');
  const bob = await openPage('bob', { viewport: PHONE });
  await devLogin(alice, 'alice');
  await devLogin(bob, 'bob');

  log('alice challenges bob to a correspondence game, three days a move');
  await alice.selectOption('[data-testid="seek-size"]', '9');
  await alice.selectOption('[data-testid="seek-color"]', 'black');
  const options = alice.locator('[data-testid="seek-corr-options"]');
  assert(!(await options.isVisible()), 'the correspondence options are hidden for a live game');
  await alice.check('[data-testid="seek-correspondence"]');
  await options.waitFor();
  assert(await alice.isChecked('[data-testid="seek-vacation"]'), 'vacation is allowed unless unticked');
  assert(await alice.locator('[data-testid="seek-time"] option[value="none"]').isDisabled(), 'no untimed correspondence game');
  await alice.selectOption('[data-testid="seek-time"]', 'simple');
  const perMove = alice.locator('label', { has: alice.locator('[data-testid="seek-per_move"]') });
  assert((await perMove.textContent()).includes('Per move (days)'), `the clock in days: ${await perMove.textContent()}`);
  assert(await alice.inputValue('[data-testid="seek-per_move"]') === '3', 'three days a move to start with');
  await alice.fill('[data-testid="seek-opponent"]', 'bob');
  await alice.click('[data-testid="seek-submit"]');
  const challenge = bob.locator('[data-testid="seek-row"][data-from="alice"]');
  await challenge.waitFor();
  const settings = await challenge.locator('[data-testid="seek-settings"]').textContent();
  assert(settings.includes('correspondence'), `the challenge is a correspondence game: ${settings}`);
  const time = await challenge.locator('[data-testid="seek-time"]').textContent();
  assert(time.includes('3 d per move'), `three days a move, sent in ms: ${time}`);
  await challenge.locator('[data-testid="accept"]').click();
  for (const p of [alice, bob]) await game(p).and(p.locator('[data-phase="play"]')).waitFor();
  const gameId = /#\/game\/(.+)$/.exec(alice.url())[1];

  log('the dashboards: alice to move, bob waiting');
  await alice.click('[data-testid="nav-correspondence"]');
  const mine = alice.locator(`[data-testid="corr-mine"] [data-testid="corr-row"][data-game-id="${gameId}"]`);
  await mine.waitFor();
  assert(await alice.locator('[data-testid="corr-theirs"] [data-testid="corr-row"]').count() === 0, 'nothing under their move');
  const left = await mine.locator('[data-testid="corr-left"]').textContent();
  assert(/^2 d 23 h left$|^3 d 0 h left$/.test(left), `three days left, in days and hours: ${left}`);
  const deadline = Number(await mine.locator('[data-testid="corr-left"]').getAttribute('data-deadline'));
  assert(deadline - Date.now() > 3 * DAY - 10 * 60_000 && deadline - Date.now() <= 3 * DAY, `the deadline three days away: ${deadline}`);
  assert((await mine.textContent()).includes('vs bob'), 'the opponent is named');
  await bob.goto(new URL('#/correspondence', bob.url()).href);
  const waiting = bob.locator(`[data-testid="corr-theirs"] [data-testid="corr-row"][data-game-id="${gameId}"]`);
  await waiting.waitFor();
  assert(/^they have (2 d 23 h|3 d 0 h)$/.test(await waiting.locator('[data-testid="corr-left"]').textContent()), 'bob sees alice\'s time');
  const box = await waiting.boundingBox();
  assert(box.x >= 0 && box.x + box.width <= PHONE.width, `the row fits a phone: ${JSON.stringify(box)}`);
  await shot(bob, 'correspondence-dashboard-phone.png', { fullPage: true });

  log('alice plays E5, then plans');
  await mine.locator('[data-testid="corr-open"]').click();
  await game(alice).and(alice.locator('[data-phase="play"]')).waitFor();
  await waiting.locator('[data-testid="corr-open"]').click();
  await game(bob).and(bob.locator('[data-phase="play"]')).waitFor();
  await alice.click('[data-testid="goban"] [data-vertex="E5"]');
  for (const p of [alice, bob]) await expectAttr(p, '[data-testid="game"]', 'data-moves', '1');
  await alice.click('[data-testid="plan-open"]');
  await alice.locator('[data-testid="planner"]').waitFor();
  await expectAttr(alice, '[data-testid="analysis"]', 'data-moves', '1');
  const at = (v) => alice.click(`[data-testid="goban"] [data-vertex="${v}"]`);
  for (const v of ['C3', 'G7', 'G3', 'C7']) await at(v);
  await alice.click('[data-testid="plan-root"]');
  for (const v of ['D6', 'F4']) await at(v);
  await alice.click('[data-testid="plan-root"]');
  for (const v of ['H8', 'J9']) await at(v);
  const branch = (ifv, play) => alice.locator(`[data-testid="plan-branch"][data-if="${ifv}"][data-play="${play}"]`);
  await branch('H8', 'J9').waitFor();
  await alice.click('[data-testid="plan-delete"]');
  await branch('H8', 'J9').waitFor({ state: 'detached' });
  await alice.click('[data-testid="plan-store"]');
  await alice.locator('[data-testid="plan-state"]', { hasText: 'Your stored plan.' }).waitFor();
  await alice.reload();
  await alice.locator('[data-testid="plan-state"]', { hasText: 'Your stored plan.' }).waitFor();
  for (const [i, p] of [['C3', 'G7'], ['G3', 'C7'], ['D6', 'F4']]) await branch(i, p).waitFor();
  assert(await branch('G3', 'C7').locator('xpath=ancestor::li[@data-if="C3"]').count() === 1, 'G3 → C7 is the second level under C3');
  assert(await alice.locator('[data-testid="plan-branch"]').count() === 3, 'three branches in all, H8 deleted');
  await shot(alice, 'correspondence-planner.png');

  await alice.click('[data-testid="nav-correspondence"]');
  await alice.locator(`[data-testid="corr-theirs"] [data-testid="corr-row"][data-game-id="${gameId}"] [data-testid="corr-planned"]`).waitFor();

  log('bob plays into the plan: the reply comes at once, marked');
  await alice.goto(new URL(`#/game/${gameId}`, alice.url()).href);
  await game(alice).and(alice.locator('[data-phase="play"]')).waitFor();
  await bob.click('[data-testid="goban"] [data-vertex="C3"]');
  for (const p of [alice, bob]) {
    await expectAttr(p, '[data-testid="game"]', 'data-moves', '3');
    await p.locator('[data-stone="G7"][data-color="black"]').waitFor();
    await p.locator('[data-testid="move"][data-move="3"] [data-testid="move-planned"]').waitFor();
    assert(await p.locator('[data-testid="move-planned"]').count() === 1, 'only the planned move is marked');
  }
  await shot(bob, 'correspondence-planned-move.png');

  log('a plan with a ko recapture is refused');
  await alice.click('[data-testid="plan-open"]');
  await alice.locator('[data-testid="plan-state"]', { hasText: 'Your stored plan.' }).waitFor();
  await branch('G3', 'C7').waitFor();
  await alice.click('[data-testid="plan-root"]');
  // White C8, D7, C6 and B7 around Black B8, A7, B6; Black takes at C7, White takes back at once.
  for (const v of ['C8', 'B8', 'D7', 'A7', 'C6', 'B6', 'B7', 'C7', 'B7', 'J1']) await at(v);
  await alice.click('[data-testid="plan-store"]');
  await expectAttr(alice, '[data-testid="plan-error"]', 'data-code', 'illegal_move');
  const why = await alice.textContent('[data-testid="plan-error"]');
  assert(why.startsWith('Not stored: in the plan at move'), `the server's words: ${why}`);
  await expectAttr(alice, '[data-testid="plan-state"]', 'data-draft', 'true');
  await alice.reload();
  await alice.locator('[data-testid="plan-state"]', { hasText: 'Draft, not stored: it differs from your stored plan.' }).waitFor();
  await branch('C8', 'B8').waitFor();
  await alice.click('[data-testid="plan-discard"]');
  await alice.locator('[data-testid="plan-state"]', { hasText: 'Your stored plan.' }).waitFor();
  await branch('G3', 'C7').waitFor();
  assert(await alice.locator('[data-testid="plan-branch"]').count() === 1, 'the refused plan changed nothing');

  log('on his own turn bob plans after his move, which storing plays');
  await bob.click('[data-testid="plan-open"]');
  await bob.locator('[data-testid="planner"]', { hasText: 'It is your move' }).waitFor();
  for (const v of ['D4', 'E4', 'F5']) await bob.click(`[data-testid="goban"] [data-vertex="${v}"]`);
  await bob.click('[data-testid="plan-store"]');
  await bob.locator('[data-testid="plan-state"]', { hasText: 'Your stored plan.' }).waitFor();
  await alice.goto(new URL(`#/game/${gameId}`, alice.url()).href);
  await alice.locator('[data-stone="D4"][data-color="white"]').waitFor();
  await alice.click('[data-testid="goban"] [data-vertex="E4"]');
  await expectAttr(alice, '[data-testid="game"]', 'data-moves', '6');
  await alice.locator('[data-stone="F5"][data-color="white"]').waitFor();
  await alice.locator('[data-testid="move"][data-move="6"] [data-testid="move-planned"]').waitFor();

  log('a draft outlives a lost connection and a reload, and storing makes it the plan');
  await alice.click('[data-testid="goban"] [data-vertex="H2"]');
  await expectAttr(alice, '[data-testid="game"]', 'data-moves', '7');
  await alice.click('[data-testid="plan-open"]');
  await alice.locator('[data-testid="plan-state"]', { hasText: 'No plan stored.' }).waitFor();
  for (const v of ['H8', 'H7']) await at(v);
  await alice.click('[data-testid="plan-store"]');
  await alice.locator('[data-testid="plan-state"]', { hasText: 'Your stored plan.' }).waitFor();
  await alice.click('[data-testid="plan-root"]');
  for (const v of ['B8', 'C8']) await at(v);
  const state = alice.locator('[data-testid="plan-state"]');
  await alice.locator('[data-testid="plan-state"][data-draft="true"]').waitFor();
  assert(await state.textContent() === 'Draft, not stored: it differs from your stored plan.', `marked a draft: ${await state.textContent()}`);
  await expectAttr(alice, '[data-testid="analysis"]', 'data-moves', '9');
  const welcomes = await alice.evaluate(() => window.tengen.conn.welcomes);
  await alice.evaluate(() => window.tengen.conn.socket.close());
  // The fresh snapshot puts the board back at the game's position, with the draft on it.
  await alice.waitForFunction((w) => window.tengen.conn.welcomes > w, welcomes);
  await expectAttr(alice, '[data-testid="analysis"]', 'data-moves', '7');
  await branch('B8', 'C8').waitFor();
  await branch('H8', 'H7').waitFor();
  await expectAttr(alice, '[data-testid="plan-state"]', 'data-draft', 'true');
  await alice.reload();
  await alice.locator('[data-testid="plan-state"][data-draft="true"]').waitFor();
  await branch('B8', 'C8').waitFor();
  await alice.click('[data-testid="plan-store"]');
  await alice.locator('[data-testid="plan-state"][data-draft="false"]', { hasText: 'Your stored plan.' }).waitFor();
  const kept = () => alice.evaluate((id) => Object.keys(JSON.parse(localStorage.getItem('tengen.planDrafts') || '{}')).filter((k) => k.endsWith(`/${id}`)), gameId);
  assert((await kept()).length === 0, 'a stored draft is no longer kept');
  await alice.reload();
  await alice.locator('[data-testid="plan-state"]', { hasText: 'Your stored plan.' }).waitFor();
  for (const [i, p] of [['H8', 'H7'], ['B8', 'C8']]) await branch(i, p).waitFor();
  assert(await alice.locator('[data-testid="plan-branch"]').count() === 2, 'the server\'s plan is the draft stored');

  log('bob plays off the plan: the draft made over it is dropped, and alice is told');
  await alice.click('[data-testid="plan-root"]');
  for (const v of ['D2', 'E2']) await at(v);
  await expectAttr(alice, '[data-testid="plan-state"]', 'data-draft', 'true');
  assert((await kept()).length === 1, 'the draft is kept in the browser');
  await bob.goto(new URL(`#/game/${gameId}`, bob.url()).href);
  await game(bob).and(bob.locator('[data-phase="play"]')).waitFor();
  await bob.click('[data-testid="goban"] [data-vertex="J1"]');
  await expectAttr(alice, '[data-testid="analysis"]', 'data-moves', '8');
  const notice = await alice.locator('[data-testid="plan-notice"]').textContent();
  assert(notice === 'Your unsaved changes to the plan were dropped: it was made at move 7 and the game has moved on to move 8.', `the notice: ${notice}`);
  await alice.locator('[data-testid="plan-state"][data-draft="false"]', { hasText: 'No plan stored.' }).waitFor();
  assert(await alice.locator('[data-testid="plan-branch"]').count() === 0, 'no branch of the stale draft');
  assert((await kept()).length === 0, 'the stale draft is no longer kept');
  await shot(alice, 'correspondence-draft-dropped.png');
});
