// A player's profile (`#/user/<id>`): their standing in each pool, their rating
// history drawn as a plot, and their escaper record (games left and then lost by
// forfeit), from `GET /api/users/{id}`; on your own, your vacation, weekend and notification settings. Ratings change a moment after a
// rated game ends, so the page has a button to read them again.

import { ratingPlot } from './plot.js';
import { POOLS, getJson, points } from './ratings.js';
import { notificationSettings } from './notices.js';
import { selfService } from './selfservice.js';
import { calendarBox, vacationBox } from './vacation.js';
import { el, fill } from './ui.js';

export class ProfileView {
  constructor(conn, id) {
    this.conn = conn;
    this.id = id;
    this.pool = 'overall';
    this.profile = null;
  }

  mount(container) {
    document.title = `${this.id} · tengen`;
    this.body = el('div', { 'data-testid': 'profile-body' }, el('p', { class: 'muted' }, 'Loading…'));
    this.root = el('section', { class: 'card profile', 'data-testid': 'profile', 'data-user': this.id },
      el('div', { class: 'card-head' }, this.title = el('h2', {}, this.id),
        el('a', { href: '#/leaderboard', 'data-testid': 'leaderboard-link' }, 'Leaderboard'),
        el('button', { type: 'button', class: 'quiet', 'data-testid': 'profile-refresh', onclick: () => this.load() }, 'Refresh')),
      this.body);
    const tokens = selfService(this.conn, this.id);
    fill(container, this.root, tokens ? el('section', { class: 'card' }, tokens) : null);
    this.load();
  }

  unmount() {}

  /** Whether this is the profile of the user logged in here. */
  own() {
    return this.conn.user?.id === this.id;
  }

  async load() {
    try {
      this.profile = await getJson(`/api/users/${encodeURIComponent(this.id)}`);
      this.draw();
    } catch (err) {
      fill(this.body, el('p', { class: 'muted', 'data-testid': 'profile-missing' },
        err.status === 404 ? `${this.id} has not played a game here yet.` : `The profile cannot be read: ${err.message}`),
      this.own() ? vacationBox(this.conn) : null,
      this.own() ? calendarBox(this.conn) : null,
      this.own() ? notificationSettings(this.conn) : null);
    }
  }

  draw() {
    const p = this.profile;
    fill(this.title, p.name, p.name === p.id ? null : el('span', { class: 'muted small' }, ` (${p.id})`));
    this.root.dataset.loaded = String(p.history.length);
    const rows = p.ratings.map((r) => el('tr', { 'data-testid': 'pool-row', 'data-pool': r.pool, 'data-rating': r.rating.toFixed(1), 'data-games': r.games, class: r.pool === this.pool ? 'highlight' : null },
      el('td', {}, POOLS.find(([k]) => k === r.pool)[1]),
      el('td', { 'data-testid': 'pool-rank' }, r.rank),
      el('td', { title: `deviation ${points(r.deviation)}` }, points(r.rating), el('span', { class: 'muted small' }, ` ±${points(r.deviation)}`)),
      el('td', {}, r.games === 1 ? '1 game' : `${r.games} games`),
      el('td', { class: 'muted' }, `${r.won} won · ${r.lost} lost${r.drawn ? ` · ${r.drawn} drawn` : ''}`)));
    const history = p.history.filter((h) => h.pool === this.pool);
    const choose = el('select', { 'data-testid': 'profile-pool', 'aria-label': 'Pool',
      onchange: (e) => { this.pool = e.target.value; this.draw(); } },
    POOLS.map(([k, label]) => el('option', { value: k, selected: k === this.pool }, label)));
    const recent = history.slice(-10).reverse().map((h) => el('tr', { 'data-testid': 'history-row' },
      el('td', {}, new Date(h.at).toLocaleString()),
      el('td', {}, el('a', { href: `#/user/${encodeURIComponent(h.opponent)}` }, h.opponent)),
      el('td', {}, h.color),
      el('td', { class: h.rating >= h.rating_before ? 'gain' : 'loss' }, `${points(h.rating_before)} → ${points(h.rating)}`),
      el('td', {}, el('a', { href: `#/game/${h.game_id}` }, 'review'))));
    fill(this.body,
      el('table', { class: 'stack-table' }, el('thead', {}, el('tr', {}, ['Pool', 'Rank', 'Rating', 'Games', ''].map((h) => el('th', {}, h)))), el('tbody', {}, rows)),
      el('div', { class: 'card-head' }, el('h3', {}, 'Rating history'), choose),
      history.length ? ratingPlot(history) : el('p', { class: 'muted', 'data-testid': 'plot-empty' }, 'No rated game in this pool yet.'),
      recent.length ? el('table', { class: 'stack-table' }, el('tbody', {}, recent)) : null,
      this.escapes(p.escapes),
      this.own() ? vacationBox(this.conn) : null,
      this.own() ? calendarBox(this.conn) : null,
      this.own() ? notificationSettings(this.conn) : null);
  }

  /** Games the player left and then lost by a claim or the forfeit limit. */
  escapes(e) {
    if (!e) return null;
    const text = e.count === 0 ? 'No game left and lost by forfeit.'
      : `${e.count} game${e.count === 1 ? '' : 's'} left and then lost by forfeit:`;
    return el('div', { class: 'escapes', 'data-testid': 'escapes', 'data-count': e.count },
      el('h3', {}, 'Escapes'),
      el('p', { class: e.count ? '' : 'muted' }, text),
      e.recent.length ? el('ul', {}, e.recent.map((g) => el('li', { 'data-testid': 'escape' },
        new Date(g.at).toLocaleString(), ' against ',
        el('a', { href: `#/user/${encodeURIComponent(g.opponent)}` }, g.opponent), ' · ',
        el('a', { href: `#/game/${encodeURIComponent(g.game_id)}` }, 'the game')))) : null);
  }
}
