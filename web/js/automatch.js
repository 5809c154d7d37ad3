// Automatch (client-protocol/lobby.md#automatch): the request's settings, the button that
// sends it, and the waiting indicator until `game_started` arrives or the player cancels.
// The request lives on the server only while one of our connections is open, so the page
// sends it again after a reconnect; the state belongs to the app, not to the lobby view,
// because leaving the lobby does not withdraw it.

import { SPEEDS } from './speed.js';
import { el, fill, mayRate, showError } from './ui.js';

const SIZES = [9, 13, 19];

/** The rating gap the server accepts after `ms` of waiting: 200, +100 every 10 s, at most 1000. */
export function ratingWindow(ms) {
  return Math.min(1000, 200 + 100 * Math.floor(ms / 10000));
}

export class Automatch {
  constructor(conn) {
    this.conn = conn;
    /** The request waiting on the server, and since when (local ms); null when none. */
    this.waiting = null;
    this.choice = { sizes: [9], speeds: ['blitz'], rated: true, handicap: false };
    this.panels = new Set();
    this.ticker = null;
    /** Games started for us so far: one may come just before the request's `ack`. */
    this.started = 0;
    conn.addEventListener('message', (e) => {
      if (e.detail.type !== 'game_started') return;
      this.started += 1;
      if (this.waiting) this.stop();
    });
    conn.addEventListener('ready', () => this.rejoin());
  }

  async start() {
    const request = { type: 'automatch', ...this.choice, rated: this.choice.rated && mayRate(this.conn.user) };
    const before = this.started;
    try {
      await this.conn.request(request);
      if (this.started !== before) return;
      this.waiting = { request, since: Date.now(), user: this.conn.user.id };
      this.ticker ??= setInterval(() => this.draw(), 1000);
    } catch (err) {
      showError(err);
    }
    this.draw();
  }

  async cancel() {
    try {
      await this.conn.request({ type: 'automatch_cancel' });
    } catch (err) {
      // `not_found`: it was paired or dropped meanwhile; either way nothing waits.
      if (err.code !== 'not_found') { showError(err); return; }
    }
    this.stop();
  }

  stop() {
    this.waiting = null;
    clearInterval(this.ticker);
    this.ticker = null;
    this.draw();
  }

  /** After a reconnect the server has forgotten the request: ask again, as the same user. */
  async rejoin() {
    if (!this.waiting) return;
    if (!this.conn.user || this.conn.user.id !== this.waiting.user) { this.stop(); return; }
    try {
      await this.conn.request(this.waiting.request);
    } catch (err) {
      showError(err);
      this.stop();
    }
  }

  /** A panel for a view; it stays current while it is in the page. */
  panel() {
    const box = el('div', { class: 'automatch', 'data-testid': 'automatch' });
    this.panels.add(box);
    this.drawPanel(box);
    return box;
  }

  draw() {
    for (const box of this.panels) {
      if (box.isConnected) this.drawPanel(box);
      else this.panels.delete(box);
    }
  }

  drawPanel(box) {
    if (!this.conn.user) {
      fill(box, el('p', { class: 'muted' }, 'Log in or play as a guest to be matched with an opponent.'));
      return;
    }
    if (this.waiting) {
      const waited = Date.now() - this.waiting.since;
      const r = this.waiting.request;
      fill(box,
        el('div', { class: 'automatch-waiting', role: 'status', 'data-testid': 'automatch-waiting' },
          el('span', { class: 'spinner', 'aria-hidden': 'true' }),
          el('span', {}, `Looking for an opponent… ${Math.floor(waited / 1000)} s`),
          el('span', { class: 'muted small' }, ` · ${r.sizes.map((n) => `${n}×${n}`).join(', ')} · ${r.speeds.join(', ')} · ${r.rated ? 'rated' : 'unrated'} · rating gap up to ${ratingWindow(waited)}`)),
        el('button', { type: 'button', 'data-testid': 'automatch-cancel', onclick: () => this.cancel() }, 'Cancel'));
      return;
    }
    const check = (label, checked, onchange, attrs = {}) => el('label', { class: 'check' },
      el('input', { type: 'checkbox', checked, onchange: (e) => onchange(e.target.checked), ...attrs }), ` ${label}`);
    const toggle = (list, value) => (on) => {
      const next = this.choice[list].filter((v) => v !== value);
      if (on) next.push(value);
      this.choice[list] = next;
      this.drawPanel(box);
    };
    const rated = mayRate(this.conn.user);
    const empty = !this.choice.sizes.length || !this.choice.speeds.length;
    fill(box,
      el('div', { class: 'automatch-choice' },
        el('fieldset', {}, el('legend', {}, 'Board'),
          SIZES.map((n) => check(`${n}×${n}`, this.choice.sizes.includes(n), toggle('sizes', n), { 'data-testid': `automatch-size-${n}` }))),
        el('fieldset', {}, el('legend', {}, 'Speed'),
          SPEEDS.map((c) => check(`${c.name} (${c.game})`, this.choice.speeds.includes(c.name), toggle('speeds', c.name), { 'data-testid': `automatch-speed-${c.name}` }))),
        el('fieldset', {}, el('legend', {}, 'Game'),
          check('rated', rated && this.choice.rated, (on) => { this.choice.rated = on; }, { 'data-testid': 'automatch-rated', disabled: !rated }),
          check('handicap from the rank difference', this.choice.handicap, (on) => { this.choice.handicap = on; }, { 'data-testid': 'automatch-handicap' }),
          rated ? null : el('p', { class: 'muted small' }, 'Guests play unrated games only.'))),
      el('button', { type: 'button', class: 'primary', 'data-testid': 'automatch-start', disabled: empty, onclick: () => this.start() }, 'Automatch'),
      empty ? el('span', { class: 'muted small' }, ' Choose at least one size and one speed.') : null);
  }
}
