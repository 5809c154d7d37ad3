// One tournament (`#/tournament/<id>`, client-protocol/tournament.md): it watches the
// tournament's channel and keeps up with each event (a registration, a round paired or
// published, a board's result, the standings, an appeal), and reads the whole tournament
// again shortly after a round or a result changes (for its stage, the draw's revealed
// secrets and, for its directors, each proposed board's costs). Shown: the regulations;
// the players; for the logged-in player Register or Withdraw and their next game; the
// pairings by round, each board leading to its game; the standings with the tie-breaks
// in the regulations' order and the crosstable; appeals (filed by players, ruled by the
// chief referee); the draw's commitments and secrets; the downloads; and for the
// directors and the chief referee the console (director.js).

import { DirectorConsole } from './director.js';
import { TIE_BREAKS, half, systemName } from './tournaments.js';
import { describeSettings, el, fill, refusalLine, showError, toast } from './ui.js';

/** How long after an event the whole tournament is read again. */
const SETTLE_MS = 250;
const OUTCOMES = { black: 'Black won', white: 'White won', jigo: 'Jigo', both_lose: 'Both lost' };
const STATUS = { playing: 'playing', withdrawn: 'withdrew', disqualified: 'disqualified' };
const YOUR_STATUS = { withdrawn: 'You have withdrawn.', disqualified: 'You were disqualified.' };

/** Replaces the item of `items` whose `key` matches `item`'s, or adds it at the end. */
function upsert(items, item, key) {
  const i = items.findIndex((x) => key(x) === key(item));
  if (i >= 0) items[i] = item;
  else items.push(item);
}

export class TournamentView {
  constructor(conn, id) {
    this.conn = conn;
    this.id = id;
    this.t = null;
    this.onMessage = (e) => this.frame(e.detail);
    this.onReady = () => this.watch();
    this.formsKey = null;
  }

  mount(container) {
    document.title = 'Tournament · tengen';
    const section = (testid, title, ...rest) => el('section', { class: 'card', 'data-testid': testid }, el('h2', {}, title), ...rest);
    this.head = el('div', { class: 'card-head' });
    this.regulations = el('div', { 'data-testid': 't-regulations', class: 'small' });
    this.you = el('div', { 'data-testid': 't-you', class: 't-you' });
    this.forms = el('div', {});
    this.refusal = refusalLine('t-refusal');
    this.console = new DirectorConsole(this);
    this.players = el('div', {});
    this.rounds = el('div', {});
    this.standings = el('div', {});
    this.crosstable = el('div', {});
    this.appeals = el('div', {});
    this.draws = el('div', {});
    this.root = el('div', { class: 'tournament-page', 'data-testid': 'tournament', 'data-tournament-id': this.id },
      el('section', { class: 'card t-main' }, this.head, this.regulations, this.you, this.forms, this.refusal.line),
      this.console.element,
      section('t-pairings', 'Pairings', this.rounds),
      section('t-standings', 'Standings', this.standings),
      section('t-crosstable', 'Crosstable', this.crosstable),
      section('t-players', 'Players', this.players),
      section('t-appeals', 'Appeals', this.appeals),
      section('t-draws', 'The draw', el('p', { class: 'muted small' },
        'Each round\'s secret was fixed before anyone registered; its commitment (sha256 of the secret) is shown from the start and the secret once the round is published, so anyone can check the pairing and the nigiri.'),
      this.draws),
      section('t-downloads', 'Downloads', this.downloads()));
    fill(container, this.root);
    this.conn.addEventListener('message', this.onMessage);
    this.conn.addEventListener('ready', this.onReady);
    if (this.conn.ready) this.watch();
  }

  unmount() {
    clearTimeout(this.settle);
    this.conn.removeEventListener('message', this.onMessage);
    this.conn.removeEventListener('ready', this.onReady);
    if (this.conn.ready) this.conn.request({ type: 'unwatch_tournament', tournament_id: this.id }).catch((err) => err.code && showError(err));
  }

  /** Watches the channel and takes the whole tournament (again, after a reconnection). */
  async watch() {
    try {
      const reply = await this.conn.request({ type: 'watch_tournament', tournament_id: this.id });
      this.t = reply.tournament;
      this.draw();
    } catch (err) {
      if (!err.code) return;
      fill(this.head, el('h2', { 'data-testid': 't-missing', 'data-code': err.code }, err.message));
    }
  }

  /** Reads the whole tournament again a moment after the last event. */
  later() {
    clearTimeout(this.settle);
    this.settle = setTimeout(() => this.watch(), SETTLE_MS);
  }

  frame(msg) {
    if (msg.tournament_id !== this.id || !this.t) return;
    const t = this.t;
    switch (msg.type) {
      case 'registration_changed':
        upsert(t.players, msg.player, (p) => p.user.id);
        break;
      case 'round_paired':
      case 'round_started':
        upsert(t.rounds, msg.round, (r) => r.round);
        this.later();
        break;
      case 'board_result': {
        const board = t.rounds.find((r) => r.round === msg.round)?.boards.find((b) => b.board === msg.board);
        if (board) board.outcome = msg.outcome;
        this.later();
        break;
      }
      case 'standings_changed':
        t.standings = msg.standings;
        break;
      case 'appeal_changed':
        upsert(t.appeals, msg.appeal, (a) => a.appeal);
        break;
      default:
        return;
    }
    this.draw();
  }

  /** Sends a request about this tournament; a refusal is shown beside `line` and in a toast. */
  async act(msg, line = this.refusal) {
    line.clear();
    try {
      await this.conn.request({ ...msg, tournament_id: this.id });
      return true;
    } catch (err) {
      if (err.code) line.show(err);
      showError(err);
      return false;
    }
  }

  name(id) {
    const p = this.t.players.find((x) => x.user.id === id);
    return p ? p.user.name : id;
  }

  /** "withdrew" or "disqualified" beside a player no longer in the event. */
  gone(id) {
    const p = this.t.players.find((x) => x.user.id === id);
    return p && p.status !== 'playing' ? el('span', { class: 'muted small' }, ` (${STATUS[p.status]})`) : null;
  }

  /** The logged-in user's registration, if any. */
  mine() {
    const me = this.conn.user;
    return me ? this.t.players.find((p) => p.user.id === me.id) : undefined;
  }

  isDirector() {
    const me = this.conn.user;
    return !!me && this.t.directors.includes(me.id);
  }

  isChief() {
    const me = this.conn.user;
    return !!me && this.t.setup.chief_referee === me.id;
  }

  draw() {
    const t = this.t;
    document.title = `${t.setup.name} · tengen`;
    this.root.dataset.stage = t.stage;
    fill(this.head, el('h2', { 'data-testid': 't-title' }, t.setup.name),
      el('span', { class: 'badge', 'data-testid': 't-stage' }, t.stage),
      el('a', { href: '#/tournaments' }, 'All tournaments'));
    this.drawRegulations();
    this.drawYou();
    this.drawForms();
    this.console.draw(t);
    this.drawPlayers();
    this.drawRounds();
    this.drawStandings();
    this.drawAppeals();
    this.drawDraws();
  }

  drawRegulations() {
    const { setup } = this.t;
    const r = setup.regulations;
    const when = (ms) => (ms ? new Date(ms).toLocaleString() : 'now');
    const breaks = r.tie_breaks.map((k) => TIE_BREAKS.find(([x]) => x === k)?.[1] || k).join(', ') || 'none';
    const hc = r.handicap ? `handicap from the score difference less ${r.handicap.correction}, at most ${r.handicap.ceiling}, none from ${r.handicap.threshold}` : 'even games';
    const lines = [
      [`${systemName(r.system, true)}, ${r.rounds} rounds`, `colours ${r.colours === 'nigiri' ? 'by nigiri at the board' : 'by the draw'}`, hc],
      [`tie-breaks: ${breaks}`, `a bye scores ${half(r.bye)}, a missed round ${half(r.missed_round)}`, r.separate_clubs ? 'clubs kept apart' : null, r.separate_countries ? 'countries kept apart' : null],
      [describeSettings(setup.settings, { colour: false })],
      [`registration ${when(setup.registration_opens)} – ${when(setup.registration_closes)}`,
        setup.min_rank || setup.max_rank ? `ranks ${setup.min_rank || 'any'} to ${setup.max_rank || 'any'}` : null,
        setup.start_delay_ms ? `games start ${setup.start_delay_ms / 60000} min after publication` : null],
      [`directors: ${this.t.directors.join(', ')}`, setup.chief_referee ? `chief referee: ${setup.chief_referee}` : null,
        setup.referees?.length ? `board referees: ${setup.referees.join(', ')}` : null],
    ];
    fill(this.regulations, lines.map((parts) => el('p', {}, parts.filter(Boolean).join(' · '))));
  }

  /** The logged-in player's next game (or bye), as the latest round has it. */
  drawYou() {
    const me = this.conn.user;
    const mine = this.mine();
    if (!me || !mine) {
      fill(this.you);
      return;
    }
    const status = mine.status === 'playing' ? null : el('span', { 'data-testid': 't-your-status' }, ` ${YOUR_STATUS[mine.status]}`);
    const round = this.t.rounds[this.t.rounds.length - 1];
    let next;
    const board = round?.boards.find((b) => b.black === me.id || b.white === me.id);
    if (this.t.stage === 'finished') next = 'The tournament is over.';
    else if (!round) next = `Round ${mine.first_round} is not paired yet.`;
    else if (round.byes.includes(me.id)) next = `You have the bye in round ${round.round}.`;
    else if (!board) next = `You are not paired in round ${round.round}.`;
    else {
      const colour = board.black === me.id ? 'Black' : 'White';
      const opponent = this.name(board.black === me.id ? board.white : board.black);
      if (!round.published) next = `Round ${round.round} is proposed, not final: you would play ${opponent}.`;
      else if (board.outcome) {
        const more = round.round < this.t.setup.regulations.rounds ? ` Round ${round.round + 1} is not paired yet.` : '';
        next = `Round ${round.round} against ${opponent}: ${OUTCOMES[board.outcome]}.${more}`;
      }
      else {
        next = [`Round ${round.round}, board ${board.board}: you play ${opponent} with ${board.by_nigiri ? `${colour} (by nigiri)` : colour}. `,
          el('a', { class: 'button primary', href: `#/game/${board.game_id}`, 'data-testid': 't-your-game' }, 'Go to your game')];
      }
    }
    fill(this.you, el('p', { 'data-testid': 't-next' }, next, status));
  }

  /** Register (or Withdraw) and the appeal form, kept while nothing they depend on changes. */
  drawForms() {
    const me = this.conn.user;
    const mine = this.mine();
    const open = this.t.stage !== 'finished';
    const key = `${me?.id}|${mine?.status}|${open}|${this.t.setup.chief_referee}`;
    if (key === this.formsKey) return;
    this.formsKey = key;
    const parts = [];
    if (me && me.role !== 'guest' && !mine && open) parts.push(this.registerForm());
    if (mine && mine.status === 'playing' && open) {
      parts.push(el('button', {
        type: 'button', 'data-testid': 't-withdraw',
        onclick: () => this.act({ type: 'withdraw' }).then((ok) => ok && toast('You have withdrawn: your games stand', 'ok')),
      }, 'Withdraw'));
    }
    if (!me) parts.push(el('p', { class: 'muted small' }, 'Log in to register.'));
    fill(this.forms, parts);
  }

  registerForm() {
    const input = (name, placeholder, size) => el('input', { type: 'text', name, placeholder, maxlength: 100, size, 'aria-label': placeholder, 'data-testid': `t-reg-${name}` });
    const form = el('form', {
      class: 'row wrap', 'data-testid': 't-register-form',
      onsubmit: async (e) => {
        e.preventDefault();
        const f = form.elements;
        const msg = { type: 'register', club: f.club.value.trim(), country: f.country.value.trim() };
        if (f.rank.value.trim()) msg.rank = f.rank.value.trim();
        if (await this.act(msg)) toast('You are registered', 'ok');
      },
    }, input('rank', 'rank, e.g. 2k (else your rating\'s)', 8), input('club', 'club', 10), input('country', 'country', 6),
    el('button', { type: 'submit', class: 'primary', 'data-testid': 't-register' }, 'Register'));
    return form;
  }

  drawPlayers() {
    const rows = this.t.players.map((p) => el('tr', { 'data-testid': 't-player', 'data-user': p.user.id, 'data-status': p.status, class: p.user.id === this.conn.user?.id ? 'highlight' : null },
      el('td', {}, el('a', { href: `#/user/${encodeURIComponent(p.user.id)}` }, p.user.name)),
      el('td', { 'data-testid': 't-player-rank' }, p.rank),
      el('td', {}, p.club || '—'),
      el('td', {}, p.country || '—'),
      el('td', { class: p.status === 'playing' ? null : 'warn' }, STATUS[p.status] || p.status,
        p.first_round > 1 ? el('span', { class: 'muted small' }, ` from round ${p.first_round}`) : null)));
    fill(this.players, rows.length
      ? el('table', { class: 'stack-table' }, el('thead', {}, el('tr', {}, ['Player', 'Rank', 'Club', 'Country', 'Status'].map((h) => el('th', {}, h)))), el('tbody', {}, rows))
      : el('p', { class: 'muted' }, 'Nobody has registered yet.'));
  }

  drawRounds() {
    const rounds = [...this.t.rounds].reverse().map((r) => el('div', { class: 't-round', 'data-testid': 't-round', 'data-round': r.round, 'data-published': String(r.published) },
      el('h3', {}, `Round ${r.round}`, r.published
        ? el('span', { class: 'muted small' }, ` · published${r.start_at ? `, games from ${new Date(this.conn.localTime(r.start_at)).toLocaleTimeString()}` : ''}`)
        : el('span', { class: 'warn small' }, ' · proposed, not final')),
      el('table', { class: 'stack-table' }, el('tbody', {}, r.boards.map((b) => this.boardRow(r, b)))),
      r.byes.length ? el('p', { class: 'small', 'data-testid': 't-byes' }, `Bye: ${r.byes.map((p) => this.name(p)).join(', ')}`) : null));
    fill(this.rounds, rounds.length ? rounds : el('p', { class: 'muted' }, 'No round is paired yet.'));
  }

  boardRow(r, b) {
    const me = this.conn.user?.id;
    const result = b.outcome ? OUTCOMES[b.outcome] : r.published ? 'playing' : '';
    return el('tr', { 'data-testid': 't-board', 'data-round': r.round, 'data-board': b.board, 'data-black': b.black, 'data-white': b.white, 'data-outcome': b.outcome || '', class: me && (b.black === me || b.white === me) ? 'highlight' : null },
      el('td', { class: 'muted' }, `#${b.board}`),
      el('td', {}, el('span', { class: 'stone-icon stone-icon-black' }), ' ', this.name(b.black)),
      el('td', {}, el('span', { class: 'stone-icon stone-icon-white' }), ' ', this.name(b.white)),
      el('td', { class: 'muted small' }, [b.handicap ? `${b.handicap} stones` : 'even', b.by_nigiri ? (r.published ? 'nigiri drawn' : 'nigiri') : null].filter(Boolean).join(' · ')),
      el('td', { 'data-testid': 't-board-result' }, result),
      el('td', { class: 'row-actions' }, b.game_id
        ? el('a', { class: 'button', href: `#/game/${b.game_id}`, 'data-testid': 't-board-game' }, b.outcome ? 'Review' : 'Watch')
        : null));
  }

  drawStandings() {
    const { standings, setup } = this.t;
    const breaks = setup.regulations.tie_breaks.filter((k) => k !== 'direct');
    const label = (k) => TIE_BREAKS.find(([x]) => x === k)?.[1] || k;
    const scoreName = setup.regulations.system.kind === 'mc_mahon' ? 'MMS' : 'Points';
    const rows = standings.map((s) => el('tr', { 'data-testid': 't-standing', 'data-user': s.player, 'data-place': s.place, 'data-score': s.score },
      el('td', {}, String(s.place)),
      el('td', {}, this.name(s.player), this.gone(s.player)),
      el('td', { 'data-testid': 't-score' }, half(s.score)),
      breaks.map((k) => el('td', { 'data-tie-break': k }, half(s[k])))));
    fill(this.standings, rows.length
      ? el('table', {}, el('thead', {}, el('tr', {}, ['#', 'Player', scoreName, ...breaks.map(label)].map((h) => el('th', {}, h)))), el('tbody', {}, rows))
      : el('p', { class: 'muted' }, 'No standings yet.'));
    const rounds = standings[0]?.rounds.length || 0;
    const cross = standings.map((s) => el('tr', { 'data-testid': 't-cross', 'data-user': s.player },
      el('td', {}, String(s.place)),
      el('td', {}, this.name(s.player)),
      s.rounds.map((cell, i) => el('td', { class: 't-cell', 'data-round': i + 1 }, cell)),
      el('td', {}, half(s.score))));
    fill(this.crosstable, rounds
      ? el('div', { class: 'scroll' }, el('table', { class: 'crosstable' },
        el('thead', {}, el('tr', {}, ['#', 'Player', ...Array.from({ length: rounds }, (_, i) => `R${i + 1}`), scoreName].map((h) => el('th', {}, h)))),
        el('tbody', {}, cross)),
      el('p', { class: 'muted small' }, 'Each round: the opponent\'s place, + won, - lost, = jigo, ? playing, then the colour and handicap; 0+, 0=, 0- a round without a game.'))
      : el('p', { class: 'muted' }, 'No round is published yet.'));
  }

  drawAppeals() {
    const chief = this.t.setup.chief_referee;
    const items = this.t.appeals.map((a) => el('li', { 'data-testid': 't-appeal', 'data-appeal': a.appeal, 'data-ruled': String(!!a.ruling) },
      el('b', {}, `#${a.appeal} `), `${this.name(a.from)} (${new Date(a.at).toLocaleString()}): ${a.message}`,
      a.ruling ? el('p', { class: 't-ruling', 'data-testid': 't-ruling' }, `Ruling: ${a.ruling}`)
        : this.isChief() ? this.ruleForm(a.appeal)
          : el('p', { class: 'muted small' }, 'Awaiting the chief referee\'s ruling.')));
    const mine = this.mine();
    const form = mine && chief && this.t.stage !== 'finished'
      ? (this.appealForm ??= this.lineForm('t-appeal', 'Appeal to the chief referee: what happened?', 'Appeal', (message) => this.act({ type: 'appeal', message })))
      : null;
    fill(this.appeals,
      chief ? null : el('p', { class: 'muted small' }, 'This tournament has no chief referee to appeal to.'),
      items.length ? el('ul', { class: 'referee-list' }, items) : el('p', { class: 'muted' }, 'No appeals.'),
      form);
  }

  /** The chief referee's form for a ruling on appeal `n`, kept across events. */
  ruleForm(n) {
    this.ruleForms ??= new Map();
    if (!this.ruleForms.has(n)) {
      this.ruleForms.set(n, this.lineForm('t-rule', 'Your ruling', 'Rule', (ruling) => this.act({ type: 'rule_appeal', appeal: n, ruling })));
    }
    return this.ruleForms.get(n);
  }

  /** A one-line form; `submit(text)` resolves truthy when the server took it. */
  lineForm(testid, placeholder, button, submit) {
    const input = el('input', { type: 'text', maxlength: 500, placeholder, 'aria-label': placeholder, 'data-testid': `${testid}-input` });
    return el('form', {
      class: 'chat-form',
      onsubmit: async (e) => {
        e.preventDefault();
        const text = input.value.trim();
        if (text && await submit(text)) input.value = '';
      },
    }, input, el('button', { type: 'submit', 'data-testid': `${testid}-send` }, button));
  }

  drawDraws() {
    fill(this.draws, el('table', { class: 'stack-table draws' }, el('tbody', {}, this.t.draws.map((d) => el('tr', { 'data-testid': 't-draw', 'data-round': d.round, 'data-revealed': String(!!d.secret) },
      el('td', {}, `Round ${d.round}`),
      el('td', { class: 'hash' }, el('span', { class: 'muted small' }, 'commitment '), el('code', { title: d.commitment }, d.commitment)),
      el('td', { class: 'hash' }, d.secret ? [el('span', { class: 'muted small' }, 'secret '), el('code', { 'data-testid': 't-secret', title: d.secret }, d.secret)]
        : el('span', { class: 'muted small' }, 'secret shown once the round is published')))))));
  }

  /** The files a federation exchanges (EGF results table, OpenGotha, every game as SGF). */
  downloads() {
    const base = `/api/tournaments/${encodeURIComponent(this.id)}/export`;
    const link = (path, label, testid) => el('li', {}, el('a', { href: `${base}/${path}`, download: '', 'data-testid': testid }, label));
    return el('ul', { class: 'downloads' },
      link('egf', 'EGF results table (.h9)', 't-download-egf'),
      link('opengotha', 'OpenGotha tournament (XML)', 't-download-opengotha'),
      link('sgf', 'Every game as SGF (ZIP)', 't-download-sgf'));
  }
}
