// The page: the header with login and connection state, the banner shown while the
// server is out of reach, the login dialog (a pasted token, or the labelled local dev
// login when the server allows it), and the views, chosen by the address: `#/` the lobby,
// `#/game/<id>` a game, `#/archive?…` the finished games, `#/analysis?…` an analysis board,
// `#/user/<id>` a profile, `#/leaderboard` the ratings, `#/referee` the open calls and
// reports (referees and admins), `#/tournaments` the tournaments and `#/tournament/<id>`
// one of them, `#/correspondence` your correspondence games; the bell of notices in the header. Without the dev
// login the dialog offers accounts instead.

import { AccountForms, Session } from './account.js';
import { AnalysisView } from './analysis.js';
import { ArchiveView } from './archive.js';
import { Automatch } from './automatch.js';
import { Connection } from './connection.js';
import { CorrespondenceView } from './correspondence.js';
import { GameView } from './game.js';
import { BotsView } from './bots.js';
import { LeaderboardView } from './leaderboard.js';
import { LobbyView } from './lobby.js';
import { NoticeBell } from './notices.js';
import { ProfileView } from './profile.js';
import { RefereeView, isReferee } from './referee.js';
import { TournamentView } from './tournament.js';
import { TournamentsView } from './tournaments.js';
import { el, fill, showError, toast } from './ui.js';

const TOKEN_KEY = 'tengen.token';

/** The parameters of the address (`#/archive?size=9` → size=9). */
const query = () => new URLSearchParams(location.hash.split('?')[1] || '');

class App {
  constructor() {
    this.conn = new Connection();
    this.session = new Session(this.conn);
    this.automatch = new Automatch(this.conn);
    this.bell = new NoticeBell(this.conn);
    this.view = null;
    this.viewUser = null;
    this.main = document.getElementById('view');
    this.account = document.getElementById('account');
    this.status = document.getElementById('conn-status');
    this.banner = document.getElementById('offline-banner');
    this.dialog = document.getElementById('login');
    this.conn.addEventListener('ready', () => this.ready());
    this.conn.addEventListener('status', (e) => this.showStatus(e.detail));
    this.conn.addEventListener('server-error', (e) => showError(e.detail));
    this.conn.addEventListener('token-refused', () => {
      // An account's access token expired while we were away: the cookie renews it.
      if (this.session.active) { this.session.refused(); return; }
      localStorage.removeItem(TOKEN_KEY);
      toast('Your token was refused; you are watching as a guest. Log in again to play.', 'error');
    });
    this.conn.addEventListener('message', (e) => this.notice(e.detail));
    window.addEventListener('hashchange', () => this.route());
    // What is scrolled into view (a challenge brought on screen by its notice) stops below
    // the sticky header, whose height changes as it wraps.
    new ResizeObserver(([entry]) => {
      document.documentElement.style.setProperty('--masthead', `${Math.ceil(entry.borderBoxSize[0].blockSize)}px`);
    }).observe(document.querySelector('.masthead'));
    this.setUpLogin();
    this.drawAccount();
    this.route();
    const stored = localStorage.getItem(TOKEN_KEY);
    if (stored || !this.session.resume()) this.conn.open(stored);
  }

  route() {
    if (this.view) this.view.unmount();
    // A new address starts at the top of its page (on a phone, a game opened from far
    // down the lobby would show no board); the same view drawn again for a new user stays.
    if (location.hash !== this.routed) window.scrollTo(0, 0);
    this.routed = location.hash;
    const m = /^#\/game\/([A-Za-z0-9_-]+)$/.exec(location.hash);
    const user = /^#\/user\/([^/]+)$/.exec(location.hash);
    const tournament = /^#\/tournament\/([A-Za-z0-9_-]+)$/.exec(location.hash);
    if (m) this.view = new GameView(this.conn, m[1]);
    else if (tournament) this.view = new TournamentView(this.conn, tournament[1]);
    else if (location.hash === '#/tournaments') this.view = new TournamentsView(this.conn);
    else if (user) this.view = new ProfileView(this.conn, decodeURIComponent(user[1]));
    else if (location.hash === '#/leaderboard') this.view = new LeaderboardView(this.conn);
    else if (location.hash === '#/bots') this.view = new BotsView(this.conn);
    else if (location.hash === '#/correspondence') this.view = new CorrespondenceView(this.conn);
    else if (/^#\/archive(\?|$)/.test(location.hash)) this.view = new ArchiveView(this.conn, query());
    else if (location.hash === '#/referee') this.view = new RefereeView(this.conn);
    else if (location.hash.startsWith('#/analysis')) this.view = new AnalysisView(this.conn, query());
    else this.view = new LobbyView(this.conn, this);
    this.viewUser = this.conn.user ? this.conn.user.id : null;
    this.view.mount(this.main);
  }

  ready() {
    this.drawAccount();
    const user = this.conn.user ? this.conn.user.id : null;
    // Who you are changes what a view shows (the form, your colour): draw it again.
    if (user !== this.viewUser) this.route();
  }

  /** Messages that matter whatever view is open. */
  notice(msg) {
    const me = this.conn.user;
    if (msg.type === 'game_started') {
      const opponent = me && msg.black.id === me.id ? msg.white : msg.black;
      toast(`Your game against ${opponent.name} has started`, 'ok');
      const target = `#/game/${msg.game_id}`;
      if (location.hash !== target) location.hash = target;
    } else if (msg.type === 'challenge_added' && me && msg.challenge.to === me.id && !this.view?.takesChallenge?.(msg.challenge)) {
      // (A rematch offered in the ended game's view is shown there instead.)
      // Tapping the notice brings the challenge into view, wherever it is.
      toast(`${msg.challenge.from.name} challenges you: tap to see it`, 'info', '', () => {
        const reveal = () => requestAnimationFrame(() => document.getElementById('seeks')?.scrollIntoView({ block: 'start' }));
        if (location.hash !== '#/' && location.hash !== '') {
          // After the lobby is drawn (and the page put back at its top).
          window.addEventListener('hashchange', reveal, { once: true });
          location.hash = '#/';
        } else {
          reveal();
        }
      });
    } else if (msg.type === 'closing') {
      toast('The server is restarting; reconnecting…', 'info');
    }
  }

  /** The connection's state in the header, and in a banner while offline. */
  showStatus({ status }) {
    clearInterval(this.statusTimer);
    this.statusTimer = null;
    this.status.dataset.status = status;
    // Offline is said in a banner too: the header's status is too small on a phone.
    this.retryIn = el('span', { 'data-testid': 'retry-in', 'aria-live': 'off' });
    if (status === 'online') this.banner.hidden = true;
    else if (status === 'closing') {
      fill(this.banner, 'The server is restarting: clocks are stopped on this page until it is back.');
      this.banner.hidden = false;
    } else if (status === 'offline') {
      fill(this.banner, 'Offline: clocks are stopped on this page until the server is back (', this.retryIn, ').');
      this.banner.hidden = false;
      // The time to the next attempt counts down each second (in place: the banner is
      // an alert, announced once, not every second).
      this.statusTimer = setInterval(() => this.drawStatus(status), 1000);
    }
    this.drawStatus(status);
  }

  drawStatus(status) {
    const left = Math.max(0, Math.ceil((this.conn.retryAt - Date.now()) / 1000));
    const retrying = left > 0 ? `retrying in ${left}s` : 'retrying now';
    this.retryIn.textContent = retrying;
    this.status.textContent = {
      online: 'online',
      connecting: 'connecting…',
      offline: `offline · ${retrying}`,
      closing: 'server restarting…',
    }[status] || status;
  }

  drawAccount() {
    const user = this.conn.user;
    if (user) {
      fill(this.account,
        el('a', { href: '#/leaderboard', class: 'nav', 'data-testid': 'nav-leaderboard' }, 'Leaderboard'),
        el('a', { href: '#/bots', class: 'nav', 'data-testid': 'nav-bots' }, 'Bots'),
        el('a', { href: '#/tournaments', class: 'nav', 'data-testid': 'nav-tournaments' }, 'Tournaments'),
        el('a', { href: '#/correspondence', class: 'nav', 'data-testid': 'nav-correspondence', title: 'Your correspondence games' }, 'Correspondence'),
        el('a', { href: `#/user/${encodeURIComponent(user.id)}`, class: 'nav', 'data-testid': 'nav-profile' }, 'Profile'),
        isReferee(user) ? el('a', { href: '#/referee', class: 'nav', 'data-testid': 'nav-referee' }, 'Referee') : null,
        this.bell.element,
        el('span', { class: 'whoami', 'data-testid': 'whoami', title: `user id ${user.id}` }, user.name),
        el('button', { type: 'button', class: 'quiet', 'data-testid': 'logout', onclick: () => this.logout() }, 'Log out'));
    } else {
      fill(this.account,
        el('a', { href: '#/leaderboard', class: 'nav', 'data-testid': 'nav-leaderboard' }, 'Leaderboard'),
        el('a', { href: '#/bots', class: 'nav', 'data-testid': 'nav-bots' }, 'Bots'),
        el('a', { href: '#/tournaments', class: 'nav', 'data-testid': 'nav-tournaments' }, 'Tournaments'),
        el('span', { class: 'muted', 'data-testid': 'guest' }, 'guest'),
        el('button', { type: 'button', 'data-testid': 'login-open', onclick: () => this.showLogin() }, 'Log in'));
    }
  }

  async showLogin() {
    this.dialog.showModal();
    await this.checkDevLogin();
    // The first field of the form that is offered (the dev login's name, or the
    // account's username), not the pasted token's box, which few people use.
    if (this.dialog.open) {
      const dev = document.getElementById('dev-login');
      if (dev.hidden) this.accountForms.focus();
      else dev.querySelector('input').focus();
    }
  }

  async checkDevLogin() {
    const box = document.getElementById('dev-login');
    try {
      const res = await fetch('/api/dev-login', { cache: 'no-store' });
      const info = await res.json();
      box.hidden = !info.enabled;
    } catch {
      box.hidden = true;
    }
    this.accountForms.element.hidden = !box.hidden;
  }

  setUpLogin() {
    const tokenForm = document.getElementById('token-form');
    const devForm = document.getElementById('dev-form');
    this.accountForms = new AccountForms(this.session, () => {
      localStorage.removeItem(TOKEN_KEY);
      this.dialog.close();
    });
    tokenForm.before(this.accountForms.element);
    document.getElementById('login-cancel').addEventListener('click', () => this.dialog.close());
    tokenForm.addEventListener('submit', (e) => {
      e.preventDefault();
      const token = tokenForm.elements.token.value.trim();
      if (!token) return;
      this.login(token);
      tokenForm.reset();
    });
    devForm.addEventListener('submit', async (e) => {
      e.preventDefault();
      const name = devForm.elements.name.value.trim();
      try {
        const res = await fetch('/api/dev-login', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
        });
        const body = await res.json().catch(() => ({}));
        if (!res.ok) throw new Error(body.error || `the server answered ${res.status}`);
        this.login(body.token);
        devForm.reset();
      } catch (err) {
        showError(new Error(`Dev login failed: ${err.message}`));
      }
    });
  }

  login(token) {
    localStorage.setItem(TOKEN_KEY, token);
    this.dialog.close();
    this.conn.open(token);
  }

  logout() {
    localStorage.removeItem(TOKEN_KEY);
    if (this.session.active) { this.session.logout(); return; }
    this.conn.user = null;
    this.conn.open(null);
  }
}

const app = new App();
// For the browser console (and the browser test): the app and its connection.
window.tengen = { app, conn: app.conn };
