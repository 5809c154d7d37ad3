// The analysis board (`#/analysis?size=9&setup=..&white=..&moves=..&game=..`): a private board to
// try variations from any position of a game or of an SGF file. Moves form a tree:
// playing where the current move has no such continuation adds a variation. The address
// holds the line on the board (two SGF letters a move, `..` a pass), so the link shares
// it; saving stores the whole tree on the server as a review (`#/analysis?review=<id>`,
// client-protocol/archive.md#reviews), which anyone can open: the address stays the
// review's, and it opens at the move the analysis began from. With `plan=1` and the
// `game` of a correspondence game you play, the board plans your conditional moves
// there (planner.js).

import { LETTERS, parseVertex, vertexName } from './coords.js';
import { Goban } from './goban.js';
import { Planner } from './planner.js';
import { place, step } from './replay.js';
import { MoveNode, fromSgfPoint, readSgf, writeSgf } from './sgf.js';
import { colourName, el, fill, icon, other, showError, toast } from './ui.js';

/** A line of moves as the address writes it. */
export function encodeLine(moves, size) {
  return moves.map((m) => {
    const p = parseVertex(m.vertex, size);
    return p ? String.fromCharCode(97 + p.x, 97 + p.y) : '..';
  }).join('');
}

/**
 * The address of an analysis board: size, set stones ({black, white}: `setup` holds
 * Black's, `white` White's), a line of moves, its game.
 */
export function analysisLink(size, setup, moves, game = null) {
  const q = new URLSearchParams({ size: String(size) });
  const stones = (list) => encodeLine(list.map((vertex) => ({ vertex })), size);
  if (setup.black.length) q.set('setup', stones(setup.black));
  if (setup.white.length) q.set('white', stones(setup.white));
  if (moves.length) q.set('moves', encodeLine(moves, size));
  if (game) q.set('game', game);
  return `#/analysis?${q}`;
}

function decodeLine(text, size, firstColour) {
  const moves = [];
  let colour = firstColour;
  for (let k = 0; k + 1 < (text || '').length; k += 2) {
    const pair = text.slice(k, k + 2);
    const vertex = pair === '..' ? 'pass' : fromSgfPoint(pair, size);
    if (!vertex) throw new Error(`the link's move ${k / 2 + 1} (${pair}) is off the board`);
    moves.push({ color: colour, vertex });
    colour = other(colour);
  }
  return moves;
}

const NO_STONES = { black: [], white: [] };

/** Who plays first: White after set stones (handicap, or the ancient rules' 座子). */
function firstToMove(setup) {
  return setup.black.length || setup.white.length ? 'white' : 'black';
}

export class AnalysisView {
  /** `query`: the address's parameters. */
  constructor(conn, query) {
    this.conn = conn;
    this.query = query;
    this.game = query.get('game');
    this.from = null;
    this.saved = null;
    this.planner = query.get('plan') && this.game ? new Planner(conn, this.game, this) : null;
  }

  mount(container) {
    document.title = 'Analysis · tengen';
    this.root = el('section', { class: 'game analysis', 'data-testid': 'analysis' });
    this.boardArea = el('div', { class: 'board-area' });
    this.side = el('aside', { class: 'panel' });
    this.root.append(this.boardArea, this.side);
    fill(container, this.root);
    this.onKey = (e) => this.key(e);
    document.addEventListener('keydown', this.onKey);
    if (this.planner) {
      // The address stays the planner's; the board waits for the game's snapshot.
      this.saved = 'plan';
      this.load(19, NO_STONES, new MoveNode());
      this.go(this.tree);
      this.planner.start();
      return;
    }
    const review = this.query.get('review');
    if (review) {
      // The address stays the review's from the start: a reload, a bookmark or "Copy
      // link" must open the review, not the empty board shown while it loads.
      this.saved = review;
      this.load(19, NO_STONES, new MoveNode());
      this.go(this.tree);
      this.fetchReview(review);
      return;
    }
    try {
      const size = Number(this.query.get('size') || 19);
      if (!Number.isInteger(size) || size < 2 || size > LETTERS.length) throw new Error(`no board of size ${this.query.get('size')}`);
      const stones = (key) => decodeLine(this.query.get(key), size, 'black').map((m) => m.vertex);
      const setup = { black: stones('setup'), white: stones('white') };
      const moves = decodeLine(this.query.get('moves'), size, firstToMove(setup));
      this.from = moves.length;
      this.load(size, setup, new MoveNode());
      let at = this.tree;
      for (const m of moves) at = at.child(m);
      this.go(at);
    } catch (err) {
      showError(err);
      this.load(19, NO_STONES, new MoveNode());
      this.go(this.tree);
    }
  }

  unmount() {
    document.removeEventListener('keydown', this.onKey);
    this.planner?.stop();
  }

  load(size, setup, tree) {
    this.size = size;
    this.setup = setup;
    this.tree = tree;
    this.goban = new Goban(size, (x, y) => this.click(x, y));
    fill(this.boardArea, this.goban.root);
  }

  /** The position at `node`, replayed from the root. */
  position(node) {
    return node.line().reduce((pos, m) => step(pos, m, this.size), place(this.size, this.setup));
  }

  toMove() {
    if (this.node.move) return other(this.node.move.color);
    return firstToMove(this.setup);
  }

  click(x, y) {
    if (this.pos.board[y][x] !== '.') return;
    this.play(vertexName(x, y, this.size));
  }

  play(vertex) {
    if (vertex === 'pass' && this.planner && (this.node === this.planner.root || this.planner.inPlan(this.node))) {
      toast('Passes are not planned', 'error');
      return;
    }
    const move = { color: this.toMove(), vertex };
    const after = step(this.pos, move, this.size);
    const p = parseVertex(vertex, this.size);
    if (p && after.board[p.y][p.x] === '.') {
      toast(`${vertex} would be suicide`, 'error');
      return;
    }
    const known = this.node.children.length;
    const next = this.node.child(move);
    if (this.planner && this.node.children.length > known) this.planner.changed();
    this.go(next);
  }

  go(node) {
    this.node = node;
    this.pos = this.position(node);
    if (!this.saved) history.replaceState(null, '', analysisLink(this.size, this.setup, node.line(), this.game));
    this.draw();
  }

  /** Stores the whole tree as a review and shows its link (which opens all of it). */
  async save() {
    const body = { sgf: writeSgf(this.size, this.setup, this.tree) };
    if (this.game) {
      body.game_id = this.game;
      body.move_number = this.from;
    }
    try {
      const res = await fetch('/api/reviews', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.conn.token}` },
        body: JSON.stringify(body),
      });
      const reply = await res.json();
      if (!res.ok) throw new Error(reply.error || `the server answered ${res.status}`);
      this.saved = reply.review_id;
      history.replaceState(null, '', `#/analysis?review=${encodeURIComponent(this.saved)}`);
      this.draw();
      toast('Saved: the link opens this board, variations and all', 'ok');
    } catch (err) {
      showError(new Error(`The review was not saved: ${err.message}`));
    }
  }

  async fetchReview(id) {
    try {
      const res = await fetch(`/api/reviews/${encodeURIComponent(id)}`, { cache: 'no-store' });
      const review = await res.json();
      if (!res.ok) throw new Error(review.error || `the server answered ${res.status}`);
      const game = readSgf(review.sgf);
      this.saved = review.review_id;
      this.game = review.game_id || null;
      this.owner = review.owner;
      this.from = review.move_number ?? null;
      this.load(game.size, game.setup, game.root);
      // Where the analysis began: that many moves down the main line (the game's).
      let at = game.root;
      for (let k = 0; k < (this.from || 0) && at.children[0]; k++) at = at.children[0];
      this.go(at);
    } catch (err) {
      showError(new Error(`This review cannot be opened: ${err.message}`));
    }
  }

  key(e) {
    if (e.target.closest && e.target.closest('input, textarea, select')) return;
    const n = this.node;
    const siblings = n.parent ? n.parent.children : [n];
    const i = siblings.indexOf(n);
    const to = {
      ArrowLeft: n.parent,
      ArrowRight: n.children[0],
      ArrowUp: siblings[i - 1],
      ArrowDown: siblings[i + 1],
      Home: this.tree,
    }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    if (to) this.go(to);
  }

  draw() {
    const line = this.node.line();
    this.root.dataset.moves = line.length;
    this.goban.render({ board: this.pos.board, last: this.pos.last, shadow: this.toMove() });
    const b = (content, testid, title, onclick, attrs = {}) => el('button', { type: 'button', 'data-testid': testid, title, onclick, ...attrs }, content);
    const here = this.node;
    const variations = here.children.map((c, k) => b(`${k === 0 ? 'main' : `var. ${k}`}: ${c.move.vertex}`, 'variation', `play on with ${c.move.vertex}`, () => this.go(c)));
    const path = [];
    for (let n = here; n; n = n.parent) path.unshift(n);
    const moves = path.slice(1).map((n, k) => el('li', {},
      b(`${k + 1}. ${n.move.color === 'black' ? 'B' : 'W'} ${n.move.vertex}${n.parent.children.length > 1 ? ' *' : ''}`, 'analysis-move', 'back to this move', () => this.go(n),
        { class: `move${n === here ? ' current' : ''}`, 'data-move': k + 1 })));
    const file = el('input', { type: 'file', accept: '.sgf,application/x-go-sgf', 'data-testid': 'sgf-file', 'aria-label': 'Load an SGF file', onchange: (e) => this.open(e.target.files[0]) });
    fill(this.side,
      el('div', { class: 'status', 'data-testid': 'analysis-status' },
        el('strong', {}, this.planner ? 'Planner' : 'Analysis board'), el('span', { class: 'muted' }, ` · move ${line.length} · ${colourName(this.toMove())} to play`),
        this.planner ? null : el('div', { class: 'small muted' }, 'A private board: nothing you play here reaches a game. Playing where no variation goes adds one.')),
      this.planner ? this.planner.panel() : null,
      el('div', { class: 'players' },
        el('div', { class: 'captures', 'data-testid': 'analysis-captures-black' }, `Black captures: ${this.pos.prisoners.black}`),
        el('div', { class: 'captures', 'data-testid': 'analysis-captures-white' }, `White captures: ${this.pos.prisoners.white}`)),
      el('div', { class: 'actions' },
        b(icon('back', 'Back a move (←)'), 'analysis-back', 'Back a move (←)', () => here.parent && this.go(here.parent)),
        b(icon('forward', 'Forward (→)'), 'analysis-forward', 'Forward (→)', () => here.children[0] && this.go(here.children[0])),
        b('Pass', 'analysis-pass', 'Pass', () => this.play('pass')),
        b('Copy link', 'analysis-share', 'Copy a link to this line', () => this.share()),
        this.conn.token && !this.planner ? b('Save & share', 'analysis-save', 'Store this board with every variation on the server, to share its link', () => this.save()) : null),
      this.saved && !this.planner ? el('div', { class: 'small' }, `Saved review${this.owner ? ` by ${this.owner}` : ''}: `,
        el('a', { href: `#/analysis?review=${encodeURIComponent(this.saved)}`, 'data-testid': 'review-link' }, `review ${this.saved}`),
        this.game ? el('span', {}, ' · from ', el('a', { href: `#/game/${encodeURIComponent(this.game)}` }, `game ${this.game}`)) : null) : null,
      el('div', { class: 'review' }, el('div', { class: 'small muted' }, variations.length ? 'Next moves here:' : 'No move tried here yet.'),
        el('div', { class: 'actions', 'data-testid': 'variations' }, variations)),
      el('details', { class: 'review', open: true }, el('summary', {}, 'This line (* where it branches)'),
        el('ol', { class: 'move-list', 'data-testid': 'analysis-moves' }, moves)),
      el('div', { class: 'meta small' },
        el('label', {}, 'Load an SGF file: ', file),
        el('div', { class: 'links' }, el('a', { href: '#/archive' }, 'Archive'), el('a', { href: '#/' }, 'Back to the lobby'))));
  }

  async share() {
    const link = location.href;
    try {
      await navigator.clipboard.writeText(link);
      toast('Link copied: it opens this line on a new analysis board', 'ok');
    } catch {
      toast(`The link to this line: ${link}`, 'info');
    }
  }

  async open(file) {
    if (!file) return;
    try {
      const game = readSgf(await file.text());
      this.load(game.size, game.setup, game.root);
      this.go(game.root);
      toast(`${file.name} loaded: → follows its moves, ↑ ↓ its variations`, 'ok');
    } catch (err) {
      showError(new Error(`This SGF file cannot be read: ${err.message}`));
    }
  }
}
