// The archive page (`#/archive?player=..&size=..&result=..&since=..`): my games and
// recent games from `GET /api/games` (client-protocol/archive.md), newest first, filtered
// by player on the server and by size, result and date here; the filters are kept in the
// address (a reload or a link keeps them), and "My games" and "Recent games" start from
// no filter. Each game opens in review, each has its SGF.

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

/** The filters kept in the address besides the player. */
const FILTERS = ['size', 'result', 'since'];

export class ArchiveView {
  /** `query`: the address's parameters (no `player`: my games, or anyone's when logged out). */
  constructor(conn, query) {
    this.conn = conn;
    this.query = query;
    this.games = [];
    this.next = null;
    this.onReady = () => this.draw();
  }

  mount(container) {
    document.title = 'Archive · tengen';
    const me = this.conn.user;
    const q = this.query;
    const player = q.has('player') ? q.get('player') : (me ? me.id : '');
    this.form = el('form', { class: 'filters archive-filters', 'data-testid': 'archive-filters', onsubmit: (e) => { e.preventDefault(); this.search(); } },
      el('label', { class: 'field' }, el('span', {}, 'Player (user id)'),
        el('input', { name: 'player', type: 'text', value: player, placeholder: 'anyone', 'data-testid': 'archive-player', autocomplete: 'off' })),
      el('label', { class: 'field' }, el('span', {}, 'Size'), this.select('size', SIZES)),
      el('label', { class: 'field' }, el('span', {}, 'Result'), this.select('result', RESULTS)),
      el('label', { class: 'field' }, el('span', {}, 'Since'), el('input', { name: 'since', type: 'date', 'data-testid': 'archive-since', onchange: () => this.filtered() })),
      el('button', { type: 'submit', class: 'primary', 'data-testid': 'archive-search' }, 'Search'));
    this.list = el('div', { 'data-testid': 'archive-list' }, el('p', { class: 'muted' }, 'Loading…'));
    this.more = el('button', { type: 'button', hidden: true, 'data-testid': 'archive-more', onclick: () => this.load(this.next) }, 'Older games');
    fill(container, el('section', { class: 'card archive' },
      el('div', { class: 'card-head' }, el('h2', {}, 'Finished games'), el('a', { href: '#/' }, 'Back to the lobby')),
      el('div', { class: 'quick' },
        me ? el('button', { type: 'button', 'data-testid': 'archive-mine', onclick: () => this.quick(me.id) }, 'My games') : null,
        el('button', { type: 'button', 'data-testid': 'archive-recent', onclick: () => this.quick('') }, 'Recent games')),
      this.form, this.list, this.more));
    for (const name of FILTERS) this.form.elements[name].value = q.get(name) || '';
    this.load();
  }

  unmount() {}

  select(name, options) {
    return el('select', { name, 'data-testid': `archive-${name}`, onchange: () => this.filtered() },
      options.map(([v, t]) => el('option', { value: v }, t)));
  }

  /** "My games" or "Recent games": that player's games (anyone's for ''), no filter. */
  quick(player) {
    this.form.elements.player.value = player;
    for (const name of FILTERS) this.form.elements[name].value = '';
    this.search();
  }

  search() {
    this.remember();
    this.load();
  }

  /** A filter changed: the list and the address follow. */
  filtered() {
    this.remember();
    this.draw();
  }

  /** The filters into the address, so that a reload or a shared link keeps them. */
  remember() {
    const f = this.form.elements;
    const q = new URLSearchParams({ player: f.player.value.trim() });
    for (const name of FILTERS) if (f[name].value) q.set(name, f[name].value);
    history.replaceState(null, '', `#/archive?${q}`);
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
    const f = Object.fromEntries(FILTERS.map((k) => [k, this.form.elements[k].value]));
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
