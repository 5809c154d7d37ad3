// The lobby: the form that posts a seek or a challenge with every setting, the open
// seeks and challenges (with their time control and age), the games being played (with
// move number and spectators), each rated player's rank beside their name, filters by
// size and speed, and the bots. Kept current by
// `watch_lobby` and a periodic `list_games`.

import { clockFields, clockFromForm, showClock, useDays } from './clockform.js';
import { SPEEDS, speed } from './speed.js';
import { describeClock, describeSettings, el, fill, icon, mayRate, randomSeed, resultText, showError, toast, who } from './ui.js';

const REFRESH_MS = 5000;

/** Remembers nigiri commitments seen before a game, so the game page can check them. */
export function rememberCommitment(c) {
  if (!c || !c.nigiri_commitment) return;
  const seen = JSON.parse(sessionStorage.getItem('tengen.commitments') || '[]');
  if (!seen.includes(c.nigiri_commitment)) {
    seen.push(c.nigiri_commitment);
    sessionStorage.setItem('tengen.commitments', JSON.stringify(seen.slice(-50)));
  }
}

/** Seconds, minutes, hours or days since `ms` (server time), in a few characters. */
export function age(ms, now) {
  const s = Math.max(0, Math.floor((now - ms) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86400)} d`;
}

/**
 * A player's rank beside their name (`from_rank`, `black_rank`, `white_rank`): nothing for
 * a player with no rated game, which the server leaves out; `14k?` while provisional.
 */
export function rankTag(rank) {
  if (!rank) return null;
  const provisional = rank.endsWith('?');
  return el('span', { class: `rank muted${provisional ? ' provisional' : ''}`, 'data-testid': 'rank', 'data-rank': rank, title: provisional ? 'provisional rank' : 'rank' }, ` [${rank}]`);
}

const SIZES = [['', 'all sizes'], ['9', '9×9'], ['13', '13×13'], ['19', '19×19'], ['other', 'other sizes']];
/** The speed filter: the server's classes, as automatch names them. */
const SPEED_FILTER = [['', 'all speeds'], ...SPEEDS.map((c) => [c.name, c.name])];

const GUESTS_UNRATED = 'Guests play unrated games only: sign up (or log in) to play a rated game.';

function sizeMatches(filter, size) {
  return !filter || (filter === 'other' ? ![9, 13, 19].includes(size) : Number(filter) === size);
}

export class LobbyView {
  constructor(conn, app) {
    this.conn = conn;
    this.app = app;
    this.seeks = new Map();
    this.games = new Map();
    this.bots = [];
    this.filter = { size: '', speed: '' };
    this.onMessage = (e) => this.frame(e.detail);
    this.onReady = () => this.refresh(true);
  }

  mount(container) {
    document.title = 'tengen · Go server';
    this.seekList = el('div', { 'data-testid': 'seeks' });
    this.gameList = el('div', { 'data-testid': 'games' });
    this.botList = el('div', { 'data-testid': 'bots' });
    const choose = (name, options, label) => el('select', {
      'data-testid': `filter-${name}`, 'aria-label': label,
      onchange: (e) => { this.filter[name] = e.target.value; this.drawLists(); },
    }, options.map(([v, t]) => el('option', { value: v }, t)));
    this.root = el('div', { class: 'lobby' },
      el('section', { class: 'card seeks-card', id: 'seeks' },
        el('div', { class: 'card-head' }, el('h2', {}, 'Open seeks and challenges'),
          el('div', { class: 'filters' }, choose('size', SIZES, 'Board size'), choose('speed', SPEED_FILTER, 'Speed'))),
        this.seekList),
      el('section', { class: 'card automatch-card' }, el('h2', {}, 'Automatch'), this.app.automatch.panel()),
      el('section', { class: 'card create' }, el('h2', {}, 'New game'), this.createForm()),
      el('section', { class: 'card' },
        el('div', { class: 'card-head' }, el('h2', {}, 'Games'),
          el('a', { href: '#/archive', 'data-testid': 'archive-link' }, 'Finished games'),
          el('button', { type: 'button', class: 'quiet', 'data-testid': 'refresh', onclick: () => this.refresh(false) }, 'Refresh')),
        this.gameList),
      el('section', { class: 'card' }, el('h2', {}, 'Bots'), this.botList));
    fill(container, this.root);
    this.conn.addEventListener('message', this.onMessage);
    this.conn.addEventListener('ready', this.onReady);
    this.timer = setInterval(() => this.refreshGames(), REFRESH_MS);
    this.drawLists();
    if (this.conn.ready) this.refresh(true);
  }

  unmount() {
    clearInterval(this.timer);
    this.conn.removeEventListener('message', this.onMessage);
    this.conn.removeEventListener('ready', this.onReady);
    if (this.conn.ready) this.conn.request({ type: 'unwatch_lobby' }).catch((err) => err.code && showError(err));
  }

  async refresh(watch) {
    try {
      const [games, seeks, bots] = await Promise.all([
        this.conn.request({ type: 'list_games' }),
        this.conn.request({ type: 'list_seeks' }),
        this.conn.request({ type: 'list_bots' }),
        watch ? this.conn.request({ type: 'watch_lobby' }) : null,
      ]);
      this.games = new Map(games.games.map((g) => [g.game_id, g]));
      this.seeks = new Map(seeks.challenges.map((c) => [c.challenge_id, c]));
      seeks.challenges.forEach(rememberCommitment);
      this.bots = bots.bots;
      this.drawLists();
    } catch (err) {
      showError(err);
    }
  }

  async refreshGames() {
    if (!this.conn.ready) return;
    try {
      const reply = await this.conn.request({ type: 'list_games' });
      this.games = new Map(reply.games.map((g) => [g.game_id, g]));
      this.drawGames();
      this.drawSeeks();
    } catch (err) {
      // A lost connection shows in the header; a refusal is shown in words.
      if (err.code) showError(err);
    }
  }

  frame(msg) {
    switch (msg.type) {
      case 'challenge_added':
        rememberCommitment(msg.challenge);
        this.seeks.set(msg.challenge.challenge_id, msg.challenge);
        this.drawSeeks();
        break;
      case 'challenge_removed':
        this.seeks.delete(msg.challenge_id);
        this.drawSeeks();
        break;
      case 'game_listed':
        this.games.set(msg.game.game_id, msg.game);
        this.drawGames();
        break;
      default:
    }
  }

  drawLists() {
    this.drawSeeks();
    this.drawGames();
    this.drawBots();
  }

  drawSeeks() {
    const me = this.conn.user;
    const now = Date.now() + this.conn.offset;
    const shown = [...this.seeks.values()]
      .filter((c) => sizeMatches(this.filter.size, c.settings.board_size) && (!this.filter.speed || speed(c.settings.clock) === this.filter.speed));
    const rows = shown.sort((a, b) => a.created_at - b.created_at).map((c) => {
      const mine = me && c.from.id === me.id;
      const forMe = me && c.to === me.id;
      const actions = [];
      if (mine) actions.push(el('button', { type: 'button', 'data-testid': 'cancel', onclick: () => this.act({ type: 'cancel', challenge_id: c.challenge_id }) }, 'Cancel'));
      else if (me && (!c.to || forMe)) {
        // A guest may not play a rated game: the server would refuse; say why instead.
        const barred = c.settings.rated && !mayRate(me);
        actions.push(el('button', {
          type: 'button', class: 'primary', 'data-testid': 'accept', onclick: () => this.accept(c),
          disabled: barred, title: barred ? GUESTS_UNRATED : null,
        }, 'Accept'));
        if (barred) actions.push(el('span', { class: 'muted small', 'data-testid': 'accept-barred' }, ' rated: accounts only'));
        if (forMe) actions.push(el('button', { type: 'button', 'data-testid': 'decline', onclick: () => this.act({ type: 'decline', challenge_id: c.challenge_id }) }, 'Decline'));
      }
      const from = c.to
        ? (forMe ? [who(c.from), rankTag(c.from_rank), ' challenges you'] : [who(c.from), rankTag(c.from_rank), ` → ${c.to}`])
        : [who(c.from), rankTag(c.from_rank)];
      const { clock } = c.settings;
      return el('tr', { 'data-testid': 'seek-row', 'data-from': c.from.id, 'data-challenge-id': c.challenge_id, 'data-speed': speed(clock), class: forMe ? 'highlight' : null },
        el('td', { 'data-testid': 'seek-who' }, from),
        el('td', { 'data-testid': 'seek-settings' }, describeSettings(c.settings, { clock: false })),
        // An untimed game is "untimed", said once (its class, long, goes without saying).
        el('td', { 'data-testid': 'seek-time' }, describeClock(clock), clock.system === 'none' ? null : el('span', { class: 'muted small' }, ` · ${speed(clock)}`)),
        el('td', { class: 'muted', 'data-testid': 'seek-age', title: 'posted' }, age(c.created_at, now)),
        el('td', { class: 'row-actions' }, actions));
    });
    const hidden = this.seeks.size - shown.length;
    fill(this.seekList, rows.length
      ? el('table', { class: 'stack-table' }, el('tbody', {}, rows))
      : el('p', { class: 'muted' }, me ? 'No open seeks. Post one below, or wait for someone to.' : 'No open seeks right now.'),
      hidden ? el('p', { class: 'muted small' }, `${hidden} more hidden by the filters.`) : null);
  }

  drawGames() {
    const me = this.conn.user;
    const order = { play: 0, handicap: 0, scoring: 1, scheduled: 2, ended: 3 };
    const rows = [...this.games.values()]
      .filter((g) => sizeMatches(this.filter.size, g.board_size))
      .sort((a, b) => (order[a.phase] ?? 4) - (order[b.phase] ?? 4) || b.move_number - a.move_number)
      .map((g) => {
        const playing = me && (g.black.id === me.id || g.white.id === me.id);
        const state = g.phase === 'ended' ? resultText(g.result) || g.result : g.phase === 'scoring' ? 'counting' : g.phase;
        return el('tr', { 'data-testid': 'game-row', 'data-game-id': g.game_id, 'data-phase': g.phase },
          el('td', { 'data-testid': 'black-player' }, el('span', { class: 'stone-icon stone-icon-black' }), ' ', who(g.black), rankTag(g.black_rank)),
          el('td', { 'data-testid': 'white-player' }, el('span', { class: 'stone-icon stone-icon-white' }), ' ', who(g.white), rankTag(g.white_rank)),
          el('td', {}, `${g.board_size}×${g.board_size}`),
          el('td', { title: 'moves played' }, `move ${g.move_number}`),
          el('td', {}, state),
          el('td', { 'data-testid': 'spectators' }, icon('eye', 'spectators'), ` ${g.spectators}`),
          el('td', { class: 'row-actions' }, el('a', { class: 'button', href: `#/game/${g.game_id}`, 'data-testid': 'open-game' },
            playing && g.phase !== 'ended' ? 'Play' : g.phase === 'ended' ? 'Review' : 'Watch')));
      });
    fill(this.gameList, rows.length
      ? el('table', { class: 'stack-table' }, el('thead', {}, el('tr', {}, ['Black', 'White', 'Size', 'Move', 'State', 'Watching', ''].map((h) => el('th', {}, h)))), el('tbody', {}, rows))
      : el('p', { class: 'muted' }, 'No games are being played right now.'));
  }

  drawBots() {
    const me = this.conn.user;
    const rows = this.bots.map((b) => {
      const o = b.offer;
      const list = (xs, what) => (xs && xs.length ? xs.join(', ') : `any ${what}`);
      const text = `${list(o.board_sizes, 'size')} · ${list(o.rulesets, 'rules')} · ${list(o.time_systems, 'time')} · handicap up to ${o.max_handicap}`;
      return el('tr', { 'data-testid': 'bot-row', 'data-bot': b.user.id },
        el('td', {}, who(b.user)), el('td', { class: 'muted' }, text),
        el('td', { class: 'row-actions' }, me ? el('button', { type: 'button', onclick: () => this.prefillBot(b) }, 'Challenge…') : null));
    });
    fill(this.botList, rows.length ? el('table', { class: 'stack-table' }, el('tbody', {}, rows)) : el('p', { class: 'muted' }, 'No bots are online.'));
  }

  async act(msg) {
    try {
      await this.conn.request(msg);
    } catch (err) {
      showError(err);
    }
  }

  async accept(c) {
    const msg = { type: 'accept', challenge_id: c.challenge_id };
    if (c.settings.color === 'nigiri') msg.nigiri_seed = randomSeed();
    try {
      const ack = await this.conn.request(msg);
      if (ack.game_id) location.hash = `#/game/${ack.game_id}`;
    } catch (err) {
      showError(err);
    }
  }

  prefillBot(b) {
    const f = this.form;
    f.elements.opponent.value = b.user.id;
    if (b.offer.board_sizes && b.offer.board_sizes.length) f.elements.board_size.value = String(b.offer.board_sizes[0]);
    if (b.offer.rulesets && b.offer.rulesets.length) f.elements.ruleset.value = b.offer.rulesets[0];
    if (b.offer.time_systems && b.offer.time_systems.length) f.elements.system.value = b.offer.time_systems[0];
    this.showClockFields();
    this.updateSubmit();
    f.scrollIntoView({ behavior: 'smooth' });
  }

  createForm() {
    if (!this.conn.user) {
      return el('div', { class: 'login-hint' },
        el('p', {}, 'Anyone can watch the games below. To play, log in.'),
        el('button', { type: 'button', class: 'primary', onclick: () => this.app.showLogin() }, 'Log in'));
    }
    const option = (value, label = value, selected = false) => el('option', { value, selected }, label);
    const sizes = [19, 13, 9].map((n) => option(n, `${n}×${n}`, n === 19));
    const others = [];
    for (let n = 2; n <= 25; n++) if (![9, 13, 19].includes(n)) others.push(option(n, `${n}×${n}`));
    const field = (label, control, cls = '') => el('label', { class: `field ${cls}` }, el('span', {}, label), control);
    const num = (name, value, attrs = {}) => el('input', { type: 'number', name, value, 'data-testid': `seek-${name}`, ...attrs });
    this.form = el('form', { class: 'create-form', 'data-testid': 'create-form', onsubmit: (e) => this.submit(e) },
      el('div', { class: 'fields' },
        field('Board', el('select', { name: 'board_size', 'data-testid': 'seek-size' }, sizes, el('optgroup', { label: 'Other sizes' }, others))),
        field('Rules', el('select', { name: 'ruleset', 'data-testid': 'seek-ruleset', onchange: () => this.showClockFields() },
          option('chinese', 'Chinese (area)', true), option('japanese', 'Japanese'), option('korean', 'Korean'), option('tromp-taylor', 'Tromp-Taylor'),
          el('optgroup', { label: 'Historical rules' }, option('ancient-chinese', 'Ancient Chinese')))),
        el('p', { class: 'field wide needs-ancient', 'data-testid': 'seek-ancient-note' },
          'As played in ancient China: four stones start on the corner star points, White moves first, and at the count each side gives back one point per living group.'),
        field('Ko rule', el('select', { name: 'ko_rule', 'data-testid': 'seek-ko' },
          option('', 'the rules’ own', true), option('situational', 'situational superko'), option('positional', 'positional superko'), option('simple', 'simple ko'))),
        field('Komi', num('komi', '', { step: 0.5, min: -500, max: 500, placeholder: 'rules’ default' })),
        field('Your colour', el('select', { name: 'color', 'data-testid': 'seek-color' },
          option('nigiri', 'Nigiri (fair draw)', true), option('black', 'Black'), option('white', 'White'))),
        field('Handicap', el('select', { name: 'handicap', 'data-testid': 'seek-handicap', onchange: () => this.showClockFields() },
          option(0, 'none', true), [2, 3, 4, 5, 6, 7, 8, 9].map((n) => option(n, `${n} stones`)))),
        field('Placement', el('select', { name: 'handicap_placement', 'data-testid': 'seek-placement' },
          option('fixed', 'star points', true), option('free', 'free (Black chooses)')), 'needs-handicap'),
        el('label', { class: 'field check wide', title: 'A move a day or so, whenever you have a minute: the clock counts days' },
          el('input', { type: 'checkbox', name: 'correspondence', 'data-testid': 'seek-correspondence', onchange: () => this.showClockFields() }),
          el('span', {}, 'Correspondence (clock in days)')),
        clockFields(field, 'seek', () => this.showClockFields()),
        // The correspondence game's own options (a "weekends off" box belongs here too).
        el('div', { class: 'field wide needs-correspondence corr-options', 'data-testid': 'seek-corr-options' },
          el('label', { class: 'field check', title: 'Whether a player may spend vacation days in this game (correspondence.md#vacation)' },
            el('input', { type: 'checkbox', name: 'vacation', checked: true, 'data-testid': 'seek-vacation' }), el('span', {}, 'Vacation allowed'))),
        field('Opponent', el('input', { type: 'text', name: 'opponent', placeholder: 'anyone (open seek) or a user id', 'data-testid': 'seek-opponent', oninput: () => this.updateSubmit(), autocomplete: 'off' }), 'wide'),
        el('label', { class: 'field check wide', title: mayRate(this.conn.user) ? 'The result changes both players’ ratings' : GUESTS_UNRATED },
          el('input', { type: 'checkbox', name: 'rated', 'data-testid': 'seek-rated', disabled: !mayRate(this.conn.user) }), el('span', {}, 'Rated'),
          mayRate(this.conn.user) ? null : el('span', { class: 'muted small' }, 'Guests play unrated games only.'))),
      el('button', { type: 'submit', class: 'primary', 'data-testid': 'seek-submit' }, 'Post seek'));
    this.showClockFields();
    return this.form;
  }

  showClockFields() {
    const f = this.form;
    if (!f) return;
    const correspondence = f.elements.correspondence.checked;
    useDays(f, correspondence);
    showClock(f);
    const shown = {
      'needs-correspondence': correspondence,
      // A correspondence game places its handicap stones fixed.
      'needs-handicap': Number(f.elements.handicap.value) >= 2 && !correspondence,
      'needs-ancient': f.elements.ruleset.value === 'ancient-chinese',
    };
    for (const [cls, on] of Object.entries(shown)) f.querySelectorAll(`.${cls}`).forEach((n) => { n.hidden = !on; });
  }

  updateSubmit() {
    const f = this.form;
    f.querySelector('[data-testid="seek-submit"]').textContent = f.elements.opponent.value.trim() ? 'Send challenge' : 'Post seek';
  }

  settingsFromForm() {
    const f = this.form.elements;
    const n = (name) => Number(f[name].value);
    const settings = { board_size: n('board_size'), ruleset: f.ruleset.value, color: f.color.value };
    if (f.ko_rule.value) settings.ko_rule = f.ko_rule.value;
    if (f.rated.checked && !f.rated.disabled) settings.rated = true;
    if (f.komi.value !== '') settings.komi = n('komi');
    if (n('handicap') >= 2) {
      settings.handicap = n('handicap');
      settings.handicap_placement = f.correspondence.checked ? 'fixed' : f.handicap_placement.value;
    }
    settings.clock = clockFromForm(this.form);
    if (f.correspondence.checked) {
      settings.correspondence = true;
      settings.vacation = f.vacation.checked;
    }
    return settings;
  }

  async submit(e) {
    e.preventDefault();
    const settings = this.settingsFromForm();
    const opponent = this.form.elements.opponent.value.trim();
    const msg = opponent ? { type: 'challenge', opponent, settings } : { type: 'seek', settings };
    try {
      const reply = await this.conn.request(msg);
      rememberCommitment(reply.challenge);
      this.seeks.set(reply.challenge.challenge_id, reply.challenge);
      this.drawSeeks();
      toast(opponent ? `Challenge sent to ${opponent}` : 'Seek posted: waiting for an opponent', 'ok');
    } catch (err) {
      showError(err);
    }
  }
}
