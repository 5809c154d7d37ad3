// Your correspondence games (`#/correspondence`, client-protocol/correspondence.md#list_correspondence):
// those where it is your move first, the nearest deadline first, then those where your
// opponent is to move; each with the opponent, the time left to whoever is to move
// (counted down here from the server's deadline), whether you keep a plan in it, and
// its link. Read again when the connection is back and on Refresh.

import { daysHours } from './vacation.js';
import { el, fill, showError } from './ui.js';

const TICK_MS = 30_000;

/** The time left until `deadline` (server ms) at `now`: "2 d 5 h", "5 h", "40 min". */
export function timeLeft(deadline, now) {
  const ms = deadline - now;
  if (ms <= 0) return 'out of time';
  return ms >= 3_600_000 ? daysHours(ms) : `${Math.ceil(ms / 60_000)} min`;
}

/** Nearest deadline first; a clock that stands still (vacation) last. */
const byDeadline = (a, b) => (a.deadline ?? Infinity) - (b.deadline ?? Infinity);

export class CorrespondenceView {
  constructor(conn) {
    this.conn = conn;
    this.games = null;
    this.onReady = () => this.load();
  }

  mount(container) {
    document.title = 'Correspondence · tengen';
    this.list = el('div', { 'data-testid': 'corr-lists' }, el('p', { class: 'muted' }, 'Loading…'));
    fill(container, el('section', { class: 'card correspondence', 'data-testid': 'correspondence' },
      el('div', { class: 'card-head' }, el('h2', {}, 'Correspondence games'),
        el('button', { type: 'button', class: 'quiet', 'data-testid': 'corr-refresh', onclick: () => this.load() }, 'Refresh')),
      this.list));
    this.conn.addEventListener('ready', this.onReady);
    this.timer = setInterval(() => this.draw(), TICK_MS);
    if (this.conn.ready) this.load();
  }

  unmount() {
    clearInterval(this.timer);
    this.conn.removeEventListener('ready', this.onReady);
  }

  async load() {
    if (!this.conn.user) {
      fill(this.list, el('p', { class: 'muted' }, 'Log in to see your correspondence games.'));
      return;
    }
    try {
      const reply = await this.conn.request({ type: 'list_correspondence' });
      this.games = reply.games;
      this.draw();
    } catch (err) {
      if (err.code) showError(err);
    }
  }

  draw() {
    if (!this.games) return;
    const now = Date.now() + this.conn.offset;
    const mine = this.games.filter((g) => g.to_move === g.you).sort(byDeadline);
    const theirs = this.games.filter((g) => g.to_move !== g.you).sort(byDeadline);
    const row = (g) => {
      const opponent = g.you === 'black' ? g.white : g.black;
      const yours = g.to_move === g.you;
      const left = g.deadline == null ? 'a clock that stands still' : timeLeft(g.deadline, now);
      const said = g.phase !== 'play' ? (g.phase === 'scoring' ? 'counting' : g.phase) : yours ? `${left} left` : `they have ${left}`;
      return el('li', { class: 'corr-game', 'data-testid': 'corr-row', 'data-game-id': g.game_id },
        el('span', { class: 'corr-opponent', 'data-testid': 'corr-opponent' },
          el('span', { class: `stone-icon stone-icon-${g.you}`, title: `you play ${g.you}` }), ` vs ${opponent.name}`),
        el('span', { class: 'muted small' }, ` ${g.board_size}×${g.board_size} · move ${g.move_number}`),
        el('span', { class: 'corr-left', 'data-testid': 'corr-left', 'data-deadline': g.deadline ?? '', title: 'time left to the player to move' },
          said),
        g.planned ? el('span', { class: 'badge', 'data-testid': 'corr-planned', title: 'you have a plan of conditional moves stored' }, 'plan stored') : null,
        el('a', { class: 'button', href: `#/game/${g.game_id}`, 'data-testid': 'corr-open' }, yours ? 'Play' : 'Open'));
    };
    const section = (title, testid, games, none) => el('section', { class: 'corr-section', 'data-testid': testid },
      el('h3', {}, `${title} (${games.length})`),
      games.length ? el('ul', { class: 'corr-list' }, games.map(row)) : el('p', { class: 'muted' }, none));
    fill(this.list,
      section('Your move', 'corr-mine', mine, 'Nothing waits for you.'),
      section('Their move', 'corr-theirs', theirs, 'No game waits for an opponent.'));
  }
}
