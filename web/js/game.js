// One game, played, watched or reviewed: builds its state from the `snapshot`, applies
// every numbered event in `seq` order, takes a fresh snapshot (and with it the server's
// clock) after a reconnect, and draws the board, clocks, captures, actions, the count,
// the move list for review (each move's clocks and time used), both chats, the referee
// box (its log of referee events, a call, a report, a referee's actions), and once the
// game is over a rematch: offered to the opponent as a challenge with the same settings
// and the colours swapped, shown to them here with Accept and Decline. Pass, like Resign,
// takes a second press on touch screens and whenever it would end play. The side panel
// is a set of fixed slots updated in place, so an event never wipes a half-typed chat
// line or the focus.

import { analysisLink } from './analysis.js';
import { chainAt, parseVertex, vertexName } from './coords.js';
import { countScore } from './count.js';
import { MoveTimes, claimWaitMs, resting, runningTime, showClock } from './clock.js';
import { Goban } from './goban.js';
import { prefs } from './prefs.js';
import { REFEREE_EVENTS, RefereeBox } from './referee.js';
import { Replay, setStones } from './replay.js';
import { ByoyomiCount, stoneSound } from './sound.js';
import { chineseText, colourName, describeSettings, el, fill, formatMs, icon, other, randomSeed, resultText, showError, toast, who } from './ui.js';

const STONE = { black: 'X', white: 'O' };
const TITLE_MARK = '● ';

/** A time spent, in a few characters: "3.2 s", "1:05". */
function spent(ms) {
  return ms < 10000 ? `${formatMs(ms)} s` : formatMs(ms);
}

/** A moment of the coming days, for a clock's hint: "Sat 00:00". */
function shortTime(ms) {
  return new Date(ms).toLocaleString([], { weekday: 'short', hour: '2-digit', minute: '2-digit' });
}

/** The passes in a row that end a list of moves. */
function trailingPasses(moves) {
  let n = 0;
  while (n < moves.length && moves[moves.length - 1 - n].vertex === 'pass') n += 1;
  return n;
}

export class GameView {
  constructor(conn, gameId) {
    this.conn = conn;
    this.id = gameId;
    this.s = null;
    this.goban = null;
    this.busy = false;
    this.selected = new Set();
    this.chat = [];
    this.kibitz = [];
    /** Referee events (warnings, rulings, calls…), oldest first, for the referee log. */
    this.notes = [];
    this.referee = new RefereeBox(this);
    /** The move shown in review (a number of moves), or null for the live position. */
    this.cursor = null;
    /** The point a first tap chose, waiting for the confirming second tap. */
    this.pending = null;
    /** The button (`pass`, `resign`) a first press armed, waiting for the second. */
    this.armed = null;
    /** Each move's clocks and time used, from the record and the live events. */
    this.times = null;
    /** The numbers of the moves played from a plan of conditional moves. */
    this.planned = new Set();
    /** A rematch: offered to us (a challenge), offered by us, or declined by them. */
    this.rematch = { offer: null, sent: null, declined: false };
    /** When the page lost the server (Date.now()): clocks stand still until a snapshot. */
    this.frozenAt = null;
    this.estimate = null;
    this.count = new ByoyomiCount();
    /**
     * A claim's moment as the server gave it (`retry_after_ms` of a refused claim, local
     * ms), which outranks this page's own count; and a refusal without one (a message),
     * which stands until the opponent comes or goes. Both are forgotten when either does.
     */
    this.claimAt = null;
    this.claimRefused = null;
    this.onMessage = (e) => this.frame(e.detail);
    this.onReady = () => this.join();
    this.onStatus = (e) => this.connection(e.detail.status);
    this.onKey = (e) => this.key(e);
  }

  mount(container) {
    this.root = el('section', { class: 'game', 'data-testid': 'game', 'data-game-id': this.id });
    this.boardArea = el('div', { class: 'board-area' });
    this.slots = {};
    for (const name of ['players', 'status', 'result', 'estimate', 'actions', 'review', 'chat', 'referee', 'options', 'meta']) {
      this.slots[name] = el('div', { class: `slot slot-${name}` });
    }
    this.panel = el('aside', { class: 'panel' }, Object.values(this.slots));
    this.root.append(this.boardArea, this.panel);
    fill(container, this.root);
    this.boardArea.append(el('p', { class: 'muted loading' }, 'Loading the game…'));
    this.conn.addEventListener('message', this.onMessage);
    this.conn.addEventListener('ready', this.onReady);
    this.conn.addEventListener('status', this.onStatus);
    document.addEventListener('keydown', this.onKey);
    this.ticker = setInterval(() => this.tick(), 100);
    if (this.conn.ready) this.join();
    else this.connection(this.conn.status);
  }

  unmount() {
    clearInterval(this.ticker);
    clearTimeout(this.armTimer);
    this.conn.removeEventListener('message', this.onMessage);
    this.conn.removeEventListener('ready', this.onReady);
    this.conn.removeEventListener('status', this.onStatus);
    document.removeEventListener('keydown', this.onKey);
    if (this.conn.ready) this.conn.request({ type: 'leave', game_id: this.id }).catch((err) => err.code && showError(err));
  }

  /** Joins with a snapshot: the first time, and after every reconnect, for its clock. */
  async join() {
    try {
      await this.conn.request({ type: 'join', game_id: this.id });
    } catch (err) {
      showError(err);
      if (!this.s) fill(this.boardArea, el('p', { class: 'muted' }, `This game cannot be shown: ${err.message}`), el('p', {}, el('a', { href: '#/' }, 'Back to the lobby')));
    }
  }

  /** Offline, the clocks stop and grey out: the page cannot know what the server counts. */
  connection(status) {
    if (status === 'online') return;
    this.frozenAt ??= Date.now();
    this.root.classList.add('offline');
  }

  frame(msg) {
    if (msg.type === 'challenge_added' || msg.type === 'challenge_removed') return this.challengeNews(msg);
    if (msg.game_id !== this.id) return;
    if (msg.type === 'snapshot') return this.load(msg);
    if (msg.type === 'kibitz') {
      this.kibitz.push(msg);
      return this.drawChat();
    }
    if (typeof msg.seq !== 'number' || msg.type === 'ack' || !this.s) return;
    if (msg.seq <= this.s.seq) return;
    if (msg.seq !== this.s.seq + 1) {
      // A gap: ask for what is missing rather than draw a wrong position.
      this.conn.request({ type: 'join', game_id: this.id, since_seq: this.s.seq }).catch(showError);
      return;
    }
    this.apply(msg);
    this.s.seq = msg.seq;
    if (REFEREE_EVENTS.has(msg.type)) this.note(msg);
    if (msg.type === 'chat') this.drawChat();
    else this.draw();
  }

  load(snap) {
    // The players' latest chat lines come with the snapshot, in the shape of chat events.
    this.chat = (snap.chat || []).map((line) => ({ type: 'chat', ...line }));
    const size = snap.settings.board_size;
    const old = this.s;
    const s = {
      seq: snap.seq,
      settings: snap.settings,
      size,
      black: snap.black,
      white: snap.white,
      phase: snap.phase,
      board: snap.board.map((row) => Array.from(row)),
      handicap: snap.handicap_stones || [],
      moves: snap.moves.slice(),
      prisoners: { ...snap.prisoners },
      toMove: snap.to_move,
      clock: snap.clock || null,
      clockAt: Math.min(Date.now(), this.conn.localTime(snap.server_time)),
      rest: this.restOf(snap.clock),
      clockStopped: null,
      dead: new Set(),
      accepted: new Set(snap.accepted),
      disputes: snap.disputes,
      marksSeq: snap.marks_seq || null,
      paused: !!snap.paused,
      refereePaused: !!snap.referee_paused,
      sealedBy: snap.sealed_by || null,
      pauseBy: snap.pause_requested_by || null,
      resumeBy: snap.resume_requested_by || null,
      result: snap.result || null,
      score: snap.score || null,
      nigiri: snap.nigiri || null,
      you: snap.you || null,
      // Passes in a row at the end: one more ends play.
      passes: trailingPasses(snap.moves),
      last: null,
      // Since when each player is away, as far as this page knows (for `claim_win`):
      // from when it saw them go, or from its first snapshot.
      away: {
        black: snap.black.online ? null : (old?.away.black ?? Date.now()),
        white: snap.white.online ? null : (old?.away.white ?? Date.now()),
      },
    };
    const lastMove = s.moves[s.moves.length - 1];
    if (lastMove) s.last = parseVertex(lastMove.vertex, size);
    this.s = s;
    this.times ??= new MoveTimes(s.settings.clock);
    this.replay = new Replay(size, s.handicap, s.settings.ruleset);
    if (this.cursor !== null && this.cursor >= s.moves.length) this.cursor = null;
    this.frozenAt = null;
    this.forgetClaim();
    this.root.classList.remove('offline');
    this.setDead(snap.score ? snap.score.dead : snap.dead);
    if (!this.goban || this.goban.size !== size) {
      this.goban = new Goban(size, (x, y) => this.click(x, y));
      fill(this.boardArea, this.goban.root, this.navBar());
    }
    this.title = `${snap.black.user.name} vs ${snap.white.user.name} · tengen`;
    // The snapshot's chat replaces what the logs show; the chat form (and a draft in it)
    // stays.
    for (const log of [this.chatLog, this.kibitzLog]) log?.replaceChildren();
    if (s.nigiri) this.verifyNigiri();
    this.loadRecord(snap.seq);
    if (s.phase === 'ended' && s.you) this.findRematch();
    this.draw();
  }

  /** A referee event: into the log, and a notice for the players it concerns. */
  note(ev) {
    if (this.notes.some((n) => n.seq === ev.seq)) return;
    this.notes.push(ev);
    this.notes.sort((a, b) => a.seq - b.seq);
    const s = this.s;
    if (s.you && ev.type === 'warned') {
      toast(ev.color === s.you ? `The referee warned you: ${ev.reason}` : `The referee warned your opponent: ${ev.reason}`, 'error');
    } else if (s.you && ['ruled', 'result_changed', 'referee_paused'].includes(ev.type)) {
      toast(`The referee: ${ev.reason}`, 'info');
    }
  }

  /**
   * The referee events before the snapshot and the moves' clocks, from the game's record
   * (which a tournament game keeps until it ends: its log then starts with what this page
   * saw, and review knows the clocks of the moves it saw played).
   */
  async loadRecord(upTo) {
    if (this.notesFor === this.id) return;
    // A tournament game's record is published when it ends (its spectators see moves
    // late): asked for before, the server refuses with 403.
    if (this.s.settings.fair_play === 'tournament' && this.s.phase !== 'ended') return;
    this.notesFor = this.id;
    try {
      const res = await fetch(`/api/games/${encodeURIComponent(this.id)}`, { cache: 'no-store' });
      if (!res.ok) return;
      const record = await res.json();
      const past = new MoveTimes(this.s.settings.clock);
      for (const ev of record.events || []) {
        past.add(ev);
        // A move the server played from its player's plan (correspondence.md#plans).
        if (ev.type === 'move_played' && ev.planned) this.planned.add(ev.move_number);
        if (ev.seq <= upTo && REFEREE_EVENTS.has(ev.type) && !this.notes.some((n) => n.seq === ev.seq)) this.notes.push(ev);
      }
      this.times.merge(past);
      this.notes.sort((a, b) => a.seq - b.seq);
      this.draw();
    } catch {
      // The log is a convenience: the game plays without it.
    }
  }

  setDead(vertices) {
    const s = this.s;
    s.dead = new Set();
    for (const v of vertices || []) {
      const p = parseVertex(v, s.size);
      if (!p) continue;
      const chain = chainAt(s.board, p.x, p.y);
      for (const [x, y] of chain.length ? chain : [[p.x, p.y]]) s.dead.add(`${x},${y}`);
    }
  }

  /** Applies one numbered event (see client-protocol/game.md#game-events). */
  apply(ev) {
    const s = this.s;
    this.times.add(ev);
    switch (ev.type) {
      case 'move_played': {
        const p = parseVertex(ev.vertex, s.size);
        if (p) {
          s.board[p.y][p.x] = STONE[ev.color];
          for (const c of ev.captures) {
            const q = parseVertex(c, s.size);
            if (q) s.board[q.y][q.x] = '.';
          }
          s.prisoners[ev.color] += ev.captures.length;
          stoneSound();
        }
        s.last = p;
        s.moves.push({ color: ev.color, vertex: ev.vertex });
        if (ev.planned) this.planned.add(s.moves.length);
        s.toMove = other(ev.color);
        s.pauseBy = null;
        if (ev.sealed) s.sealedBy = null;
        s.passes = ev.vertex === 'pass' ? s.passes + 1 : 0;
        this.pending = null;
        this.armed = null;
        this.estimate = null;
        this.clockFrom(ev.clock, ev.at);
        if (ev.vertex === 'pass' && s.you && ev.color !== s.you) toast(`${this.nameOf(ev.color)} passed`, 'info');
        break;
      }
      case 'handicap_placed':
        for (const v of ev.vertices) {
          const p = parseVertex(v, s.size);
          if (p) s.board[p.y][p.x] = 'X';
        }
        s.handicap = ev.vertices;
        this.replay = new Replay(s.size, s.handicap, s.settings.ruleset);
        this.selected.clear();
        s.phase = 'play';
        s.toMove = 'white';
        this.clockFrom(ev.clock);
        break;
      case 'game_began':
        s.phase = s.settings.handicap >= 2 && s.settings.handicap_placement === 'free' ? 'handicap' : 'play';
        this.clockFrom(ev.clock);
        this.playGoesOn();
        break;
      case 'pause_requested':
        s.pauseBy = ev.by;
        if (ev.by !== s.you && s.you) toast(`${this.nameOf(ev.by)} asks to pause the game`, 'info');
        break;
      case 'paused':
        s.paused = true;
        s.pauseBy = null;
        this.clockFrom(ev.clock);
        break;
      case 'resume_requested':
        s.resumeBy = ev.by;
        if (ev.by !== s.you && s.you) toast(`${this.nameOf(ev.by)} asks to resume the game`, 'info');
        break;
      case 'resumed':
        s.paused = false;
        s.resumeBy = null;
        this.clockFrom(ev.clock);
        this.playGoesOn();
        break;
      case 'move_sealed':
        s.sealedBy = ev.by;
        s.pauseBy = null;
        this.clockFrom(ev.clock);
        break;
      case 'scoring_started':
        s.phase = 'scoring';
        s.dead = new Set();
        s.accepted = new Set();
        s.disputes = ev.disputes;
        s.marksSeq = ev.seq;
        this.stopClock();
        break;
      case 'dead_marked':
        this.setDead(ev.marks);
        s.accepted = new Set();
        s.marksSeq = ev.seq;
        break;
      case 'score_accepted':
        s.accepted.add(ev.by);
        break;
      case 'play_resumed':
        s.phase = 'play';
        s.toMove = ev.to_move;
        s.passes = 0;
        s.dead = new Set();
        s.accepted = new Set();
        s.disputes += 1;
        s.marksSeq = null;
        if (ev.clock) this.clockFrom(ev.clock);
        this.playGoesOn();
        toast(ev.by ? `${this.nameOf(ev.by)} rejected the marks: play goes on`
                    : 'Time for marking ran out without agreement: play goes on', 'info');
        break;
      case 'game_ended':
        s.phase = 'ended';
        s.result = ev.result;
        s.score = ev.score || null;
        if (ev.score) this.setDead(ev.score.dead);
        // The clocks as the end stopped them (timed games).
        if (ev.clock) this.clockFrom(ev.clock);
        this.stopClock();
        break;
      case 'chat':
        this.chat.push(ev);
        break;
      case 'warned':
        s[ev.color].warnings = ev.warnings;
        break;
      case 'clock_adjusted':
        this.clockFrom(ev.clock);
        break;
      case 'referee_paused':
        s.refereePaused = true;
        this.clockFrom(ev.clock);
        break;
      case 'referee_resumed':
        s.refereePaused = false;
        this.clockFrom(ev.clock);
        this.playGoesOn();
        break;
      case 'result_changed':
        s.result = ev.result;
        s.score = ev.score || null;
        if (ev.score) this.setDead(ev.score.dead);
        break;
      case 'presence':
        s[ev.color].online = ev.online;
        s.away[ev.color] = ev.online ? null : Date.now();
        this.forgetClaim();
        // Both clocks as they stood (timed games).
        if (ev.clock) this.clockFrom(ev.clock);
        // A clock that waits for its player (the game's first, or after a restart) starts
        // when that player arrives (client-protocol/clocks.md#when-clocks-run), from now:
        // the event's clock shows it still waiting. A correspondence clock never waits
        // (one that stands still has its player on vacation).
        if (ev.online && !s.settings.correspondence && s.clock && s.clock.running === null && !s.clock.paused && !s.paused && !s.sealedBy
            && ['play', 'handicap'].includes(s.phase) && s.toMove === ev.color) {
          s.clock = { ...s.clock, running: ev.color };
          s.clockAt = Date.now();
        }
        break;
      case 'vacation':
      case 'vacation_spent':
        // The player to move left or came back, or a vacation day moved their deadline:
        // the events carry no clock, so the server's is asked for (correspondence.md#vacation).
        if (ev.color === s.toMove) this.conn.request({ type: 'join', game_id: this.id }).catch((err) => err.code && showError(err));
        break;
      default:
        // An event this client does not know yet still counts for `seq`.
        break;
    }
  }

  /**
   * Play goes on (after a pause, a referee's pause, an adjournment, a dispute, or at the
   * scheduled start): stepping away before was allowed, so the server counts absence
   * from now, and so does this page.
   */
  playGoesOn() {
    const { away } = this.s;
    for (const colour of ['black', 'white']) if (away[colour] !== null) away[colour] = Date.now();
    this.forgetClaim();
  }

  forgetClaim() {
    this.claimAt = null;
    this.claimRefused = null;
  }

  clockFrom(view, at) {
    const s = this.s;
    if (!view) return;
    s.clock = view;
    s.clockAt = at ? Math.min(Date.now(), this.conn.localTime(at)) : Date.now();
    s.rest = this.restOf(view);
    s.clockStopped = null;
  }

  /** The running side's weekend a clock view names, on this page's clock; or null. */
  restOf(view) {
    const w = view?.weekend;
    if (!w) return null;
    // `ends` is the instant itself, to name: our clock's offset would blur its minute.
    return { from: w.from == null ? -Infinity : this.conn.localTime(w.from), until: this.conn.localTime(w.until), ends: w.until };
  }

  /**
   * Why `colour`'s clock stands still on its turn in a correspondence game, as the
   * server counts it (`{kind, text}`): its player's weekend, or its player away on
   * vacation (the view then runs no clock, correspondence.md#vacation); else null.
   */
  stillFor(colour, now) {
    const s = this.s;
    if (!s.settings.correspondence || s.phase !== 'play' || s.toMove !== colour) return null;
    if (s.clock.running === colour && resting(s.rest, now)) return { kind: 'weekend', text: `weekend until ${shortTime(s.rest.ends)}` };
    if (s.clock.running === null && !s.clock.paused && !s.paused && !s.refereePaused && !s.sealedBy) return { kind: 'vacation', text: 'on vacation' };
    return null;
  }

  stopClock() {
    if (this.s.clock && this.s.clockStopped === null) this.s.clockStopped = Date.now();
  }

  nameOf(colour) {
    return this.s[colour].user.name;
  }

  async send(msg) {
    try {
      return await this.conn.request({ ...msg, game_id: this.id });
    } catch (err) {
      showError(err);
      return null;
    }
  }

  async click(x, y) {
    const s = this.s;
    if (!s || this.busy || !s.you) return;
    if (this.cursor !== null) {
      toast('You are reviewing an earlier move: back to the live position to play.', 'info');
      return;
    }
    const key = `${x},${y}`;
    const stone = s.board[y][x];
    const vertex = vertexName(x, y, s.size);
    if (s.phase === 'play') {
      if (!this.myTurn() || stone !== '.') return;
      // On touch screens (or when chosen) the first tap only shows where the stone goes.
      if (prefs.get('confirm') && this.pending !== vertex) {
        this.pending = vertex;
        this.draw();
        return;
      }
      this.pending = null;
      this.busy = true;
      await this.send({ type: 'play', move_number: s.moves.length + 1, vertex });
      this.busy = false;
      this.draw();
    } else if (s.phase === 'scoring') {
      if (stone === '.') return;
      this.busy = true;
      await this.send({ type: 'mark_dead', vertex, dead: !s.dead.has(key) });
      this.busy = false;
    } else if (s.phase === 'handicap' && s.you === 'black' && stone === '.') {
      if (this.selected.has(key)) this.selected.delete(key);
      else if (this.selected.size < s.settings.handicap) this.selected.add(key);
      this.draw();
    }
  }

  myTurn() {
    const s = this.s;
    return s.phase === 'play' && s.you === s.toMove && !s.paused && !s.sealedBy;
  }

  /** Review keys: ← → a move, Home/End the start and the live position. */
  key(e) {
    if (!this.s || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.target.closest && e.target.closest('input, textarea, select')) return;
    const n = this.s.moves.length;
    const at = this.cursor ?? n;
    const to = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: n }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    this.show(to);
  }

  /** Shows the position after `k` moves; the last one is the live position. */
  show(k) {
    const n = this.s.moves.length;
    const to = Math.max(0, Math.min(n, k));
    this.cursor = to === n ? null : to;
    this.pending = null;
    this.draw();
  }

  /** The position the board shows: live, or an earlier one in review. */
  position() {
    const s = this.s;
    if (this.cursor === null) return { board: s.board, prisoners: s.prisoners, last: s.last, live: true };
    return { ...this.replay.at(s.moves, this.cursor), live: false };
  }

  draw() {
    const s = this.s;
    if (!s) return;
    this.root.dataset.phase = s.phase;
    this.root.dataset.seq = s.seq;
    this.root.dataset.moves = s.moves.length;
    this.root.dataset.role = s.you || 'spectator';
    this.root.dataset.view = this.cursor === null ? 'live' : String(this.cursor);
    const pos = this.position();
    let owner = null;
    let count = null;
    if (pos.live && (s.phase === 'scoring' || (s.phase === 'ended' && s.score))) {
      count = countScore(s.board, s.dead, s.settings, s.prisoners);
      owner = count.owner;
    } else if (pos.live && this.estimate) {
      // The server counted every stone alive; its territory is the same flood fill.
      owner = countScore(s.board, new Set(), s.settings, s.prisoners).owner;
    }
    this.goban.render({
      board: pos.board,
      last: pos.live && s.phase === 'ended' && s.score ? null : pos.last,
      dead: pos.live ? s.dead : new Set(),
      owner,
      selected: this.selected,
      shadow: pos.live && this.myTurn() ? s.you : null,
      pending: this.pending,
    });
    document.title = (this.myTurn() ? TITLE_MARK + 'Your move · ' : '') + this.title;
    fill(this.slots.players, el('div', { class: 'players' }, this.playerCard('black', pos), this.playerCard('white', pos)));
    fill(this.slots.status, this.statusLine());
    fill(this.slots.result, this.resultBox(count));
    fill(this.slots.estimate, this.estimateBox());
    fill(this.slots.actions, this.actions());
    fill(this.slots.review, this.moveList());
    this.drawNav();
    this.chatBox();
    this.referee.draw(this.slots.referee);
    if (!this.slots.options.firstChild) fill(this.slots.options, this.options());
    fill(this.slots.meta, this.meta());
    this.tick();
  }

  playerCard(colour, pos) {
    const s = this.s;
    const seat = s[colour];
    const active = s.phase === 'play' && s.toMove === colour && !s.paused && !s.sealedBy;
    return el('div', { class: `player player-${colour}${active ? ' to-move' : ''}`, 'data-testid': `player-${colour}` },
      el('div', { class: 'player-top' },
        el('span', { class: `stone-icon stone-icon-${colour}`, 'aria-hidden': 'true' }),
        el('span', { class: 'player-name', title: seat.user.id }, who(seat.user)),
        s.you === colour ? el('span', { class: 'badge' }, 'you') : null,
        seat.warnings ? el('span', { class: 'badge warning', 'data-testid': `warnings-${colour}`, title: 'referee warnings' }, `${seat.warnings} warning${seat.warnings > 1 ? 's' : ''}`) : null,
        el('span', { class: `online ${seat.online ? 'is-online' : ''}`, 'data-testid': `online-${colour}`, title: seat.online ? 'online' : 'away' })),
      s.clock ? el('div', { class: 'clock', 'data-testid': `clock-${colour}` },
        el('span', { class: 'clock-main' }), el('span', { class: 'clock-extra' }),
        el('span', { class: 'clock-still', 'data-testid': `clock-still-${colour}` })) : el('div', { class: 'clock untimed' }, 'untimed'),
      this.usedLine(colour, pos),
      el('div', { class: 'captures', 'data-testid': `captures-${colour}` }, `Captures: ${pos.prisoners[colour]}`));
  }

  /** The time this side spent on its latest move up to the one shown. */
  usedLine(colour, pos) {
    const moves = this.s.moves;
    let k = pos.live ? moves.length : this.cursor;
    while (k > 0 && moves[k - 1].color !== colour) k -= 1;
    const ms = k > 0 ? this.times.used(k) : null;
    if (ms === null) return null;
    return el('div', { class: 'used', 'data-testid': `used-${colour}`, 'data-move': k, 'data-used-ms': ms }, `move ${k} took ${spent(ms)}`);
  }

  statusLine() {
    const s = this.s;
    let text;
    const moveNo = `Move ${s.moves.length}`;
    const last = s.moves[s.moves.length - 1];
    const lastText = last ? ` · ${colourName(last.color)} ${last.vertex}` : '';
    if (s.phase === 'ended') text = 'Game over';
    else if (s.phase === 'scoring') {
      text = s.you ? 'Both passed: click groups to mark them dead (click again to unmark), then accept.' : 'Both passed: the players are marking dead stones.';
    } else if (s.phase === 'handicap') {
      text = s.you === 'black' ? `Place your ${s.settings.handicap} handicap stones, then confirm.` : `Black is placing ${s.settings.handicap} handicap stones.`;
    } else if (s.phase === 'scheduled') text = 'Waiting for the scheduled start.';
    else if (s.sealedBy) text = `Adjourned: ${this.nameOf(s.sealedBy)} sealed a move.${s.resumeBy ? ` ${this.nameOf(s.resumeBy)} asks to resume.` : ''}`;
    else if (s.refereePaused) text = 'Paused by the referee.';
    else if (s.paused) text = `Paused.${s.resumeBy ? ` ${this.nameOf(s.resumeBy)} asks to resume.` : ''}`;
    else {
      text = this.myTurn() ? 'Your move' : `${colourName(s.toMove)} to move`;
      if (s.pauseBy) text += ` · ${this.nameOf(s.pauseBy)} asks to pause`;
    }
    const pending = this.pending ? el('div', { class: 'small', 'data-testid': 'confirm-hint' }, `Tap ${this.pending} again to play there.`) : null;
    return el('div', { class: 'status', 'data-testid': 'status' },
      el('strong', {}, text), el('span', { class: 'muted' }, ` ${moveNo}${lastText}`), pending,
      s.you ? null : el('div', { class: 'muted small', 'data-testid': 'watching' }, 'You are watching this game.'));
  }

  resultBox(count) {
    const s = this.s;
    if (s.phase === 'ended') {
      const sc = s.score;
      return el('div', { class: 'result', 'data-testid': 'result', 'data-result': s.result },
        el('div', { class: 'result-main' }, s.result),
        el('div', {}, resultText(s.result, sc), chineseText(s.result, sc)),
        sc ? el('div', { class: 'muted small' }, `Black ${sc.black} · White ${sc.white} · komi ${sc.komi}${sc.dead.length ? ` · dead: ${sc.dead.join(' ')}` : ''}`) : null,
        sc?.tax ? taxLine(sc.tax) : null);
    }
    if (s.phase !== 'scoring') return null;
    const acc = ['black', 'white'].map((c) => `${this.nameOf(c)} ${s.accepted.has(c) ? 'accepted ✓' : 'has not accepted'}`).join(' · ');
    const marked = [...s.dead].map((k) => { const [x, y] = k.split(',').map(Number); return vertexName(x, y, s.size); });
    return el('div', { class: 'count', 'data-testid': 'count', 'data-estimate': count.result },
      el('div', {}, el('strong', {}, `If accepted: ${count.result}`), el('span', { class: 'muted' }, ` (Black ${count.black} · White ${count.white} · komi ${s.settings.komi})`)),
      count.tax ? taxLine(count.tax) : null,
      el('div', { class: 'small' }, marked.length ? `Marked dead: ${marked.join(' ')}` : 'No stones marked dead.'),
      el('div', { class: 'small muted', 'data-testid': 'accepted' }, acc),
      s.disputes > 0 ? el('div', { class: 'small warn' }, 'A count was disputed before: if the marks are rejected again, every stone counts as alive.') : null);
  }

  /** The server's area count of the live position, asked for by the player. */
  async requestEstimate() {
    try {
      const res = await fetch(`/api/games/${encodeURIComponent(this.id)}/estimate`, { cache: 'no-store' });
      const body = await res.json();
      if (!res.ok) throw new Error(body.error || `the server answered ${res.status}`);
      this.estimate = body;
      this.draw();
    } catch (err) {
      showError(new Error(`No estimate: ${err.message}`));
    }
  }

  estimateBox() {
    const s = this.s;
    if (s.phase !== 'play') return null;
    const e = this.estimate;
    const ask = el('button', { type: 'button', class: 'quiet', 'data-testid': 'estimate-ask', onclick: () => this.requestEstimate() }, e ? 'Estimate again' : 'Estimate score');
    if (!e) return el('div', { class: 'estimate' }, ask);
    return el('div', { class: 'estimate', 'data-testid': 'estimate', 'data-result': e.result },
      el('div', {}, el('strong', {}, `Estimate: ${e.result}`), el('span', { class: 'muted' }, ` after move ${e.move_number}`)),
      el('div', { class: 'small muted' }, `An area count of the board as it stands, every stone alive (Black ${e.black} · White ${e.white} · komi ${e.komi}). Not a result.`),
      el('div', {}, ask, el('button', { type: 'button', class: 'quiet', onclick: () => { this.estimate = null; this.draw(); } }, 'Hide')));
  }

  actions() {
    const s = this.s;
    if (!s.you) return null;
    if (s.phase === 'ended') return this.rematchBox();
    const me = s.you;
    const b = (label, testid, onclick, attrs = {}) => el('button', { type: 'button', 'data-testid': testid, onclick, ...attrs }, label);
    const buttons = [];
    if (s.phase === 'play') {
      const stopped = s.paused || s.sealedBy;
      // A pass is confirmed like a stone on touch screens, and always when it would end
      // play (the opponent has just passed): a slip must not end the game.
      const ends = s.passes > 0;
      buttons.push(this.twoStep('pass', 'Pass', ends ? 'Pass again: play ends' : 'Pass again to pass', ends || prefs.get('confirm'),
        () => this.send({ type: 'pass', move_number: s.moves.length + 1 }), { disabled: !this.myTurn() }));
      if (stopped) {
        const label = s.resumeBy && s.resumeBy !== me ? 'Agree to resume' : s.resumeBy === me ? 'Resume requested' : 'Resume';
        buttons.push(b(label, 'resume', () => this.send({ type: 'resume' }), { disabled: s.resumeBy === me }));
      } else {
        const label = s.pauseBy && s.pauseBy !== me ? 'Agree to pause' : s.pauseBy === me ? 'Pause requested' : 'Pause';
        buttons.push(b(label, 'pause', () => this.send({ type: 'pause' }), { disabled: s.pauseBy === me }));
      }
    }
    if (s.phase === 'handicap' && me === 'black') {
      const n = s.settings.handicap;
      buttons.push(b(`Place stones (${this.selected.size}/${n})`, 'place-handicap', () => {
        const vertices = [...this.selected].map((k) => { const [x, y] = k.split(',').map(Number); return vertexName(x, y, s.size); });
        this.send({ type: 'place_handicap', vertices });
      }, { disabled: this.selected.size !== n, class: 'primary' }));
    }
    if (this.claimable()) buttons.push(b('Claim win', 'claim-win', () => this.claim()));
    // client-protocol/game.md#abort: before one's own first move, in a casual game.
    const casual = !s.settings.start_at && s.settings.fair_play !== 'tournament';
    if (casual && ['play', 'handicap'].includes(s.phase) && !s.moves.some((m) => m.color === me)) {
      buttons.push(b('Abort', 'abort', () => this.send({ type: 'abort' })));
    }
    if (s.phase === 'scoring') {
      const mine = s.accepted.has(me);
      buttons.push(b(mine ? 'Accepted ✓' : 'Accept count', 'accept-score', () => {
        const msg = { type: 'accept_score' };
        if (s.marksSeq !== null) msg.marks_seq = s.marksSeq;
        this.send(msg);
      }, { disabled: mine, class: 'primary' }));
      buttons.push(b(s.disputes > 0 ? 'Reject (count all alive)' : 'Reject & resume play', 'reject-score', () => this.send({ type: 'reject_score' })));
    }
    buttons.push(this.twoStep('resign', 'Resign', 'Click again to resign', true, () => this.send({ type: 'resign' })));
    return el('div', { class: 'actions' }, buttons);
  }

  /**
   * A button that acts on a second press within 4 s when `confirm`: the first arms it
   * (red, saying so); any move disarms it.
   */
  twoStep(name, label, armedLabel, confirm, action, attrs = {}) {
    const armed = this.armed === name;
    return el('button', {
      type: 'button', 'data-testid': name, 'data-armed': armed ? 'yes' : null, ...attrs, class: armed ? 'danger' : attrs.class,
      onclick: () => {
        if (!confirm || armed) {
          this.disarm();
          action();
          return;
        }
        this.armed = name;
        clearTimeout(this.armTimer);
        this.armTimer = setTimeout(() => this.disarm(), 4000);
        fill(this.slots.actions, this.actions());
      },
    }, armed ? armedLabel : label);
  }

  disarm() {
    clearTimeout(this.armTimer);
    if (this.armed === null) return;
    this.armed = null;
    fill(this.slots.actions, this.actions());
  }

  /** The opponent, when this page plays in the game. */
  opponent() {
    const s = this.s;
    return s && s.you ? s[other(s.you)].user : null;
  }

  /** Whether `c` (a challenge to us) is the opponent's rematch offer, shown in this view. */
  takesChallenge(c) {
    const me = this.conn.user;
    const them = this.opponent();
    return !!(me && them && this.s.phase === 'ended' && c.from.id === them.id && c.to === me.id);
  }

  /** Challenges between the opponent and us come and go: the rematch follows them. */
  challengeNews(msg) {
    const r = this.rematch;
    const them = this.opponent();
    if (!them) return;
    if (msg.type === 'challenge_added') {
      if (!this.takesChallenge(msg.challenge)) return;
      r.offer = msg.challenge;
    } else if (r.offer?.challenge_id === msg.challenge_id) {
      r.offer = null;
    } else if (r.sent?.challenge_id === msg.challenge_id) {
      r.sent = null;
      r.declined = msg.reason === 'declined';
    } else {
      return;
    }
    if (this.s.phase === 'ended') fill(this.slots.actions, this.actions());
  }

  /** A rematch offered before this page opened the ended game: the open challenges say. */
  async findRematch() {
    try {
      const reply = await this.conn.request({ type: 'list_seeks' });
      const me = this.conn.user;
      const them = this.opponent();
      if (!me || !them) return;
      const r = this.rematch;
      r.offer = reply.challenges.find((c) => this.takesChallenge(c)) || null;
      r.sent = reply.challenges.find((c) => c.from.id === me.id && c.to === them.id) || null;
      fill(this.slots.actions, this.actions());
    } catch (err) {
      if (err.code) showError(err);
    }
  }

  /**
   * The same settings with the colours swapped, as a challenge to the opponent. A
   * handicap game keeps its colours: Black is the weaker player's.
   */
  async offerRematch() {
    const s = this.s;
    const settings = { ...s.settings, color: s.settings.handicap >= 2 ? s.you : other(s.you) };
    // A scheduled start has passed; the rematch starts when accepted.
    delete settings.start_at;
    try {
      const reply = await this.conn.request({ type: 'challenge', opponent: this.opponent().id, settings });
      this.rematch = { offer: null, sent: reply.challenge, declined: false };
    } catch (err) {
      showError(err);
    }
    fill(this.slots.actions, this.actions());
  }

  async answerRematch(accept) {
    const c = this.rematch.offer;
    const msg = accept ? { type: 'accept', challenge_id: c.challenge_id } : { type: 'decline', challenge_id: c.challenge_id };
    if (accept && c.settings.color === 'nigiri') msg.nigiri_seed = randomSeed();
    try {
      const ack = await this.conn.request(msg);
      if (ack.game_id) location.hash = `#/game/${ack.game_id}`;
    } catch (err) {
      showError(err);
    }
  }

  /** After the end: a rematch to offer, offered, or offered to us. */
  rematchBox() {
    const { offer, sent, declined } = this.rematch;
    const them = this.opponent();
    const b = (label, testid, onclick, cls = null) => el('button', { type: 'button', 'data-testid': testid, class: cls, onclick }, label);
    if (offer) {
      const colour = offer.settings.color === 'nigiri' ? 'colours by nigiri' : `you play ${other(offer.settings.color)}`;
      return el('div', { class: 'rematch', 'data-testid': 'rematch-offer', 'data-challenge-id': offer.challenge_id },
        el('div', {}, el('strong', {}, `${offer.from.name} offers a rematch`), ` · ${colour}`),
        el('div', { class: 'small muted' }, describeSettings(offer.settings, { colour: false })),
        el('div', { class: 'actions' },
          b('Accept', 'rematch-accept', () => this.answerRematch(true), 'primary'),
          b('Decline', 'rematch-decline', () => this.answerRematch(false))));
    }
    if (sent) {
      return el('div', { class: 'rematch', 'data-testid': 'rematch-sent' },
        el('span', {}, `Rematch offered: waiting for ${them.name}`), ' ',
        b('Cancel', 'rematch-cancel', () => this.conn.request({ type: 'cancel', challenge_id: sent.challenge_id }).catch(showError)));
    }
    return el('div', { class: 'actions' },
      b('Rematch', 'rematch', () => this.offerRematch()),
      el('span', { class: 'muted small', 'data-testid': 'rematch-note' },
        declined ? `${them.name} declined the rematch.` : 'Same settings, colours swapped.'));
  }

  /**
   * Whether the server could let this player claim the game (client-protocol/
   * competition.md#claim_win): the opponent is away and to move while play runs, or is
   * Black, away, in free handicap placement. Never on one's own turn.
   */
  claimable() {
    const s = this.s;
    if (!s.you) return false;
    const them = other(s.you);
    if (s[them].online) return false;
    if (s.phase === 'handicap') return them === 'black';
    return s.phase === 'play' && s.toMove === them && !s.paused && !s.refereePaused && !s.sealedBy;
  }

  /**
   * The ms until a claim is allowed: the server's word once it has given it, else the
   * claim wait counted from when this page saw the opponent go (or from its load). The
   * server may have counted from earlier, so this may be longer than its wait: asking
   * early (the button stays clickable) has the server say how long is left.
   */
  claimLeft() {
    if (this.claimAt !== null) return Math.max(0, this.claimAt - Date.now());
    const since = this.s.away[other(this.s.you)] ?? Date.now();
    return Math.max(0, claimWaitMs(this.s.settings) - (Date.now() - since));
  }

  /** Claims the game; asked early, the server says how long is left, and the page shows it. */
  async claim() {
    try {
      await this.conn.request({ type: 'claim_win', game_id: this.id });
    } catch (err) {
      if (err.code === 'forbidden' && typeof err.retryAfterMs === 'number') {
        this.claimAt = Date.now() + err.retryAfterMs;
        toast(`Not yet: the server allows the claim in ${Math.ceil(err.retryAfterMs / 1000)} s.`, 'info');
      } else {
        if (err.code === 'forbidden') this.claimRefused = err.message;
        showError(err);
      }
      this.tickClaim();
    }
  }

  /** The claim button counts down to the moment the server will allow a claim. */
  tickClaim() {
    const button = this.slots.actions.querySelector('[data-testid="claim-win"]');
    if (!button) return;
    if (this.claimRefused) {
      button.disabled = true;
      button.textContent = 'Claim win';
      button.title = `The server refuses a claim: ${this.claimRefused}`;
      return;
    }
    const wait = this.claimLeft();
    const seconds = Math.ceil(wait / 1000);
    button.dataset.wait = String(seconds);
    button.textContent = wait > 0 ? `Claim win in ${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}` : 'Claim win';
    button.title = wait > 0
      ? 'Your opponent is away on their move. The count runs from when this page saw them go; ask now and the server tells you exactly how long is left.'
      : 'Your opponent is away on their move: claim the game.';
  }

  /** Back and forward under the board. */
  navBar() {
    const b = (name, testid, title, to) => el('button', { type: 'button', class: 'nav', 'data-testid': testid, title, onclick: () => this.show(to()) }, icon(name, title));
    const at = () => this.cursor ?? this.s.moves.length;
    this.live = el('span', { class: 'nav-live' }, 'Live');
    this.nav = el('div', { class: 'nav-bar', 'data-testid': 'review-nav' },
      b('first', 'review-start', 'First position (Home)', () => 0),
      b('back', 'review-back', 'Back a move (←)', () => at() - 1),
      el('span', { class: 'nav-at', 'data-testid': 'review-at' }),
      b('forward', 'review-forward', 'Forward a move (→)', () => at() + 1),
      b('last', 'review-live', 'The live position (End)', () => this.s.moves.length),
      el('button', { type: 'button', 'data-testid': 'analyze', title: 'Try variations from this position on a private board', onclick: () => {
        location.hash = analysisLink(this.s.size, setStones(this.s.size, this.s.handicap, this.s.settings.ruleset), this.s.moves.slice(0, this.cursor ?? this.s.moves.length), this.id);
      } }, 'Analyze'),
      // A correspondence game's player plans their conditional moves on the analysis board.
      this.planLink = el('a', { class: 'button', href: `#/analysis?game=${encodeURIComponent(this.id)}&plan=1`, 'data-testid': 'plan-open', title: 'Plan your replies to your opponent\'s moves' }, 'Plan moves'));
    this.nav.querySelector('[data-testid="review-live"]').append(this.live);
    return this.nav;
  }

  drawNav() {
    if (!this.nav) return;
    const n = this.s.moves.length;
    const at = this.cursor ?? n;
    const live = this.s.phase !== 'ended';
    this.nav.querySelector('[data-testid="review-at"]').textContent = this.cursor === null
      ? (live ? `Move ${n} · live` : `Move ${n} · end`) : `Move ${at} of ${n}`;
    this.live.hidden = !(this.cursor !== null && live);
    this.planLink.hidden = !(this.s.settings.correspondence && this.s.you && this.s.phase === 'play');
    this.nav.classList.toggle('reviewing', this.cursor !== null);
  }

  moveList() {
    const s = this.s;
    if (!s.moves.length) return null;
    const at = this.cursor ?? s.moves.length;
    const items = s.moves.map((m, i) => el('li', {},
      el('button', {
        type: 'button', class: `move${i + 1 === at ? ' current' : ''}`, 'data-testid': 'move', 'data-move': i + 1,
        title: this.times.used(i + 1) === null ? null : `took ${spent(this.times.used(i + 1))}`,
        onclick: () => this.show(i + 1),
      }, `${i + 1}. ${m.color === 'black' ? 'B' : 'W'} ${m.vertex}`,
      this.planned.has(i + 1) ? el('span', { class: 'badge move-planned', 'data-testid': 'move-planned', title: 'played by the server from a plan of conditional moves' }, ' planned') : null)));
    const list = el('ol', { class: 'move-list', 'data-testid': 'move-list' }, items);
    // The current move in view inside the list, without scrolling the page.
    requestAnimationFrame(() => {
      const current = list.querySelector('.current');
      if (current) list.scrollTop = current.offsetTop - list.clientHeight / 2;
    });
    return el('details', { class: 'review', open: true }, el('summary', {}, 'Moves'), list);
  }

  /** The chat is built once per role and phase; events only add lines to its logs. */
  chatBox() {
    const s = this.s;
    const canTalk = !!s.you && s.phase !== 'ended';
    const key = `${s.you}|${canTalk}|${!!this.conn.user}`;
    if (key === this.chatKey) return this.drawChat();
    this.chatKey = key;
    this.chatLog = el('ul', { class: 'chat-log', 'data-testid': 'chat-log' });
    const players = el('div', { class: 'chat' },
      el('h3', {}, 'Players’ chat'),
      this.chatLog,
      canTalk ? this.chatForm('chat', 'Say something to your opponent') : null);
    if (s.you) {
      this.kibitzLog = null;
      fill(this.slots.chat, players);
    } else {
      this.kibitzLog = el('ul', { class: 'chat-log', 'data-testid': 'kibitz-log' });
      const spectators = el('div', { class: 'chat' },
        el('h3', {}, 'Spectators’ chat'),
        this.kibitzLog,
        this.conn.user ? this.chatForm('kibitz', 'Talk with other spectators (players do not see this)') : el('p', { class: 'muted small' }, 'Log in to talk with other spectators.'));
      fill(this.slots.chat, el('div', { class: 'chats' }, players, spectators));
    }
    this.drawChat();
  }

  chatForm(testid, placeholder) {
    const input = el('input', { type: 'text', maxlength: 500, placeholder, 'data-testid': `${testid}-input`, 'aria-label': placeholder });
    return el('form', {
      class: 'chat-form',
      onsubmit: async (e) => {
        e.preventDefault();
        const text = input.value.trim();
        if (!text) return;
        if (await this.send({ type: 'chat', text })) input.value = '';
      },
    }, input, el('button', { type: 'submit', 'data-testid': `${testid}-send` }, 'Send'));
  }

  /** The chat logs, without the lines of muted users (`force`: redraw them all). */
  drawChat(force = false) {
    const muted = new Set(prefs.get('muted'));
    const me = this.conn.user ? this.conn.user.id : null;
    const mute = (m) => el('button', {
      type: 'button', class: 'quiet mute', 'data-testid': 'mute', title: `Hide ${m.from.name}'s chat lines`,
      onclick: () => {
        prefs.set('muted', [...new Set([...prefs.get('muted'), m.from.id])]);
        toast(`${m.from.name} is muted: Options has "Unmute everyone"`, 'info');
        this.drawChat(true);
      },
    }, 'mute');
    const line = (m) => el('li', { 'data-from': m.from.id }, el('b', {}, m.from.name), ' ', m.text, m.from.id === me ? null : mute(m));
    for (const [log, lines] of [[this.chatLog, this.chat], [this.kibitzLog, this.kibitz]]) {
      const shown = lines.filter((m) => !muted.has(m.from.id));
      if (!log || (!force && log.childElementCount === shown.length)) continue;
      fill(log, shown.map(line));
      log.scrollTop = log.scrollHeight;
    }
  }

  options() {
    const check = (name, label) => el('label', { class: 'option' },
      el('input', { type: 'checkbox', 'data-testid': `pref-${name}`, checked: prefs.get(name), onchange: (e) => prefs.set(name, e.target.checked) }), ` ${label}`);
    const count = el('select', { 'data-testid': 'pref-count', 'aria-label': 'Spoken byo-yomi count', onchange: (e) => prefs.set('count', e.target.value) },
      [['off', 'off'], ['en', 'in English'], ['zh', 'in Chinese']].map(([v, t]) => el('option', { value: v, selected: prefs.get('count') === v }, t)));
    return el('details', { class: 'options small' }, el('summary', {}, 'Options'),
      check('sound', 'Stone sound'),
      check('confirm', 'Confirm each move and pass with a second tap'),
      el('label', { class: 'option' }, 'Count my byo-yomi seconds aloud: ', count),
      el('button', {
        type: 'button', class: 'quiet', 'data-testid': 'unmute-all',
        onclick: () => { prefs.set('muted', []); this.drawChat(true); },
      }, 'Unmute everyone'));
  }

  meta() {
    const s = this.s;
    return el('div', { class: 'meta small' },
      el('div', { 'data-testid': 'game-settings' }, describeSettings(s.settings, { colour: false })),
      s.nigiri ? el('div', { 'data-testid': 'nigiri' }, this.nigiriText || 'Colours drawn by nigiri.') : null,
      el('div', { class: 'links' },
        el('a', { href: `/api/games/${encodeURIComponent(this.id)}/sgf`, download: `${this.id}.sgf`, 'data-testid': 'sgf' }, 'Download SGF'),
        el('a', { href: '#/archive' }, 'Archive'),
        el('a', { href: '#/' }, 'Back to the lobby')));
  }

  /** Checks the nigiri proof (client-protocol/lobby.md#nigiri) and says so. */
  async verifyNigiri() {
    const p = this.s.nigiri;
    const who = this.nameOf(p.challenger);
    let verdict = '';
    if (crypto.subtle) {
      const hex = (h) => Uint8Array.from(h.match(/../g) || [], (b) => parseInt(b, 16));
      const sha = async (bytes) => new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
      const secret = hex(p.secret);
      const commit = Array.from(await sha(secret), (b) => b.toString(16).padStart(2, '0')).join('');
      const h = await sha(new Uint8Array([...secret, ...new TextEncoder().encode(p.seed)]));
      const ok = commit === p.commitment && (h[0] % 2 === 0 ? 'black' : 'white') === p.challenger;
      const seen = JSON.parse(sessionStorage.getItem('tengen.commitments') || '[]').includes(p.commitment);
      verdict = ok ? ` The draw checks out${seen ? ' against the commitment you saw' : ''} ✓` : ' The draw does NOT check out ✗';
    }
    this.nigiriText = `Nigiri: the challenger, ${who}, drew ${p.challenger}.${verdict}`;
    this.draw();
  }

  /** Redraws the clocks (ten times a second), the claim countdown and the spoken count. */
  tick() {
    const s = this.s;
    if (!s || !this.panel) return;
    if (s.you) this.tickClaim();
    if (!s.clock) return;
    const now = s.clockStopped ?? this.frozenAt ?? Date.now();
    // In review, the clocks as the shown move left them.
    const review = this.cursor !== null;
    const past = review ? this.times.clockAfter(this.cursor) : null;
    const ended = review || s.phase === 'ended';
    const onTime = !review && ended && /^[BW]\+T$/.test(s.result || '') ? (s.result[0] === 'B' ? 'white' : 'black') : null;
    for (const colour of ['black', 'white']) {
      const box = this.panel.querySelector(`[data-testid="clock-${colour}"]`);
      if (!box) continue;
      box.classList.toggle('past', review);
      const running = !ended && s.clock.running === colour && !s.clock.paused;
      const still = review ? null : this.stillFor(colour, now);
      let shown;
      if (colour === onTime) shown = { main: formatMs(0), extra: 'out of time', low: true, period: null };
      else if (review) shown = past ? showClock(s.settings.clock, past[colour], 0) : { main: '–', extra: 'not known here', low: false, period: null };
      else shown = showClock(s.settings.clock, s.clock[colour], running ? runningTime(s.clockAt, now, s.rest) : 0);
      if (!shown) continue;
      box.querySelector('.clock-main').textContent = shown.main;
      box.querySelector('.clock-extra').textContent = shown.extra;
      const ticking = running && !still && s.clockStopped === null && this.frozenAt === null;
      box.classList.toggle('running', ticking);
      if (still) box.dataset.still = still.kind;
      else delete box.dataset.still;
      box.querySelector('.clock-still').textContent = still ? still.text : '';
      box.classList.toggle('low', shown.low && (running || colour === onTime));
      if (colour === s.you) this.count.update(ticking ? shown.period : null);
    }
  }
}

/** The group tax of a count under the ancient rules (还棋头): one point per living group. */
function taxLine(tax) {
  const groups = (n) => `${n} group${n === 1 ? '' : 's'}`;
  return el('div', { class: 'small', 'data-testid': 'group-tax' },
    `Group tax, one point back per living group: Black ${groups(tax.black)} (−${tax.black}) · White ${groups(tax.white)} (−${tax.white})`);
}
