// A whole tournament in the web client, against a real server:
//
//   TENGEN_REFEREE_TOKEN=<a referee's token for "td"> node tests/browser/tournament.mjs http://127.0.0.1:7480/
//
// Td, a referee logged in with a pasted token, creates a Swiss of two rounds on 9x9 with a
// fast clock through the "Create tournament" form (chief referee: td), and renames it
// from the console (a name too long is refused first). Ann, Ben, Cat and
// Dan (dev login; Dan on a phone) find it under "Tournaments" and register with a rank,
// club and country; Td's page lists them as they come. Eve registers and Td disqualifies
// her with a reason from the console: she is told, and not paired. Td pairs round one: the console
// shows each proposed board's costs; a swap of two players of one board is refused with
// the server's sentence and `bad_request`; a swap across boards moves them; Td publishes
// and each player's page opens its game. On every board White resigns from the game page;
// the standings put the two Black players first, the crosstable shows `+` and `-`, round
// one's secret is revealed. A player appeals and the chief referee rules. Td gives one
// loser the bye for round two; the pairing gives the other the bye too and the winners
// meet; the game ends, and the final standings, stage `finished`, follow: the player who
// won both first, everyone else with one point, a bye shown `0+` in the crosstable.

import { PHONE, WIDE, assert, devLogin, log, openPage, run, shot } from './lib.mjs';

const token = process.env.TENGEN_REFEREE_TOKEN;
const RANKS = { ann: '2d', ben: '1k', cat: '3k', dan: '5k' };

const q = (testid, more = '') => `[data-testid="${testid}"]${more}`;

/** The boards of round `round` as Td's page shows them: [{board, black, white}]. */
const boardsOf = (page, round) => page.$$eval(`${q('t-board')}[data-round="${round}"]`,
  (rows) => rows.map((r) => ({ board: Number(r.dataset.board), black: r.dataset.black, white: r.dataset.white })));

/** The standings' players in order, with their places and scores (half points). */
const standingsOf = (page) => page.$$eval(q('t-standing'),
  (rows) => rows.map((r) => ({ user: r.dataset.user, place: Number(r.dataset.place), score: Number(r.dataset.score) })));

/** Each player's page opens its game of the round just published; White resigns there. */
async function playRound(players, boards) {
  for (const b of boards) {
    for (const who of [b.black, b.white]) {
      await players[who].waitForSelector(`${q('game')}[data-phase="play"]`);
    }
  }
  for (const b of boards) {
    const white = players[b.white];
    await white.click(q('resign'));
    await white.click(q('resign'));
    await white.waitForSelector(`${q('result')}[data-result="B+R"]`);
  }
}

await run('tournament', async () => {
  assert(token, 'TENGEN_REFEREE_TOKEN must hold a referee token for td');
  const td = await openPage('td', { viewport: WIDE });
  await td.click(q('login-open'));
  await td.fill(q('token-input'), token);
  await td.click(q('token-submit'));
  await td.waitForSelector(`${q('whoami')}:text-is("td")`);

  // Td creates the tournament through the form.
  await td.click(q('nav-tournaments'));
  await td.waitForSelector(q('no-tournaments'));
  const form = td.locator(q('tournament-create'));
  await form.locator(q('t-name')).fill('Browser Cup');
  await form.locator(q('t-pairing')).selectOption('swiss');
  assert(await form.locator(q('t-bar')).isHidden(), 'a Swiss has no McMahon bar');
  await form.locator(q('t-rounds')).fill('2');
  await form.locator(q('t-board_size')).selectOption('9');
  await form.locator(q('t-time')).selectOption('absolute');
  await form.locator(q('t-main')).fill('5');
  await form.locator(q('t-tb1')).selectOption('sos');
  await form.locator(q('t-tb2')).selectOption('sodos');
  await form.locator(q('t-tb3')).selectOption('');
  await form.locator(q('t-chief')).fill('td');
  // A rank the server cannot read is refused in its words, and nothing is created.
  await form.locator(q('t-min_rank')).fill('40k');
  await form.locator(q('t-submit')).click();
  await td.waitForSelector(`${q('t-create-refusal')}[data-code="bad_request"]`);
  await form.locator(q('t-min_rank')).fill('');
  await form.locator(q('t-submit')).click();
  await td.waitForSelector(`${q('tournament')}[data-stage="registration"]`);
  const id = await td.locator(q('tournament')).getAttribute('data-tournament-id');
  assert((await td.locator(q('t-regulations')).textContent()).includes('Swiss, 2 rounds'), 'the regulations are shown');
  await td.waitForSelector(q('t-console'));
  // Before round one the console changes the setup: a name too long is refused in the
  // server's words, a new name is kept.
  const configure = td.locator(q('td-configure'));
  await configure.locator('summary').click();
  await configure.locator(q('t-name')).evaluate((input) => { input.removeAttribute('maxlength'); input.value = 'x'.repeat(101); });
  await configure.locator(q('t-submit')).click();
  await td.waitForSelector(`${q('td-refusal')}[data-code="bad_request"]`);
  await configure.locator(q('t-name')).fill('Browser Cup 2026');
  await configure.locator(q('t-submit')).click();
  await td.waitForSelector(`${q('t-title')}:text-is("Browser Cup 2026")`);
  log(`td created tournament ${id}`);

  // Four players find it in the list and register.
  const players = {};
  for (const name of Object.keys(RANKS)) {
    const page = await openPage(name, name === 'dan' ? { viewport: PHONE, touch: true } : {});
    await devLogin(page, name);
    await page.click(q('nav-tournaments'));
    await page.click(`${q('tournament-row')}[data-tournament-id="${id}"] ${q('tournament-link')}`);
    await page.fill(q('t-reg-rank'), RANKS[name]);
    await page.fill(q('t-reg-club'), `${name} club`);
    await page.fill(q('t-reg-country'), 'FR');
    await page.click(q('t-register'));
    await page.waitForSelector(q('t-withdraw'));
    players[name] = page;
  }
  // Eve registers too, and the director disqualifies her with a reason: she is not paired.
  const eve = await openPage('eve');
  await devLogin(eve, 'eve');
  await eve.evaluate((t) => { location.hash = `#/tournament/${t}`; }, id);
  await eve.fill(q('t-reg-rank'), '10k');
  await eve.click(q('t-register'));
  await eve.waitForSelector(q('t-withdraw'));
  await td.waitForSelector(`${q('t-player')}[data-user="eve"][data-status="playing"]`);
  await td.selectOption(q('td-remove-player'), 'eve');
  await td.fill(q('td-reason'), 'did not come to the draw');
  await td.click(q('td-disqualify'));
  await td.waitForSelector(`${q('t-player')}[data-user="eve"][data-status="disqualified"]`);
  await eve.waitForSelector(q('t-your-status'));
  assert(await eve.locator(q('t-withdraw')).count() === 0, 'a disqualified player cannot withdraw');
  assert(await td.locator(`${q('td-remove-player')} option[value="eve"]`).count() === 0, 'she is no longer offered for removal');
  await eve.context().close();
  await td.waitForFunction((n) => document.querySelectorAll('[data-testid="t-player"][data-status="playing"]').length === n, 4);
  assert(await td.locator(`${q('t-player')}[data-user="cat"] ${q('t-player-rank')}`).textContent() === '3k', 'the player\'s rank is listed');
  // A second registration is refused in the server's words.
  const again = await players.ann.evaluate((t) => window.tengen.conn.request({ type: 'register', tournament_id: t, rank: '2d' }).catch((e) => e.code), id);
  assert(again === 'already_registered', `registering twice is refused: ${again}`);
  await shot(td, 'tournament-registration.png');
  log('four players registered');

  // Round one: pair, look at the costs, a refused swap, a swap, publish.
  await td.click(q('td-pair'));
  await td.waitForSelector(`${q('tournament')}[data-stage="paired"]`);
  await td.waitForFunction(() => [...document.querySelectorAll('[data-testid="td-costs"] [data-cost]')].every((c) => c.textContent !== '…')
    && document.querySelectorAll('[data-testid="td-costs"]').length === 2);
  let boards = await boardsOf(td, 1);
  assert(boards.length === 2, `two boards: ${JSON.stringify(boards)}`);
  await td.selectOption(q('td-swap-a'), boards[0].black);
  await td.selectOption(q('td-swap-b'), boards[0].white);
  await td.click(q('td-swap'));
  await td.waitForSelector(`${q('td-refusal')}[data-code="bad_request"]`);
  assert((await td.locator(q('td-refusal')).textContent()).length > 10, 'the refusal says why in words');
  const [a, b] = [boards[0].black, boards[1].black];
  await td.selectOption(q('td-swap-a'), a);
  await td.selectOption(q('td-swap-b'), b);
  await td.click(q('td-swap'));
  await td.waitForSelector(`${q('t-board')}[data-round="1"][data-board="1"][data-black="${b}"]`);
  await td.waitForSelector(`${q('td-costs')}[data-board="1"][data-black="${b}"]`);
  assert(await td.locator(q('td-refusal')).isHidden(), 'the refusal is cleared by the next action');
  await td.waitForFunction(() => [...document.querySelectorAll('[data-testid="td-costs"] [data-cost]')].every((c) => c.textContent !== '…'));
  boards = await boardsOf(td, 1);
  await shot(td, 'tournament-console.png');
  // Before publication a player sees the proposal as not final.
  assert((await players.dan.locator(q('t-next')).textContent()).includes('proposed'), 'dan sees the proposal as not final');
  await shot(players.dan, 'tournament-phone-proposed.png', { fullPage: true });
  await td.click(q('td-publish'));
  await td.waitForSelector(`${q('tournament')}[data-stage="playing"]`);
  await td.waitForSelector(`${q('t-draw')}[data-round="1"][data-revealed="true"]`);
  assert(await td.locator(`${q('t-draw')}[data-round="2"][data-revealed="false"]`).count() === 1, 'round two\'s secret stays hidden');
  log(`round one published: ${JSON.stringify(boards)}`);

  await playRound(players, boards);
  await td.waitForSelector(`${q('tournament')}[data-stage="ready"]`);
  for (const b of boards) await td.waitForSelector(`${q('t-board')}[data-round="1"][data-board="${b.board}"][data-outcome="black"]`);
  let standings = await standingsOf(td);
  const winners = boards.map((x) => x.black).sort();
  assert(JSON.stringify(standings.slice(0, 2).map((s) => s.user).sort()) === JSON.stringify(winners), `the winners lead: ${JSON.stringify(standings)}`);
  assert(standings.slice(0, 2).every((s) => s.score === 2) && standings.slice(2).every((s) => s.score === 0), `scores: ${JSON.stringify(standings)}`);
  const cell = (user, round) => td.locator(`${q('t-cross')}[data-user="${user}"] .t-cell[data-round="${round}"]`).textContent();
  assert(/^\d\+\/b0$/.test(await cell(boards[0].black, 1)), `the crosstable shows the win: ${await cell(boards[0].black, 1)}`);
  assert(/^\d-\/w0$/.test(await cell(boards[0].white, 1)), `and the loss: ${await cell(boards[0].white, 1)}`);
  log(`round one played: ${JSON.stringify(standings)}`);

  // An appeal, and the chief referee's ruling.
  const ann = players.ann;
  await ann.evaluate((t) => { location.hash = `#/tournament/${t}`; }, id);
  await ann.fill(q('t-appeal-input'), 'my opponent\'s clock was not started');
  await ann.click(q('t-appeal-send'));
  await td.waitForSelector(`${q('t-appeal')}[data-appeal="1"][data-ruled="false"]`);
  await td.fill(q('t-rule-input'), 'the clock was started on time; the game stands');
  await td.click(q('t-rule-send'));
  await ann.waitForSelector(`${q('t-appeal')}[data-appeal="1"][data-ruled="true"]`);
  log('an appeal filed and ruled');

  // Round two: Td gives one loser the bye; three are left, so the pairing gives the other
  // loser a bye too, and the two winners meet.
  const losers = boards.map((x) => x.white);
  await td.selectOption(q('td-bye-player'), losers[0]);
  await td.click(q('td-bye'));
  await td.waitForSelector(`${q('toast-ok')}:has-text("bye")`);
  await td.click(q('td-pair'));
  await td.waitForSelector(`${q('tournament')}[data-stage="paired"]`);
  await td.waitForFunction(() => document.querySelectorAll('[data-testid="td-costs"]').length === 1
    && [...document.querySelectorAll('[data-testid="td-costs"] [data-cost]')].every((c) => c.textContent !== '…'));
  const second = await boardsOf(td, 2);
  assert(second.length === 1 && JSON.stringify([second[0].black, second[0].white].sort()) === JSON.stringify(winners),
    `the winners meet: ${JSON.stringify(second)}`);
  const byes = await td.locator(`${q('t-round')}[data-round="2"] ${q('t-byes')}`).textContent();
  assert(losers.every((l) => byes.includes(l)), `both losers have the bye: ${byes}`);
  const annNext = await ann.locator(q('t-next')).textContent();
  assert(annNext.includes(winners.includes('ann') ? 'Round 2 is proposed' : 'You have the bye in round 2'), `ann is told her round two: ${annNext}`);
  await td.click(q('td-publish'));
  await td.waitForSelector(`${q('tournament')}[data-stage="playing"]`);
  await playRound(players, second);
  await td.waitForSelector(`${q('tournament')}[data-stage="finished"]`);
  standings = (await standingsOf(td)).filter((s) => s.user !== 'eve');
  assert(standings[0].user === second[0].black && standings[0].score === 4, `the player who won both is first: ${JSON.stringify(standings)}`);
  assert(standings.slice(1).every((s) => s.score === 2), `the others have a point each, two of them from a bye: ${JSON.stringify(standings)}`);
  for (const l of losers) assert(await cell(l, 2) === '0+', `a bye is 0+ in the crosstable: ${await cell(l, 2)}`);
  log(`final standings: ${JSON.stringify(standings)}`);

  // Dan's phone: the finished tournament, no wider than the screen, the header compact.
  const dan = players.dan;
  await dan.evaluate((t) => { location.hash = `#/tournament/${t}`; }, id);
  await dan.waitForSelector(`${q('tournament')}[data-stage="finished"]`);
  await dan.waitForFunction(() => document.querySelectorAll('[data-testid="t-cross"] .t-cell').length === 10);
  const fit = await dan.evaluate(() => {
    const link = document.querySelector('[data-testid="nav-tournaments"]').getBoundingClientRect();
    const wide = [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1)
      .slice(0, 3).map((e) => `${e.tagName}.${e.className}`);
    return { scroll: document.documentElement.scrollWidth, width: innerWidth, link: link.left >= 0 && link.right <= innerWidth, header: document.querySelector('.masthead').getBoundingClientRect().height, wide };
  });
  assert(fit.scroll <= PHONE.width && fit.link, `the phone's page fits its screen and shows the link: ${JSON.stringify(fit)}`);
  assert(fit.header < 100, `the phone's header stays compact: ${JSON.stringify(fit)}`);
  // The bell's list, wherever the bell sits on the phone's header, is on the screen.
  await dan.click(q('notice-bell'));
  const panel = await dan.locator(q('notice-panel')).boundingBox();
  assert(panel && panel.x >= 0 && panel.x + panel.width <= PHONE.width, `the notices are on the screen: ${JSON.stringify(panel)}`);
  await dan.click(q('notice-bell'));
  await shot(dan, 'tournament-phone.png', { fullPage: true });
  assert(await td.locator(q('td-pair')).isHidden(), 'a finished tournament offers no pairing');
  await td.evaluate(() => window.scrollTo(0, 0));
  await shot(td, 'tournament-wide.png', { fullPage: true });
  await td.click(q('nav-tournaments'));
  await td.waitForSelector(`${q('tournament-row')}[data-tournament-id="${id}"][data-stage="finished"]`);
  await shot(td, 'tournament-list.png');
  log('the tournament is over');
});
