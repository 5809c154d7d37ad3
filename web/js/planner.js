// The planner of conditional moves on the analysis board (`#/analysis?game=<id>&plan=1`,
// client-protocol/correspondence.md#plans): in a correspondence game you play, the board
// starts at the game's position with your stored plan grown on it as a tree; you enter
// your opponent's move then your reply, as deep and with as many branches as you like,
// delete a branch, and store the tree with `plan`. On your own turn the tree begins with
// your move, which storing plays. What the server refuses is said under the tree.

import { setStones } from './replay.js';
import { MoveNode } from './sgf.js';
import { el, other, showError, toast } from './ui.js';

/**
 * The tree below `node` (your opponent to move there) as a plan's `replies`: each of
 * their moves that has your reply. Throws on a pass or on two replies to one move.
 */
export function toReplies(node) {
  const replies = [];
  for (const theirs of node.children) {
    if (!theirs.children.length) continue;
    const [reply, ...more] = theirs.children;
    if (theirs.move.vertex === 'pass' || reply.move.vertex === 'pass') throw new Error('passes are not planned');
    if (more.length) throw new Error(`after ${theirs.move.vertex} the tree has ${more.length + 1} replies of yours: keep one`);
    const branch = { if: theirs.move.vertex, play: reply.move.vertex };
    const then = toReplies(reply);
    if (then.length) branch.then = then;
    replies.push(branch);
  }
  return replies;
}

/** Grows a plan's `replies` under `node`, where `you`'s opponent is to move. */
export function growTree(node, replies, you) {
  for (const b of replies) {
    const reply = node.child({ color: other(you), vertex: b.if }).child({ color: you, vertex: b.play });
    growTree(reply, b.then || [], you);
  }
}

export class Planner {
  /** `board`: the analysis view it plans on (its tree, its current node, `go`). */
  constructor(conn, gameId, board) {
    this.conn = conn;
    this.id = gameId;
    this.board = board;
    this.game = null;
    this.error = null;
    this.state = 'Loading the game…';
    this.onMessage = (e) => this.frame(e.detail);
    this.onReady = () => this.join();
  }

  start() {
    this.conn.addEventListener('message', this.onMessage);
    this.conn.addEventListener('ready', this.onReady);
    if (this.conn.ready) this.join();
  }

  stop() {
    this.conn.removeEventListener('message', this.onMessage);
    this.conn.removeEventListener('ready', this.onReady);
    if (this.conn.ready) this.conn.request({ type: 'leave', game_id: this.id }).catch((err) => err.code && showError(err));
  }

  async join() {
    try {
      await this.conn.request({ type: 'join', game_id: this.id });
    } catch (err) {
      showError(err);
    }
  }

  frame(msg) {
    if (msg.game_id !== this.id) return;
    if (msg.type === 'snapshot') this.load(msg);
    // The game moved on (a move, maybe one from the plan): plan from where it is now.
    else if (msg.type === 'move_played' || msg.type === 'game_ended') {
      this.conn.request({ type: 'leave', game_id: this.id }).then(() => this.join(), (err) => err.code && showError(err));
    }
  }

  /** Puts the game's position on the board, with the stored plan as its tree. */
  load(s) {
    const size = s.settings.board_size;
    this.game = { you: s.you, ownTurn: s.to_move === s.you, moves: s.moves.length, inPlay: s.phase === 'play' };
    this.board.load(size, setStones(size, s.handicap_stones, s.settings.ruleset), new MoveNode());
    let at = this.board.tree;
    for (const m of s.moves) at = at.child({ color: m.color, vertex: m.vertex });
    this.root = at;
    if (s.plan && !this.game.ownTurn) growTree(at, s.plan.replies, s.you);
    this.state = !s.settings.correspondence ? 'Plans are for correspondence games.'
      : !s.you ? 'Only the game\'s players make plans.'
        : !this.game.inPlay ? 'The game is not in play: there is nothing to plan.'
          : s.plan ? 'Your stored plan.' : 'No plan stored.';
    this.board.go(at);
  }

  /** Whether `node` is in the plan (below the game's position). */
  inPlan(node) {
    for (let n = node; n; n = n.parent) if (n === this.root) return n !== node;
    return false;
  }

  /**
   * Takes the current branch out of the tree: your opponent's move with your reply and
   * all that follows (from your reply, its opponent's move).
   */
  deleteBranch() {
    const here = this.board.node;
    if (!this.inPlan(here)) return;
    const n = here.move.color === this.game.you && here.parent !== this.root ? here.parent : here;
    n.parent.children.splice(n.parent.children.indexOf(n), 1);
    this.state = 'Changed, not stored yet.';
    this.board.go(n.parent);
  }

  async store(replies = null) {
    const g = this.game;
    const msg = { type: 'plan', game_id: this.id, move_number: g.moves + (g.ownTurn ? 2 : 1) };
    try {
      let from = this.root;
      if (g.ownTurn && replies === null) {
        if (this.root.children.length !== 1) throw new Error('it is your move: play it first (one move), then plan the answers to it');
        from = this.root.children[0];
        msg.after = from.move.vertex;
      }
      msg.replies = replies ?? toReplies(from);
    } catch (err) {
      this.error = { code: 'not_sent', message: err.message };
      this.board.draw();
      return;
    }
    try {
      await this.conn.request(msg);
      this.error = null;
      this.state = msg.replies.length ? 'Your stored plan.' : 'No plan stored.';
      toast(msg.replies.length ? 'Plan stored' : 'Plan dropped', 'ok');
    } catch (err) {
      this.error = { code: err.code || 'offline', message: err.message };
    }
    this.board.draw();
  }

  /** The plan's part of the analysis board's side panel. */
  panel() {
    const g = this.game;
    const here = this.board.node;
    const item = (node) => {
      const [reply] = node.children;
      const label = reply ? `if ${node.move.vertex} → ${reply.move.vertex}` : `if ${node.move.vertex} → ?`;
      const current = here === node || here === reply;
      return el('li', { 'data-testid': 'plan-branch', 'data-if': node.move.vertex, 'data-play': reply?.move.vertex ?? '' },
        el('button', { type: 'button', class: current ? 'current' : null, onclick: () => this.board.go(reply || node) }, label),
        reply && reply.children.length ? el('ul', {}, reply.children.map(item)) : null);
    };
    // On your own turn the tree starts with your move.
    const top = g?.ownTurn ? this.root?.children[0] : this.root;
    const b = (text, testid, onclick, attrs = {}) => el('button', { type: 'button', 'data-testid': testid, onclick, ...attrs }, text);
    return el('section', { class: 'review plan', 'data-testid': 'planner' },
      el('h3', {}, 'Plan of conditional moves'),
      el('p', { class: 'small muted' }, g?.ownTurn
        ? 'It is your move: play it, then enter your opponent\'s possible answers, each with your reply. Storing the plan plays your move.'
        : 'Enter your opponent\'s possible move, then your reply; go back up the tree to add other branches. When they play a move of the plan, your reply is played at once.'),
      el('p', { class: 'small', 'data-testid': 'plan-state' }, this.state),
      top ? el('ul', { class: 'plan-tree', 'data-testid': 'plan-tree' }, top.children.map(item)) : null,
      this.error ? el('p', { class: 'plan-error small', role: 'alert', 'data-testid': 'plan-error', 'data-code': this.error.code }, `Not stored: ${this.error.message}`) : null,
      el('div', { class: 'actions' },
        b('Store plan', 'plan-store', () => this.store(), { class: 'primary', disabled: !g?.inPlay }),
        b('Delete this branch', 'plan-delete', () => this.deleteBranch(), { disabled: !this.inPlan(here) }),
        b('Game position', 'plan-root', () => this.root && this.board.go(this.root)),
        b('Drop plan', 'plan-drop', () => this.store([]), { disabled: !g?.inPlay || g.ownTurn })));
  }

  /** Changing the tree makes it unsaved. */
  changed() {
    this.state = 'Changed, not stored yet.';
  }
}
