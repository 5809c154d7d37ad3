// A game under the ancient Chinese rules (docs/RULES.md §9.1) in the web client, in
// Debian's headless Chromium, against a real server.
//
//   node tests/browser/ancient.mjs http://127.0.0.1:7482/
//
// Alice posts a 9x9 seek under the historical rules (the form explains them in one
// line) and takes Black; Bob accepts. Both boards start with the four set stones (座子)
// on the corner star points, Black on C3 and G7, White on C7 and G3, and White moves
// first. White adds a new group of two stones (E5, E4) while Black passes; after two
// passes the count shows the group tax (还棋头): Black gives back 2 points for its 2
// groups, White 3 for its 3, so White's 2-point lead in area is a 1-point win. The
// result and the game record (SGF) say the same.

import path from 'node:path';
import { artifacts, assert, devLogin, expectAttr, game, log, openPage, run } from './lib.mjs';

await run('ancient', async () => {
  const alice = await openPage('alice');
  const bob = await openPage('bob');
  const both = [alice, bob];
  await devLogin(alice, 'alice');
  await devLogin(bob, 'bob');

  const note = alice.locator('[data-testid="seek-ancient-note"]');
  assert(!(await note.isVisible()), 'the note on the historical rules is hidden under the modern ones');
  await alice.selectOption('[data-testid="seek-size"]', '9');
  await alice.selectOption('[data-testid="seek-ruleset"]', 'ancient-chinese');
  await note.waitFor();
  assert((await note.textContent()).includes('White moves first'), `the note explains the rules: ${await note.textContent()}`);
  await alice.selectOption('[data-testid="seek-color"]', 'black');
  await alice.click('[data-testid="seek-submit"]');
  const seek = bob.locator('[data-testid="seek-row"][data-from="alice"]');
  await seek.waitFor();
  await seek.locator('[data-testid="accept"]').click();
  for (const p of both) await game(p).and(p.locator('[data-phase="play"]')).waitFor();
  log('alice posted an ancient-rules seek and bob accepted it');

  for (const p of both) {
    for (const [vertex, colour] of [['C3', 'black'], ['G7', 'black'], ['C7', 'white'], ['G3', 'white']]) {
      await p.locator(`[data-testid="goban"] [data-stone="${vertex}"][data-color="${colour}"]`).waitFor();
    }
    await expectAttr(p, '[data-testid="game"]', 'data-moves', '0');
  }
  await bob.locator('[data-testid="status"]', { hasText: 'Your move' }).waitFor();
  await alice.locator('[data-testid="status"]', { hasText: 'White to move' }).waitFor();
  log('both boards start from the set stones, and White is to move');

  let moveNumber = 0;
  async function play(page, vertex) {
    moveNumber += 1;
    if (vertex === 'pass') {
      await page.click('[data-testid="pass"]');
      // A pass that would end play asks for a second click.
      if (await page.locator('[data-testid="pass"][data-armed="yes"]').count()) await page.click('[data-testid="pass"]');
    } else await page.click(`[data-testid="goban"] [data-vertex="${vertex}"]`);
    for (const p of both) await expectAttr(p, '[data-testid="game"]', 'data-moves', String(moveNumber));
  }
  await play(bob, 'E5');
  await play(alice, 'pass');
  await play(bob, 'E4');
  await play(alice, 'pass');
  await play(bob, 'pass');
  for (const p of both) await expectAttr(p, '[data-testid="game"]', 'data-phase', 'scoring');

  // Area: Black 2 stones + half of 75 shared points = 39.5, White 4 + 37.5 = 41.5. Less
  // the tax: 37.5 against 38.5.
  for (const p of both) {
    await expectAttr(p, '[data-testid="count"]', 'data-estimate', 'W+1');
    const tax = await p.locator('[data-testid="count"] [data-testid="group-tax"]').textContent();
    assert(tax.includes('Black 2 groups (−2)') && tax.includes('White 3 groups (−3)'), `the count shows the tax: ${tax}`);
  }
  log('the count during scoring shows the group tax and W+1');
  await alice.screenshot({ path: path.join(artifacts, 'ancient-count.png') });

  await bob.click('[data-testid="accept-score"]');
  await alice.locator('[data-testid="accepted"]', { hasText: 'bob accepted' }).waitFor();
  await alice.click('[data-testid="accept-score"]');
  for (const p of both) {
    await expectAttr(p, '[data-testid="game"]', 'data-phase', 'ended');
    await expectAttr(p, '[data-testid="result"]', 'data-result', 'W+1');
    const tax = await p.locator('[data-testid="result"] [data-testid="group-tax"]').textContent();
    assert(tax.includes('Black 2 groups (−2)') && tax.includes('White 3 groups (−3)'), `the result shows the tax: ${tax}`);
    const text = await p.locator('[data-testid="result"]').textContent();
    assert(text.includes('Black 37.5') && text.includes('White 38.5'), `the counts after the tax: ${text}`);
  }
  log('both accepted: W+1 after the tax');

  const gameId = await game(alice).getAttribute('data-game-id');
  const sgf = await alice.evaluate(async (id) => (await fetch(`/api/games/${id}/sgf`)).text(), gameId);
  for (const part of ['RU[Ancient Chinese]', 'AB[cg][gc]', 'AW[cc][gg]', 'PL[W]', 'KM[0]', 'RE[W+1]']) {
    assert(sgf.includes(part), `the record has ${part}: ${sgf}`);
  }
  log('the SGF record has the set stones, White first, the rules and the result');

  // The analysis board opened from the game keeps every set stone, White's included,
  // and White's first move.
  await alice.click('[data-testid="analyze"]');
  const analysis = alice.locator('[data-testid="analysis"]');
  await expectAttr(alice, '[data-testid="analysis"]', 'data-moves', '5');
  for (const [vertex, colour] of [['C3', 'black'], ['G7', 'black'], ['C7', 'white'], ['G3', 'white'], ['E5', 'white']]) {
    await analysis.locator(`[data-testid="goban"] [data-stone="${vertex}"][data-color="${colour}"]`).waitFor();
  }
  const link = new URL(alice.url());
  assert(link.hash.includes('white=ccgg') && link.hash.includes('setup=gccg'), `the link carries both colours' set stones: ${link.hash}`);
  log('the analysis board keeps both colours of set stones');
});
