// Personal API tokens and a bot account made by its owner, in the browser, against a
// server with registration open and the dev login off (tests/web_tokens.rs starts it):
// Tess signs up, creates a token on her profile page (shown once, then listed by its
// prefix only), checks it opens the API, revokes it, turns her account into a bot
// account, and finds it labelled on the bots page.

import { assert, base, openPage, run, shot } from './lib.mjs';

const PASSWORD = 'tsumego every day';

await run('tokens', async () => {
  const tess = await openPage('tess');
  await tess.click('[data-testid="login-open"]');
  await tess.click('[data-testid="tab-signup"]');
  await tess.fill('[data-testid="signup-username"]', 'tess');
  await tess.fill('[data-testid="signup-password"]', PASSWORD);
  await tess.click('[data-testid="signup-submit"]');
  await tess.waitForSelector('[data-testid="whoami"]:text-is("tess")');

  await tess.click('[data-testid="nav-profile"]');
  await tess.waitForSelector('[data-testid="self-service"]');
  assert(await tess.locator('[data-testid="token-scope-bot"]').count() === 0, 'a person is not offered the bot scope');
  await tess.fill('[data-testid="token-name"]', 'my script');
  await tess.check('[data-testid="token-scope-play"]');
  await tess.click('[data-testid="token-create"]');
  const secret = await tess.locator('[data-testid="token-secret"]').textContent({ timeout: 5000 });
  assert(/^tgn_[0-9a-f]{12}_[0-9a-f]{64}$/.test(secret), `a whole token is shown once: ${secret}`);
  const row = tess.locator('[data-testid="token-row"]');
  await row.waitFor();
  const id = await row.getAttribute('data-token');
  assert(secret.startsWith(`${id}_`), 'the list names the token by its prefix');
  assert(!(await tess.locator('[data-testid="token-list"]').textContent()).includes(secret.slice(id.length)), 'the list never shows the secret');
  await shot(tess, 'tokens-created.png');

  // The token opens the API as Tess, for what its scope allows.
  const review = await fetch(new URL('api/reviews', base), {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sgf: '(;GM[1]FF[4]SZ[9];B[ee])' }),
  });
  assert(review.status === 201, `a play token saves a review (${review.status})`);

  // Shown once: a reload lists it, without the secret.
  await tess.reload();
  await tess.waitForSelector('[data-testid="token-row"]');
  assert(await tess.locator('[data-testid="token-secret"]').count() === 0, 'the secret is not shown again');
  await tess.click('[data-testid="token-revoke"]');
  await tess.waitForSelector('[data-testid="token-row"]', { state: 'detached' });
  const refused = await fetch(new URL('api/reviews', base), {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ sgf: '(;GM[1]FF[4]SZ[9];B[ee])' }),
  });
  assert(refused.status === 401, `a revoked token is refused (${refused.status})`);

  // Turning the account into a bot, confirmed with the username.
  await tess.fill('[data-testid="bot-confirm"]', 'tess');
  await tess.click('[data-testid="make-bot-submit"]');
  await tess.waitForFunction(async () => {
    const res = await fetch('/api/bots');
    const page = await res.json();
    return page.bots.some((b) => b.user.id === 'tess');
  });
  await tess.reload();
  await tess.waitForSelector('[data-testid="whoami"]:text-is("tess")');
  await tess.click('[data-testid="nav-profile"]');
  await tess.waitForSelector('[data-testid="token-scope-bot"]');
  assert(await tess.locator('[data-testid="make-bot"]').count() === 0, 'a bot is not offered the conversion again');
  assert(await tess.locator('[data-testid="token-scope-play"]').count() === 0, 'a bot acts with the bot scope only');
  await tess.click('[data-testid="nav-bots"]');
  const bot = tess.locator('[data-testid="bots-page-row"][data-bot="tess"]');
  await bot.waitFor();
  assert(await bot.locator('[data-icon="bot"]').count() === 1, 'the bots page labels the bot');
  await shot(tess, 'bots-page.png');
});
