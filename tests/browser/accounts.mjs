// Accounts, automatch and ratings in the browser, against a server with registration open
// and the dev login off (tests/web_accounts.rs starts it): Anna (laptop) and Ben (phone)
// sign up, are paired by automatch in a rated 9x9 blitz game, Ben resigns, and both
// profiles (and the leaderboard) show the new ratings. Then a guest plays in one click
// and renews its access token on a fake clock, and Anna logs out for good.

import { artifacts, assert, base, expectAttr, expectFocus, log, openPage, PHONE, problems, run, shot } from './lib.mjs';

const PASSWORD = 'tsumego every day';

/** The browser logs each refused fetch; the refusals this scenario asks for are expected. */
function expectRefusal(status) {
  const i = problems.findIndex((p) => p.includes(`status of ${status}`));
  assert(i >= 0, `the browser logged the refused request (${status})`);
  problems.splice(i, 1);
}

async function openAccounts(page) {
  await page.click('[data-testid="login-open"]');
  await page.waitForSelector('[data-testid="account-forms"]:not([hidden])');
  assert(await page.locator('#dev-login').isHidden(), 'no dev login when the server has it off');
  // The cursor is in the username of the form shown (log in, or sign up if chosen before).
  const shown = (await page.locator('[data-testid="tab-login"]').getAttribute('aria-selected')) === 'true' ? 'login' : 'signup';
  await expectFocus(page, `${shown}-username`, 'the login dialog puts the cursor in the username');
}

async function signUp(page, username) {
  await openAccounts(page);
  await page.click('[data-testid="tab-signup"]');
  await expectFocus(page, 'signup-username', 'the sign-up tab puts the cursor in its username');
  await page.fill('[data-testid="signup-username"]', username);
  await page.fill('[data-testid="signup-password"]', PASSWORD);
  await page.click('[data-testid="signup-submit"]');
  await page.waitForSelector(`[data-testid="whoami"]:text-is("${username}")`);
}

/** The profile `id` as the server has it, once its rated game has been applied. */
async function ratedProfile(id) {
  for (let tries = 0; tries < 100; tries++) {
    const res = await fetch(new URL(`api/users/${id}`, base));
    if (res.ok) {
      const profile = await res.json();
      if (profile.ratings[0].games === 1) return profile;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${id}'s rated game was never applied`);
}

await run('accounts', async () => {
  const anna = await openPage('anna');
  const ben = await openPage('ben', { viewport: PHONE });

  // A refused sign-up says why, with its code, and logs nobody in.
  await openAccounts(anna);
  await shot(anna, 'account-login.png');
  await anna.click('[data-testid="tab-signup"]');
  await anna.fill('[data-testid="signup-username"]', 'admin');
  await anna.fill('[data-testid="signup-password"]', PASSWORD);
  await anna.click('[data-testid="signup-submit"]');
  await expectAttr(anna, '[data-testid="account-error"]', 'data-code', 'username_reserved');
  expectRefusal(400);
  assert(await anna.locator('[data-testid="whoami"]').count() === 0, 'a refused sign-up logs nobody in');
  await anna.click('#login-cancel');

  await signUp(anna, 'anna');
  await signUp(ben, 'ben');
  log('anna and ben signed up');

  // The access token stays in memory: a reload logs in again through the refresh cookie.
  await anna.reload();
  await anna.waitForSelector('[data-testid="whoami"]:text-is("anna")');
  const stored = await anna.evaluate(() => JSON.stringify({ ...localStorage }));
  assert(!stored.includes('eyJ'), `no token in localStorage: ${stored}`);
  log('a reload keeps anna logged in');

  // Two tabs share the cookie: renewing at the same moment, their refreshes must take
  // turns (the same cookie sent twice would end the session in both).
  const annaTab = await anna.context().newPage();
  await annaTab.goto(base);
  await annaTab.waitForSelector('[data-testid="whoami"]:text-is("anna")');
  const renewals = await Promise.all([anna, annaTab].map((p) => p.evaluate(() => window.tengen.app.session.renew())));
  assert(renewals.every((ok) => ok === true), `both tabs renewed their tokens: ${renewals}`);
  await annaTab.close();
  log('two tabs renewed at once and stay logged in');

  // Automatch: Anna waits, Ben's request pairs them, both pages open the game.
  for (const p of [anna, ben]) {
    assert(await p.locator('[data-testid="automatch-size-9"]').isChecked(), '9x9 is the default size');
    assert(await p.locator('[data-testid="automatch-speed-blitz"]').isChecked(), 'blitz is the default speed');
    assert(await p.locator('[data-testid="automatch-rated"]').isChecked(), 'an account asks for rated games');
  }
  await anna.click('[data-testid="automatch-start"]');
  await anna.waitForSelector('[data-testid="automatch-waiting"]');
  await shot(anna, 'automatch-waiting.png');
  // The server drops a request when its author's last connection closes: back online,
  // the page asks again and keeps waiting.
  const welcomes = await anna.evaluate(() => window.tengen.conn.welcomes);
  await anna.evaluate(() => window.tengen.conn.socket.close());
  await anna.waitForFunction((n) => window.tengen.conn.welcomes > n && window.tengen.conn.ready, welcomes);
  await anna.waitForSelector('[data-testid="automatch-waiting"]');
  await shot(ben, 'automatch-phone.png');
  await ben.click('[data-testid="automatch-start"]');
  for (const p of [anna, ben]) await p.waitForSelector('[data-testid="game"]');
  const gameId = new URL(anna.url()).hash.replace('#/game/', '');
  assert(new URL(ben.url()).hash === `#/game/${gameId}`, 'both pages open the same game');
  log(`automatch paired them in ${gameId}`);

  await ben.click('[data-testid="resign"]');
  await ben.click('[data-testid="resign"]');
  for (const p of [anna, ben]) {
    const result = await p.waitForSelector('[data-testid="result"][data-result$="+R"]');
    assert(['B+R', 'W+R'].includes(await result.getAttribute('data-result')), 'ben resigned');
  }
  const [annaAfter, benAfter] = [await ratedProfile('anna'), await ratedProfile('ben')];
  assert(annaAfter.ratings[0].rating > 1500 && benAfter.ratings[0].rating < 1500, 'the winner gains, the loser loses');
  log('the rated game was applied');

  // Both profiles show the new ratings, in the overall and the 9x9 pools, and the plot.
  for (const [p, id, profile] of [[anna, 'anna', annaAfter], [ben, 'ben', benAfter]]) {
    await p.click('[data-testid="nav-profile"]');
    await p.waitForSelector(`[data-testid="profile"][data-user="${id}"] [data-testid="pool-row"]`);
    for (const pool of ['overall', '9x9']) {
      const row = p.locator(`[data-testid="pool-row"][data-pool="${pool}"]`);
      assert(await row.getAttribute('data-games') === '1', `${id}: one game in ${pool}`);
      const shown = Number(await row.getAttribute('data-rating'));
      assert(Math.abs(shown - profile.ratings[0].rating) < 0.1 && shown !== 1500, `${id}'s ${pool} rating on the page: ${shown}`);
      assert((await row.textContent()).includes(String(Math.round(profile.ratings[0].rating))), `${id}'s rating in words`);
    }
    const dots = p.locator('[data-testid="plot-point"]');
    assert(await dots.count() === 2, `${id}'s plot: the start and one game`);
    assert(await dots.nth(0).getAttribute('data-rating') === '1500.0', 'the plot starts at 1500');
    assert(Number(await dots.nth(1).getAttribute('data-rating')) === Number(profile.ratings[0].rating.toFixed(1)), 'the plot ends at the new rating');
  }
  await shot(anna, 'profile-wide.png');
  await shot(ben, 'profile-phone.png');
  log('both profiles show the new ratings');

  await anna.click('[data-testid="nav-leaderboard"]');
  await anna.waitForSelector('[data-testid="leader-row"]');
  const order = await anna.locator('[data-testid="leader-row"]').evaluateAll((rows) => rows.map((r) => r.dataset.user));
  assert(order.join(',') === 'anna,ben', `the leaderboard: ${order}`);
  await anna.selectOption('[data-testid="leaderboard-pool"]', '13x13');
  await anna.waitForSelector('[data-testid="leaderboard-list"] p');
  assert(await anna.locator('[data-testid="leader-row"]').count() === 0, 'nobody in the 13x13 pool');
  await anna.selectOption('[data-testid="leaderboard-pool"]', '9x9');
  await anna.waitForSelector('[data-testid="leader-row"][data-user="anna"]');
  await shot(anna, 'leaderboard.png');
  log('the leaderboard lists anna above ben');

  // The lobby shows each rated player's rank beside their name, as the profile has it
  // (provisional after one game, so with its `?`): on Anna's seek, on Ben's phone and her
  // own page; then on the game they start, in the games list a newcomer sees.
  const rankOf = (profile) => profile.ratings[0].rank;
  assert(rankOf(annaAfter).endsWith('?') && rankOf(annaAfter) !== rankOf(benAfter), `ranks: ${rankOf(annaAfter)} ${rankOf(benAfter)}`);
  for (const p of [anna, ben]) await p.goto(new URL('#/', base).href);
  await anna.waitForSelector('[data-testid="create-form"]');
  // A rated seek says so in the lobby, and its game says so on its page.
  assert(!(await anna.locator('[data-testid="seek-rated"]').isChecked()), 'a seek is unrated unless asked');
  await anna.check('[data-testid="seek-rated"]');
  await anna.click('[data-testid="seek-submit"]');
  for (const p of [anna, ben]) {
    await expectAttr(p, '[data-testid="seek-row"][data-from="anna"] [data-testid="rank"]', 'data-rank', rankOf(annaAfter));
    const who = await p.locator('[data-testid="seek-row"][data-from="anna"] [data-testid="seek-who"]').textContent();
    assert(who === `anna [${rankOf(annaAfter)}]`, `the rank beside the name: ${who}`);
    const settings = await p.locator('[data-testid="seek-row"][data-from="anna"] [data-testid="seek-settings"]').textContent();
    assert(settings.split(' · ').includes('rated'), `the seek says it is rated: ${settings}`);
  }
  await ben.click('[data-testid="seek-row"][data-from="anna"] [data-testid="accept"]');
  for (const p of [anna, ben]) await p.waitForSelector('[data-testid="game"]');
  for (const p of [anna, ben]) {
    const settings = await p.locator('[data-testid="game-settings"]').textContent();
    assert(settings.split(' · ').includes('rated'), `the game page says the game is rated: ${settings}`);
  }
  const rankedGame = new URL(anna.url()).hash.replace('#/game/', '');
  const watcher = await openPage('watcher');
  const row = `[data-testid="game-row"][data-game-id="${rankedGame}"]`;
  await watcher.waitForSelector(row);
  for (const colour of ['black', 'white']) {
    const name = await watcher.locator(`${row} [data-testid="${colour}-player"]`).textContent();
    const id = name.trim().split(' ')[0];
    const profile = { anna: annaAfter, ben: benAfter }[id];
    assert(profile, `${colour} is anna or ben: ${name}`);
    await expectAttr(watcher, `${row} [data-testid="${colour}-player"] [data-testid="rank"]`, 'data-rank', rankOf(profile));
  }
  await shot(watcher, 'lobby-ranks.png');
  await ben.click('[data-testid="resign"]');
  await ben.click('[data-testid="resign"]');
  await anna.waitForSelector('[data-testid="result"][data-result$="+R"]');
  await watcher.close();
  log(`the lobby shows anna's ${rankOf(annaAfter)} and ben's ${rankOf(benAfter)}`);

  // A guest in one click, unrated only; its token is renewed before it expires.
  const guest = await openPage('guest', { before: (context) => context.clock.install() });
  await openAccounts(guest);
  await guest.click('[data-testid="guest-submit"]');
  const who = await guest.waitForSelector('[data-testid="whoami"]');
  assert((await who.textContent()).startsWith('guest-'), 'a guest gets a generated name');
  assert(await guest.locator('[data-testid="automatch-rated"]').isDisabled(), 'guests cannot ask for rated games');
  const renewed = guest.waitForResponse((r) => r.url().endsWith('/api/auth/refresh') && r.status() === 200);
  await guest.clock.fastForward('14:30');
  const fresh = await (await renewed).json();
  await guest.waitForFunction((token) => window.tengen.conn.token === token, fresh.access_token);
  // A reconnect whose token the server refuses (as an expired one is) renews it with
  // the cookie and logs in again, without a word to the player.
  const again = guest.waitForResponse((r) => r.url().endsWith('/api/auth/refresh') && r.status() === 200);
  await guest.evaluate(() => {
    window.tengen.conn.token += 'x';
    window.tengen.conn.socket.close();
  });
  await again;
  await guest.waitForFunction(() => window.tengen.conn.ready && window.tengen.conn.user && window.tengen.conn.user.role === 'guest');
  const errors = await guest.locator('[data-testid="toast-error"]').allTextContents();
  assert(errors.length === 0, `no error shown for a renewed token: ${errors}`);
  await guest.click('[data-testid="automatch-start"]');
  await guest.waitForSelector('[data-testid="automatch-waiting"]');
  await guest.click('[data-testid="automatch-cancel"]');
  await guest.waitForSelector('[data-testid="automatch-start"]');
  log('the guest played in one click and renewed its token');

  // A guest is not offered a rated seek, and is told why; nor can it post one.
  assert(await guest.locator('[data-testid="seek-rated"]').isDisabled(), 'a guest\'s new game cannot be rated');
  await anna.goto(new URL('#/', base).href);
  await anna.check('[data-testid="seek-rated"]');
  await anna.click('[data-testid="seek-submit"]');
  const rated = guest.locator('[data-testid="seek-row"][data-from="anna"]');
  await rated.waitFor();
  assert((await rated.locator('[data-testid="seek-settings"]').textContent()).split(' · ').includes('rated'), 'the guest sees the seek is rated');
  const accept = rated.locator('[data-testid="accept"]');
  assert(await accept.isDisabled(), 'a guest cannot accept a rated seek');
  assert(/guests play unrated games only/i.test(await accept.getAttribute('title')), `the refused Accept says why: ${await accept.getAttribute('title')}`);
  assert(await rated.locator('[data-testid="accept-barred"]').isVisible(), 'the row says why without a hover (a phone has none)');
  assert(!(await anna.locator('[data-testid="seek-rated"]').isDisabled()), 'an account may post rated games');
  await anna.click('[data-testid="seek-row"][data-from="anna"] [data-testid="cancel"]');
  await rated.waitFor({ state: 'detached' });
  log('a rated seek is shown as such, and a guest is told it is not for guests');

  // Logging out ends the session for good: a reload stays logged out.
  await anna.click('[data-testid="logout"]');
  await anna.waitForSelector('[data-testid="login-open"]');
  await anna.reload();
  await anna.waitForSelector('[data-testid="conn-status"][data-status="online"]', { state: 'attached' });
  assert(await anna.locator('[data-testid="guest"]').count() === 1, 'logged out after a reload');
  log(`done; screenshots in ${artifacts}`);
});
