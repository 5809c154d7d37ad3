// The bots page (`#/bots`): every bot account with its engine and the games it
// accepts, from `GET /api/bots` (client-protocol/bots.md#get-apibots).

import { getJson } from './ratings.js';
import { el, fill, who } from './ui.js';

const accepts = (p) => {
  const o = p.offer;
  const sizes = o.board_sizes.length ? o.board_sizes.map((s) => `${s}×${s}`).join(', ') : 'any size';
  const times = o.time_systems.length ? o.time_systems.join(', ') : 'any clock';
  return `${sizes} · ${times} · ${p.rated} games${o.max_handicap ? ` · handicap up to ${o.max_handicap}` : ''}`;
};

export class BotsView {
  constructor(conn) {
    this.conn = conn;
  }

  mount(container) {
    document.title = 'Bots · tengen';
    this.list = el('div', { 'data-testid': 'bots-page-list' }, el('p', { class: 'muted' }, 'Loading…'));
    fill(container, el('section', { class: 'card', 'data-testid': 'bots-page' },
      el('div', { class: 'card-head' }, el('h2', {}, 'Bots')), this.list));
    this.load();
  }

  unmount() {}

  async load() {
    try {
      const page = await getJson('/api/bots');
      const rows = page.bots.map((b) => el('tr', { 'data-testid': 'bots-page-row', 'data-bot': b.user.id },
        el('td', {}, el('a', { href: `#/user/${encodeURIComponent(b.user.id)}` }, who(b.user))),
        el('td', {}, b.online ? 'online' : el('span', { class: 'muted' }, 'offline')),
        el('td', {}, b.profile ? b.profile.engine : el('span', { class: 'muted' }, 'no profile')),
        el('td', { class: 'muted' }, b.profile ? accepts(b.profile) : '')));
      fill(this.list, rows.length
        ? el('table', { class: 'stack-table' }, el('tbody', {}, rows))
        : el('p', { class: 'muted' }, 'No bot account yet.'));
    } catch (err) {
      fill(this.list, el('p', { class: 'muted' }, `The bots cannot be read: ${err.message}`));
    }
  }
}
