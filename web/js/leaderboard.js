// The leaderboard (`#/leaderboard`): a pool's players, highest rating first, from
// `GET /api/ratings`; provisional ranks (ending in `?`) can be hidden.

import { POOLS, getJson, points } from './ratings.js';
import { el, fill } from './ui.js';

const SIZE_OF = { overall: '', '9x9': '9', '13x13': '13', '19x19': '19' };

export class LeaderboardView {
  constructor(conn) {
    this.conn = conn;
    this.pool = 'overall';
    this.settled = false;
    this.players = [];
  }

  mount(container) {
    document.title = 'Leaderboard · tengen';
    this.list = el('div', { 'data-testid': 'leaderboard-list' }, el('p', { class: 'muted' }, 'Loading…'));
    fill(container, el('section', { class: 'card leaderboard', 'data-testid': 'leaderboard' },
      el('div', { class: 'card-head' }, el('h2', {}, 'Leaderboard'),
        el('div', { class: 'filters' },
          el('select', { 'data-testid': 'leaderboard-pool', 'aria-label': 'Pool', onchange: (e) => { this.pool = e.target.value; this.load(); } },
            POOLS.map(([k, label]) => el('option', { value: k }, label))),
          el('label', { class: 'check' }, el('input', { type: 'checkbox', 'data-testid': 'leaderboard-settled', onchange: (e) => { this.settled = e.target.checked; this.draw(); } }), ' established ranks only'))),
      this.list));
    this.load();
  }

  unmount() {}

  async load() {
    const size = SIZE_OF[this.pool];
    try {
      const board = await getJson(`/api/ratings?limit=200${size ? `&size=${size}` : ''}`);
      this.players = board.players;
      this.draw();
    } catch (err) {
      fill(this.list, el('p', { class: 'muted' }, `The leaderboard cannot be read: ${err.message}`));
    }
  }

  draw() {
    const me = this.conn.user;
    const shown = this.players.filter((p) => !this.settled || !p.rank.endsWith('?'));
    const rows = shown.map((p, i) => el('tr', { 'data-testid': 'leader-row', 'data-user': p.id, class: me && me.id === p.id ? 'highlight' : null },
      el('td', {}, String(i + 1)),
      el('td', {}, el('a', { href: `#/user/${encodeURIComponent(p.id)}` }, p.name)),
      el('td', {}, p.rank),
      el('td', { 'data-testid': 'leader-rating' }, points(p.rating)),
      el('td', { class: 'muted' }, `${p.games} games · ${p.won} won · ${p.lost} lost`)));
    fill(this.list, rows.length
      ? el('table', { class: 'stack-table' }, el('thead', {}, el('tr', {}, ['#', 'Player', 'Rank', 'Rating', ''].map((h) => el('th', {}, h)))), el('tbody', {}, rows))
      : el('p', { class: 'muted' }, 'Nobody has played a rated game in this pool yet.'));
  }
}
