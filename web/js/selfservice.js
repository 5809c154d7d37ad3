// The self-service part of one's own profile (client-protocol/accounts.md#personal-api-tokens,
// bots.md#bot-accounts): personal API tokens (created with a name, scopes and an
// optional expiry, shown once, listed by their prefix, revoked), and turning the account
// into a bot account, for good, after a confirmation. Every call carries the session's
// access token; the server refuses a personal token here.

import { el, fill, toast } from './ui.js';

const SCOPES = [
  ['read', 'read: watch and list'],
  ['play', 'play: seek, play, chat'],
  ['bot', 'bot: act as this bot'],
  ['tournament:direct', 'tournament:direct: direct tournaments'],
];

/** Which scopes the account's role may put on a token (accounts.md#scopes). */
function allowed(role) {
  return SCOPES.filter(([s]) => s === 'read'
    || (s === 'play' && role !== 'bot')
    || (s === 'bot' && role === 'bot')
    || (s === 'tournament:direct' && (role === 'referee' || role === 'admin')));
}

export async function call(conn, method, url, body) {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${conn.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    cache: 'no-store',
    credentials: 'same-origin',
  });
  const reply = res.status === 204 ? null : await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(reply.error || `the server answered ${res.status}`);
    err.code = reply.code;
    throw err;
  }
  return reply;
}

const when = (ms) => (ms ? new Date(ms).toLocaleString() : 'never');

/** The section, for the logged-in user's own profile; null for anyone else's. */
export function selfService(conn, id) {
  const user = conn.user;
  if (!user || user.id !== id || user.role === 'guest' || !conn.token) return null;
  const list = el('div', { 'data-testid': 'token-list' }, el('p', { class: 'muted' }, 'Loading…'));
  const shown = el('div', { 'data-testid': 'token-shown' });
  const name = el('input', { type: 'text', 'data-testid': 'token-name', maxlength: 40, placeholder: 'what it is for', 'aria-label': 'Token name' });
  const scopes = allowed(user.role).map(([s, label]) => el('label', { class: 'check' },
    el('input', { type: 'checkbox', value: s, 'data-testid': `token-scope-${s}` }), ` ${label}`));
  const days = el('input', { type: 'number', min: 1, max: 365, 'data-testid': 'token-days', placeholder: 'never', 'aria-label': 'Expires in days' });

  async function load() {
    try {
      const reply = await call(conn, 'GET', '/api/tokens');
      const rows = reply.tokens.map((t) => el('tr', { 'data-testid': 'token-row', 'data-token': t.id },
        el('td', {}, el('code', {}, t.id)), el('td', {}, t.name), el('td', {}, t.scopes.join(' ')),
        el('td', { class: 'muted' }, `last used ${when(t.last_used_at)} · expires ${when(t.expires_at)}`),
        el('td', {}, el('button', { type: 'button', class: 'quiet', 'data-testid': 'token-revoke',
          onclick: () => revoke(t.id) }, 'Revoke'))));
      fill(list, rows.length
        ? el('table', { class: 'stack-table' }, el('tbody', {}, rows))
        : el('p', { class: 'muted' }, `No token yet (at most ${reply.max}).`));
    } catch (err) {
      fill(list, el('p', { class: 'muted' }, `The tokens cannot be read: ${err.message}`));
    }
  }

  async function create(e) {
    e.preventDefault();
    const chosen = scopes.map((l) => l.querySelector('input')).filter((i) => i.checked).map((i) => i.value);
    const body = { name: name.value, scopes: chosen };
    if (days.value) body.expires_in_days = Number(days.value);
    try {
      const made = await call(conn, 'POST', '/api/tokens', body);
      fill(shown, el('p', {}, 'Copy it now: it is shown this once. ',
        el('code', { 'data-testid': 'token-secret' }, made.token)));
      name.value = '';
      load();
    } catch (err) {
      toast(err.message, 'error');
    }
  }

  async function revoke(token) {
    try {
      await call(conn, 'DELETE', `/api/tokens/${encodeURIComponent(token)}`);
      fill(shown);
      load();
    } catch (err) {
      toast(err.message, 'error');
    }
  }

  const confirm = el('input', { type: 'text', 'data-testid': 'bot-confirm', placeholder: user.id, 'aria-label': 'Your username, to confirm' });
  async function makeBot(e) {
    e.preventDefault();
    try {
      await call(conn, 'POST', '/api/account/bot', { confirm: confirm.value });
      // The server ends this connection; it comes back as the bot.
      toast('This account is a bot account now.', 'info');
    } catch (err) {
      toast(err.message, 'error');
    }
  }
  const convert = user.role !== 'player' ? null : el('form', { class: 'card-sub', 'data-testid': 'make-bot', onsubmit: makeBot },
    el('h3', {}, 'Turn into a bot account'),
    el('p', { class: 'muted' }, 'For a program that plays here with a token of bot scope. It cannot be undone, and only an account with no rated game may turn. Type your username to confirm.'),
    confirm, ' ', el('button', { type: 'submit', 'data-testid': 'make-bot-submit' }, 'Turn into a bot'));

  load();
  return el('div', { class: 'self-service', 'data-testid': 'self-service' },
    el('h3', {}, 'API tokens'),
    el('p', { class: 'muted' }, 'For your programs (a bot, a script), used like a login: ', el('code', {}, '/ws?token='), ' or ', el('code', {}, 'Authorization: Bearer'), '.'),
    list, shown,
    el('form', { 'data-testid': 'token-form', onsubmit: create },
      name, ' ', scopes, ' ', days, ' ', el('button', { type: 'submit', 'data-testid': 'token-create' }, 'Create token')),
    convert);
}
