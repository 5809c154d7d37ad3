// One game, played or watched: builds its state from the `snapshot`, applies every
// numbered event in `seq` order, rejoins with `since_seq` after a reconnect (or when a
// gap shows), and draws the board, clocks, captures, actions, the count and both chats.

import { chainAt, parseVertex, vertexName } from './coords.js';
import { countScore } from './count.js';
import { showClock } from './clock.js';
import { Goban } from './goban.js';
import { colourName, describeSettings, el, fill, other, resultText, showError, toast } from './ui.js';

const STONE = { black: 'X', white: 'O' };

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
    this.onMessage = (e) => this.frame(e.detail);
    this.onReady = () => this.join();
  }

  mount(container) {
    this.root = el('section', { class: 'game', 'data-testid': 'game', 'data-game-id': this.id });
    this.boardArea = el('div', { class: 'board-area' });
    this.panel = el('aside', { class: 'panel' });
    this.root.append(this.boardArea, this.panel);
    fill(container, this.root);
    this.boardArea.append(el('p', { class: 'muted loading' }, 'Loading the game…'));
    this.conn.addEventListener('message', this.onMessage);
    this.conn.addEventListener('ready', this.onReady);
    this.ticker = setInterval(() => this.tick(), 100);
    if (this.conn.ready) this.join();
  }

  unmount() {
    clearInterval(this.ticker);
    this.conn.removeEventListener('message', this.onMessage);
    this.conn.removeEventListener('ready', this.onReady);
    if (this.conn.ready) this.conn.request({ type: 'leave', game_id: this.id }).catch((err) => err.code && showError(err));
  }

  /** Joins: a snapshot the first time, the missed events after a reconnect. */
  async join() {
    const msg = { type: 'join', game_id: this.id };
    if (this.s) msg.since_seq = this.s.seq;
    try {
      await this.conn.request(msg);
    } catch (err) {
      showError(err);
      if (!this.s) fill(this.boardArea, el('p', { class: 'muted' }, `This game cannot be shown: ${err.message}`), el('p', {}, el('a', { href: '#/' }, 'Back to the lobby')));
    }
  }

  frame(msg) {
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
    this.draw();
  }

  load(snap) {
    // The players' latest chat lines come with the snapshot, in the shape of chat events.
    this.chat = (snap.chat || []).map((line) => ({ type: 'chat', ...line }));
    const size = snap.settings.board_size;
    const s = {
      seq: snap.seq,
      settings: snap.settings,
      size,
      black: snap.black,
      white: snap.white,
      phase: snap.phase,
      board: snap.board.map((row) => Array.from(row)),
      moves: snap.moves.slice(),
      prisoners: { ...snap.prisoners },
      toMove: snap.to_move,
      clock: snap.clock || null,
      clockAt: Math.min(Date.now(), this.conn.localTime(snap.server_time)),
      clockStopped: null,
      dead: new Set(),
      accepted: new Set(snap.accepted),
      disputes: snap.disputes,
      marksSeq: snap.marks_seq || null,
      paused: !!snap.paused,
      sealedBy: snap.sealed_by || null,
      pauseBy: snap.pause_requested_by || null,
      resumeBy: snap.resume_requested_by || null,
      result: snap.result || null,
      score: snap.score || null,
      nigiri: snap.nigiri || null,
      you: snap.you || null,
      last: null,
    };
    const lastMove = s.moves[s.moves.length - 1];
    if (lastMove) s.last = parseVertex(lastMove.vertex, size);
    this.s = s;
    this.setDead(snap.score ? snap.score.dead : snap.dead);
    if (!this.goban || this.goban.size !== size) {
      this.goban = new Goban(size, (x, y, v) => this.click(x, y, v));
      fill(this.boardArea, this.goban.root);
    }
    document.title = `${snap.black.user.name} vs ${snap.white.user.name} · tengen`;
    if (s.nigiri) this.verifyNigiri();
    this.draw();
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
        }
        s.last = p;
        s.moves.push({ color: ev.color, vertex: ev.vertex });
        s.toMove = other(ev.color);
        s.pauseBy = null;
        if (ev.sealed) s.sealedBy = null;
        this.clockFrom(ev.clock, ev.at);
        if (ev.vertex === 'pass' && s.you && ev.color !== s.you) toast(`${this.nameOf(ev.color)} passed`, 'info');
        break;
      }
      case 'handicap_placed':
        for (const v of ev.vertices) {
          const p = parseVertex(v, s.size);
          if (p) s.board[p.y][p.x] = 'X';
        }
        this.selected.clear();
        s.phase = 'play';
        s.toMove = 'white';
        break;
      case 'game_began':
        s.phase = s.settings.handicap >= 2 && s.settings.handicap_placement === 'free' ? 'handicap' : 'play';
        this.clockFrom(ev.clock);
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
        s.dead = new Set();
        s.accepted = new Set();
        s.disputes += 1;
        s.marksSeq = null;
        if (ev.clock) this.clockFrom(ev.clock);
        toast(ev.by ? `${this.nameOf(ev.by)} rejected the marks: play goes on`
                    : 'Time for marking ran out without agreement: play goes on', 'info');
        break;
      case 'game_ended':
        s.phase = 'ended';
        s.result = ev.result;
        s.score = ev.score || null;
        if (ev.score) this.setDead(ev.score.dead);
        this.stopClock();
        break;
      case 'chat':
        this.chat.push(ev);
        break;
      case 'presence':
        s[ev.color].online = ev.online;
        break;
      default:
        // An event this client does not know yet still counts for `seq`.
        break;
    }
  }

  clockFrom(view, at) {
    const s = this.s;
    if (!view) return;
    s.clock = view;
    s.clockAt = at ? Math.min(Date.now(), this.conn.localTime(at)) : Date.now();
    s.clockStopped = null;
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
    const key = `${x},${y}`;
    const stone = s.board[y][x];
    const vertex = vertexName(x, y, s.size);
    if (s.phase === 'play') {
      if (s.toMove !== s.you || s.paused || s.sealedBy || stone !== '.') return;
      this.busy = true;
      await this.send({ type: 'play', move_number: s.moves.length + 1, vertex });
      this.busy = false;
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

  draw() {
    const s = this.s;
    if (!s) return;
    this.root.dataset.phase = s.phase;
    this.root.dataset.seq = s.seq;
    this.root.dataset.moves = s.moves.length;
    this.root.dataset.role = s.you || 'spectator';
    let owner = null;
    let count = null;
    if (s.phase === 'scoring' || (s.phase === 'ended' && s.score)) {
      count = countScore(s.board, s.dead, s.settings, s.prisoners);
      owner = count.owner;
    }
    this.goban.render({
      board: s.board,
      last: s.phase === 'ended' && s.score ? null : s.last,
      dead: s.dead,
      owner,
      selected: this.selected,
      shadow: this.myTurn() ? s.you : null,
    });
    fill(this.panel,
      el('div', { class: 'players' }, this.playerCard('black'), this.playerCard('white')),
      this.statusLine(),
      this.resultBox(count),
      this.actions(),
      this.chatBox(),
      this.meta());
    this.tick();
  }

  playerCard(colour) {
    const s = this.s;
    const seat = s[colour];
    const active = s.phase === 'play' && s.toMove === colour && !s.paused && !s.sealedBy;
    return el('div', { class: `player player-${colour}${active ? ' to-move' : ''}`, 'data-testid': `player-${colour}` },
      el('div', { class: 'player-top' },
        el('span', { class: `stone-icon stone-icon-${colour}`, 'aria-hidden': 'true' }),
        el('span', { class: 'player-name', title: seat.user.id }, seat.user.name),
        s.you === colour ? el('span', { class: 'badge' }, 'you') : null,
        el('span', { class: `online ${seat.online ? 'is-online' : ''}`, title: seat.online ? 'online' : 'away' })),
      s.clock ? el('div', { class: 'clock', 'data-testid': `clock-${colour}` },
        el('span', { class: 'clock-main' }), el('span', { class: 'clock-extra' })) : el('div', { class: 'clock untimed' }, 'untimed'),
      el('div', { class: 'captures', 'data-testid': `captures-${colour}` }, `Captures: ${s.prisoners[colour]}`));
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
    else if (s.paused) text = `Paused.${s.resumeBy ? ` ${this.nameOf(s.resumeBy)} asks to resume.` : ''}`;
    else {
      text = this.myTurn() ? 'Your move' : `${colourName(s.toMove)} to move`;
      if (s.pauseBy) text += ` · ${this.nameOf(s.pauseBy)} asks to pause`;
    }
    return el('div', { class: 'status', 'data-testid': 'status' },
      el('strong', {}, text), el('span', { class: 'muted' }, ` ${moveNo}${lastText}`),
      s.you ? null : el('div', { class: 'muted small', 'data-testid': 'watching' }, 'You are watching this game.'));
  }

  resultBox(count) {
    const s = this.s;
    if (s.phase === 'ended') {
      const sc = s.score;
      return el('div', { class: 'result', 'data-testid': 'result', 'data-result': s.result },
        el('div', { class: 'result-main' }, s.result),
        el('div', {}, resultText(s.result, sc)),
        sc ? el('div', { class: 'muted small' }, `Black ${sc.black} · White ${sc.white} · komi ${sc.komi}${sc.dead.length ? ` · dead: ${sc.dead.join(' ')}` : ''}`) : null);
    }
    if (s.phase !== 'scoring') return null;
    const acc = ['black', 'white'].map((c) => `${this.nameOf(c)} ${s.accepted.has(c) ? 'accepted ✓' : 'has not accepted'}`).join(' · ');
    const marked = [...s.dead].map((k) => { const [x, y] = k.split(',').map(Number); return vertexName(x, y, s.size); });
    return el('div', { class: 'count', 'data-testid': 'count', 'data-estimate': count.result },
      el('div', {}, el('strong', {}, `If accepted: ${count.result}`), el('span', { class: 'muted' }, ` (Black ${count.black} · White ${count.white} · komi ${s.settings.komi})`)),
      el('div', { class: 'small' }, marked.length ? `Marked dead: ${marked.join(' ')}` : 'No stones marked dead.'),
      el('div', { class: 'small muted', 'data-testid': 'accepted' }, acc),
      s.disputes > 0 ? el('div', { class: 'small warn' }, 'A count was disputed before: if the marks are rejected again, every stone counts as alive.') : null);
  }

  actions() {
    const s = this.s;
    if (!s.you || s.phase === 'ended') return null;
    const me = s.you;
    const b = (label, testid, onclick, attrs = {}) => el('button', { type: 'button', 'data-testid': testid, onclick, ...attrs }, label);
    const buttons = [];
    if (s.phase === 'play') {
      const stopped = s.paused || s.sealedBy;
      buttons.push(b('Pass', 'pass', () => this.send({ type: 'pass', move_number: s.moves.length + 1 }), { disabled: !this.myTurn() }));
      if (stopped) {
        const label = s.resumeBy && s.resumeBy !== me ? 'Agree to resume' : s.resumeBy === me ? 'Resume requested' : 'Resume';
        buttons.push(b(label, 'resume', () => this.send({ type: 'resume' }), { disabled: s.resumeBy === me }));
      } else {
        const label = s.pauseBy && s.pauseBy !== me ? 'Agree to pause' : s.pauseBy === me ? 'Pause requested' : 'Pause';
        buttons.push(b(label, 'pause', () => this.send({ type: 'pause' }), { disabled: s.pauseBy === me }));
      }
      if (!s[other(me)].online) buttons.push(b('Claim win', 'claim-win', () => this.send({ type: 'claim_win' }), { title: 'Your opponent is away; the server says when a claim is allowed.' }));
    }
    if (s.phase === 'handicap' && me === 'black') {
      const n = s.settings.handicap;
      buttons.push(b(`Place stones (${this.selected.size}/${n})`, 'place-handicap', () => {
        const vertices = [...this.selected].map((k) => { const [x, y] = k.split(',').map(Number); return vertexName(x, y, s.size); });
        this.send({ type: 'place_handicap', vertices });
      }, { disabled: this.selected.size !== n, class: 'primary' }));
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
    const resign = b('Resign', 'resign', () => {
      if (resign.dataset.armed) {
        this.send({ type: 'resign' });
      } else {
        resign.dataset.armed = '1';
        resign.textContent = 'Click again to resign';
        resign.classList.add('danger');
        setTimeout(() => { if (resign.isConnected) { delete resign.dataset.armed; resign.textContent = 'Resign'; resign.classList.remove('danger'); } }, 4000);
      }
    });
    buttons.push(resign);
    return el('div', { class: 'actions' }, buttons);
  }

  chatBox() {
    const s = this.s;
    this.chatLog = el('ul', { class: 'chat-log', 'data-testid': 'chat-log' });
    const canTalk = s.you && s.phase !== 'ended';
    const players = el('div', { class: 'chat' },
      el('h3', {}, 'Players’ chat'),
      this.chatLog,
      canTalk ? this.chatForm('chat', 'Say something to your opponent') : null);
    if (s.you) {
      this.kibitzLog = null;
      this.drawChat();
      return players;
    }
    this.kibitzLog = el('ul', { class: 'chat-log', 'data-testid': 'kibitz-log' });
    const spectators = el('div', { class: 'chat' },
      el('h3', {}, 'Spectators’ chat'),
      this.kibitzLog,
      this.conn.user ? this.chatForm('kibitz', 'Talk with other spectators (players do not see this)') : el('p', { class: 'muted small' }, 'Log in to talk with other spectators.'));
    this.drawChat();
    return el('div', { class: 'chats' }, players, spectators);
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

  drawChat() {
    const line = (m) => el('li', {}, el('b', {}, m.from.name), ' ', m.text);
    if (this.chatLog) {
      fill(this.chatLog, this.chat.map(line));
      this.chatLog.scrollTop = this.chatLog.scrollHeight;
    }
    if (this.kibitzLog) {
      fill(this.kibitzLog, this.kibitz.map(line));
      this.kibitzLog.scrollTop = this.kibitzLog.scrollHeight;
    }
  }

  meta() {
    const s = this.s;
    return el('div', { class: 'meta small' },
      el('div', {}, describeSettings(s.settings, { colour: false })),
      s.nigiri ? el('div', { 'data-testid': 'nigiri' }, this.nigiriText || 'Colours drawn by nigiri.') : null,
      el('div', { class: 'links' },
        el('a', { href: `/api/games/${encodeURIComponent(this.id)}/sgf`, download: `${this.id}.sgf`, 'data-testid': 'sgf' }, 'Download SGF'),
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

  /** Redraws the clocks only (ten times a second). */
  tick() {
    const s = this.s;
    if (!s || !s.clock || !this.panel) return;
    const now = s.clockStopped ?? Date.now();
    for (const colour of ['black', 'white']) {
      const box = this.panel.querySelector(`[data-testid="clock-${colour}"]`);
      if (!box) continue;
      const running = s.clock.running === colour && !s.clock.paused;
      const shown = showClock(s.settings.clock, s.clock[colour], running ? now - s.clockAt : 0);
      if (!shown) continue;
      box.querySelector('.clock-main').textContent = shown.main;
      box.querySelector('.clock-extra').textContent = shown.extra;
      box.classList.toggle('running', running && s.clockStopped === null);
      box.classList.toggle('low', shown.low && running);
    }
  }
}
