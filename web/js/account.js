// Accounts in the page (client-protocol/accounts.md): sign-up, log-in, guest play and
// log-out over /api/auth, and the session they start. The access token lives in memory
// only; the refresh token is an HttpOnly cookie the page never sees, traded for a new
// access token a minute before the old one expires and whenever the server refuses it
// (a reconnect after the laptop slept). localStorage holds only a flag saying a cookie
// should exist, so a visitor who never logged in sends no doomed refresh.

import { el, fill, toast } from './ui.js';

const SESSION_FLAG = 'tengen.session';
/** How long before the access token expires it is renewed. */
const EARLY_MS = 60000;
/** When a refresh could not reach the server, it is tried again after this. */
const RETRY_MS = 10000;

/** A refusal from /api/auth: the sentence for people and the stable code. */
export class AuthError extends Error {
  constructor(status, body) {
    super(body.error || `the server answered ${status}`);
    this.code = body.code || `http_${status}`;
    this.status = status;
  }
}

async function post(route, body) {
  const res = await fetch(`/api/auth/${route}`, {
    method: 'POST',
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (res.status === 204) return null;
  const reply = await res.json().catch(() => ({}));
  if (!res.ok) throw new AuthError(res.status, reply);
  return reply;
}

/** Runs `task` holding the browser-wide refresh lock, where the browser has one. */
function oneAtATime(task) {
  return navigator.locks ? navigator.locks.request('tengen.refresh', task) : task();
}

/** The account session: who is logged in with a password or as a guest, and their token. */
export class Session {
  constructor(conn) {
    this.conn = conn;
    this.user = null;
    this.timer = null;
    this.renewing = null;
    /** A refused token is being renewed; cleared once a token is taken. */
    this.mending = false;
    conn.addEventListener('ready', () => { if (conn.user) this.mending = false; });
  }

  get active() {
    return this.user !== null;
  }

  register(username, password, displayName, invite) {
    const body = { username, password };
    if (displayName) body.display_name = displayName;
    if (invite) body.invite = invite;
    return post('register', body).then((s) => this.start(s));
  }

  login(username, password) {
    return post('login', { username, password }).then((s) => this.start(s));
  }

  guest() {
    return post('guest').then((s) => this.start(s));
  }

  /** At page load: takes up the session of an earlier visit; false when there is none. */
  resume() {
    if (!localStorage.getItem(SESSION_FLAG)) return false;
    this.renew();
    return true;
  }

  /**
   * A new access token for the cookie. Each refresh uses the cookie up and a used one
   * ends the session, so refreshes go one at a time, across this browser's tabs too
   * (they share the cookie): the next one sends the cookie the last one received.
   */
  renew() {
    this.renewing ??= oneAtATime(() => post('refresh'))
      .then((s) => { this.start(s); return true; })
      .catch((err) => {
        if (!(err instanceof AuthError)) {
          // The server is out of reach: keep the session and try again.
          clearTimeout(this.timer);
          this.timer = setTimeout(() => this.renew(), RETRY_MS);
          return false;
        }
        const known = this.active;
        this.end();
        if (known) toast('Your session has ended; log in again to play.', 'error', err.code.replace(/_/g, ' '));
        return false;
      })
      .finally(() => { this.renewing = null; });
    return this.renewing;
  }

  /**
   * The server refused our access token (expired while we were away): renew it, unless
   * it refused the renewed one too, which another renewal would not mend.
   */
  refused() {
    if (this.mending) {
      toast('The server refuses this session; log in again to play.', 'error');
      this.end();
    } else {
      this.mending = true;
      this.renew();
    }
  }

  async logout() {
    try {
      await post('logout');
    } catch (err) {
      toast(`Logging out on the server failed: ${err.message}`, 'error');
    }
    this.end();
  }

  /** Takes a session answer: the connection gets its token, a renewal is scheduled. */
  start(session) {
    const same = this.conn.ready && this.conn.user && this.conn.user.id === session.user.id;
    this.user = session.user;
    localStorage.setItem(SESSION_FLAG, '1');
    const ttl = session.expires_in * 1000;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.renew(), ttl - Math.min(EARLY_MS, ttl / 4));
    // A logged-in connection stays logged in past its token's expiry: the fresh token
    // is only for the next reconnect. An anonymous one (a first login, a refused token)
    // logs in where it is, so no request in flight is lost to a reconnect.
    const anonymous = this.conn.ready && !this.conn.user;
    this.conn.token = session.access_token;
    if (anonymous) this.conn.authenticate(session.access_token);
    else if (!same) this.conn.open(session.access_token);
    return session.user;
  }

  end() {
    clearTimeout(this.timer);
    localStorage.removeItem(SESSION_FLAG);
    const had = this.user !== null || this.conn.token !== null;
    this.user = null;
    if (had || !this.conn.socket) {
      this.conn.user = null;
      this.conn.open(null);
    }
  }
}

/**
 * The log-in dialog's account part: log in, sign up, or play as a guest. `done` runs
 * after a success (it closes the dialog).
 */
export class AccountForms {
  constructor(session, done) {
    this.session = session;
    this.done = done;
    this.error = el('p', { class: 'form-error', role: 'alert', 'data-testid': 'account-error', hidden: true });
    const input = (form, name, attrs) => el('input', { name, required: true, 'data-testid': `${form}-${name}`, ...attrs });
    this.loginForm = el('form', { class: 'stack', 'data-testid': 'login-form', onsubmit: (e) => this.submit(e, 'login') },
      el('label', {}, 'Username', input('login', 'username', { autocomplete: 'username', maxlength: 64 })),
      el('label', {}, 'Password', input('login', 'password', { type: 'password', autocomplete: 'current-password', maxlength: 256 })),
      el('button', { type: 'submit', class: 'primary', 'data-testid': 'login-submit' }, 'Log in'));
    this.signupForm = el('form', { class: 'stack', 'data-testid': 'signup-form', hidden: true, onsubmit: (e) => this.submit(e, 'signup') },
      el('label', {}, 'Username', input('signup', 'username', { autocomplete: 'username', maxlength: 64 })),
      el('p', { class: 'muted small' }, '3 to 24 letters, digits, _ or -; not case-sensitive.'),
      el('label', {}, 'Display name (optional)', input('signup', 'display_name', { required: false, maxlength: 40, autocomplete: 'nickname' })),
      el('label', {}, 'Password', input('signup', 'password', { type: 'password', autocomplete: 'new-password', minlength: 8, maxlength: 256 })),
      el('p', { class: 'muted small' }, 'At least 8 characters, not a common password.'),
      el('label', {}, 'Invite code (if this server asks for one)', input('signup', 'invite', { required: false, maxlength: 64, autocomplete: 'off' })),
      el('button', { type: 'submit', class: 'primary', 'data-testid': 'signup-submit' }, 'Sign up'));
    const tab = (which, label) => el('button', { type: 'button', role: 'tab', class: 'tab', 'data-testid': `tab-${which}`, onclick: () => this.show(which, { focus: true }) }, label);
    this.tabs = { login: tab('login', 'Log in'), signup: tab('signup', 'Sign up') };
    this.element = el('section', { class: 'account-forms', 'data-testid': 'account-forms', hidden: true },
      el('div', { class: 'tabs', role: 'tablist' }, this.tabs.login, this.tabs.signup),
      this.loginForm, this.signupForm, this.error,
      el('div', { class: 'guest-play' },
        el('button', { type: 'button', 'data-testid': 'guest-submit', onclick: () => this.guest() }, 'Play as guest'),
        el('span', { class: 'muted small' }, 'No password; unrated games only; ends when this browser forgets it.')));
    this.show('login');
  }

  show(which, { focus = false } = {}) {
    this.loginForm.hidden = which !== 'login';
    this.signupForm.hidden = which !== 'signup';
    for (const [name, t] of Object.entries(this.tabs)) t.setAttribute('aria-selected', String(name === which));
    this.error.hidden = true;
    if (focus) this.focus();
  }

  /** Puts the cursor in the first field of the form shown (its username). */
  focus() {
    const form = this.loginForm.hidden ? this.signupForm : this.loginForm;
    form.querySelector('input')?.focus();
  }

  async submit(e, which) {
    e.preventDefault();
    const f = e.target.elements;
    await this.attempt(which === 'login'
      ? () => this.session.login(f.username.value.trim(), f.password.value)
      : () => this.session.register(f.username.value.trim(), f.password.value, f.display_name.value.trim(), f.invite.value.trim()));
    if (this.error.hidden) e.target.reset();
  }

  guest() {
    return this.attempt(() => this.session.guest());
  }

  async attempt(action) {
    this.error.hidden = true;
    try {
      const user = await action();
      toast(`Logged in as ${user.name}`, 'ok');
      this.done();
    } catch (err) {
      const code = err instanceof AuthError ? err.code : 'unreachable';
      fill(this.error, err.message, el('small', { 'data-testid': 'account-error-code' }, ` (${code.replace(/_/g, ' ')})`));
      this.error.dataset.code = code;
      this.error.hidden = false;
    }
  }
}
