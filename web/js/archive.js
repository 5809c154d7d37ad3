// The archive page (`#/archive`): my games and recent games from `GET /api/games`
// (client-protocol/archive.md), newest first, filtered by player on the server and by
// size, result and date here; each opens in review, each has its SGF.

import { el, fill, resultText } from './ui.js';

/** Games fetched per page: the most the API gives at once. */
const PAGE = 200;

const RESULTS = [['', 'any result'], ['B', 'Black won'], ['W', 'White won'], ['R', 'by resignation'], ['T', 'on time'], ['count', 'by counting'], ['other', 'draw or void']];
const SIZES = [['', 'any size'], ['9', '9×9'], ['13', '13×13'], ['19', '19×19']];

/** Whether a listed game passes the page's filters. */
export function matches(g, f) {
  if (f.size && String(g.board_size) !== f.size) return false;
  if (f.since && g.created_at < Date.parse(f.since)) return false;
  const r = g.result || '';
  switch (f.result) {
    case 'B': case 'W': return r.startsWith(`${f.result}+`);
    case 'R': case 'T': return r.endsWith(`+${f.result}`);
    case 'count': return /^[BW]\+\d/.test(r);
    case 'other': return r === '0' || r === 'Void';
    default: return true;
  }
}

export class ArchiveView {
  constructor(conn) {
    this.conn = conn;
    this.games = [];
    this.next = null;
    this.onReady = () => this.draw();
  }

  mount(container) {
    document.title = 'Archive · tengen';
    const me = this.conn.user;
    this.form = el('form', { class: 'filters archive-filters', 'data-testid': 'archive-filters', onsubmit: (e) => { e.preventDefault(); this.load(); } },
      el('label', { class: 'field' }, el('span', {}, 'Player (user id)'),
        el('input', { name: 'player', type: 'text', value: me ? me.id : '', placeholder: 'anyone', 'data-testid': 'archive-player', autocomplete: 'off' })),
      el('label', { class: 'field' }, el('span', {}, 'Size'), this.select('size', SIZES)),
      el('label', { class: 'field' }, el('span', {}, 'Result'), this.select('result', RESULTS)),
      el('label', { class: 'field' }, el('span', {}, 'Since'), el('input', { name: 'since', type: 'date', 'data-testid': 'archive-since', onchange: () => this.draw() })),
      el('button', { type: 'submit', class: 'primary', 'data-testid': 'archive-search' }, 'Search'));
    this.list = el('div', { 'data-testid': 'archive-list' }, el('p', { class: 'muted' }, 'Loading…'));
    this.more = el('button', { type: 'button', hidden: true, 'data-testid': 'archive-more', onclick: () => this.load(this.next) }, 'Older games');
    fill(container, el('section', { class: 'card archive' },
      el('div', { class: 'card-head' }, el('h2', {}, 'Finished games'), el('a', { href: '#/' }, 'Back to the lobby')),
      el('div', { class: 'quick' },
        me ? el('button', { type: 'button', 'data-testid': 'archive-mine', onclick: () => { this.form.elements.player.value = me.id; this.load(); } }, 'My games') : null,
        el('button', { type: 'button', 'data-testid': 'archive-recent', onclick: () => { this.form.elements.player.value = ''; this.load(); } }, 'Recent games')),
      this.form, this.list, this.more));
    this.load();
  }

  unmount() {}

  select(name, options) {
    return el('select', { name, 'data-testid': `archive-${name}`, onchange: () => this.draw() },
      options.map(([v, t]) => el('option', { value: v }, t)));
  }

  /** Fetches the first page (or the page after `before`) of finished games. */
  async load(before = null) {
    const q = new URLSearchParams({ status: 'finished', limit: String(PAGE) });
    const player = this.form.elements.player.value.trim();
    if (player) q.set('player', player);
    if (before) q.set('before', before);
    try {
      const res = await fetch(`/api/games?${q}`, { cache: 'no-store' });
      const body = await res.json();
      if (!res.ok) throw new Error(body.error || `the server answered ${res.status}`);
      this.games = before ? this.games.concat(body.games) : body.games;
      this.next = body.next;
      this.draw();
    } catch (err) {
      fill(this.list, el('p', { class: 'warn' }, `The archive cannot be read: ${err.message}`));
    }
  }

  draw() {
    const f = Object.fromEntries(['size', 'result', 'since'].map((k) => [k, this.form.elements[k].value]));
    const shown = this.games.filter((g) => matches(g, f));
    const rows = shown.map((g) => el('tr', { 'data-testid': 'archive-row', 'data-game-id': g.game_id },
      el('td', {}, new Date(g.created_at).toISOString().slice(0, 10)),
      el('td', {}, el('span', { class: 'stone-icon stone-icon-black' }), ` ${g.black_name}`),
      el('td', {}, el('span', { class: 'stone-icon stone-icon-white' }), ` ${g.white_name}`),
      el('td', {}, g.board_size ? `${g.board_size}×${g.board_size}` : ''),
      el('td', { title: resultText(g.result) }, g.result || ''),
      el('td', {}, `${g.move_count} moves`),
      el('td', { class: 'row-actions' },
        el('a', { class: 'button', href: `#/game/${g.game_id}`, 'data-testid': 'archive-open' }, 'Review'),
        el('a', { class: 'button', href: `/api/games/${encodeURIComponent(g.game_id)}/sgf`, download: `${g.game_id}.sgf` }, 'SGF'))));
    fill(this.list, rows.length
      ? el('table', { class: 'stack-table' }, el('tbody', {}, rows))
      : el('p', { class: 'muted', 'data-testid': 'archive-empty' }, 'No finished game matches.'));
    this.more.hidden = !this.next;
  }
}
