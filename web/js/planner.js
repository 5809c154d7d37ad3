// The planner of conditional moves on the analysis board (`#/analysis?game=<id>&plan=1`,
// client-protocol/correspondence.md#plans): in a correspondence game you play, the board
// starts at the game's position with your stored plan grown on it as a tree; you enter
// your opponent's move then your reply, as deep and with as many branches as you like,
// delete a branch, and store the tree with `plan`. On your own turn the tree begins with
// your move, which storing plays. What the server refuses is said under the tree.
//
// A tree changed and not stored is a draft, kept in this browser for the player and game
// (localStorage, bounded), so that a reconnect or a reload, which bring the stored plan
// back from the server, show the draft again, marked as such, to store or discard. A draft
// made at an earlier position (the game moved on: a reply was played from the plan, or the
// opponent played off it and the server dropped the plan), or over a stored plan that has
// changed since, is dropped, and the planner says so.

import { setStones } from './replay.js';
import { MoveNode } from './sgf.js';
import { el, other, showError, toast } from './ui.js';

const DRAFTS_KEY = 'tengen.planDrafts';
/** The drafts kept in this browser, the oldest dropped first. */
const MAX_DRAFTS = 20;
/** A draft larger than a plan the server takes (16 KiB as JSON) is not kept. */
const MAX_DRAFT_CHARS = 16 * 1024;

/** The drafts of this browser, by `<user>/<game>`: `{at, base, tree, t}`. */
const drafts = {
  all() {
    try {
      const all = JSON.parse(localStorage.getItem(DRAFTS_KEY));
      return all && typeof all === 'object' ? all : {};
    } catch {
      return {};
    }
  },
  get(key) {
    const d = this.all()[key];
    return d && typeof d.at === 'number' && typeof d.base === 'string' && isTree(d.tree) ? d : null;
  },
  /** Keeps `draft` under `key` (none when null or too large), within MAX_DRAFTS. */
  put(key, draft) {
    const all = this.all();
    delete all[key];
    if (draft && JSON.stringify(draft).length <= MAX_DRAFT_CHARS) all[key] = { ...draft, t: Date.now() };
    const keys = Object.keys(all).sort((a, b) => all[b].t - all[a].t);
    for (const old of keys.slice(MAX_DRAFTS)) delete all[old];
    try {
      localStorage.setItem(DRAFTS_KEY, JSON.stringify(all));
    } catch {
      // Storage full or refused: the draft lives on in the page until it is closed.
    }
  },
};

/** Whether `t` has the shape treeOf gives (a kept draft is read back from storage). */
function isTree(t) {
  return Array.isArray(t) && t.every((e) => Array.isArray(e) && typeof e[0] === 'string' && isTree(e[1]));
}

/** The tree below `node` as data: `[[vertex, below], …]`, colours left implied. */
function treeOf(node) {
  return node.children.map((c) => [c.move.vertex, treeOf(c)]);
}

/** A plan's `replies` as such a tree: each of their moves with your reply below it. */
function repliesTree(replies) {
  return replies.map((b) => [b.if, [[b.play, repliesTree(b.then || [])]]]);
}

/** Grows `tree` (as treeOf makes it) under `node`, `colour` to play first. */
function grow(node, tree, colour) {
  for (const [vertex, below] of tree) grow(node.child({ color: colour, vertex }), below, other(colour));
}

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

export class Planner {
  /** `board`: the analysis view it plans on (its tree, its current node, `go`). */
  constructor(conn, gameId, board) {
    this.conn = conn;
    this.id = gameId;
    this.board = board;
    this.game = null;
    this.error = null;
    this.state = 'Loading the game…';
    /** The latest snapshot, which Discard goes back to. */
    this.snap = null;
    /** The stored plan as treeOf writes it (JSON), to tell a draft from it. */
    this.saved = '[]';
    /** The draft on the board (`{at, base, tree}`), or null: the stored plan is shown. */
    this.draft = null;
    /** Why a draft was dropped, until the tree changes again. */
    this.notice = null;
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

  /**
   * Puts the game's position on the board, with the draft as its tree if there is one
   * for this position and stored plan, else the stored plan.
   */
  load(s) {
    this.snap = s;
    const size = s.settings.board_size;
    this.game = { you: s.you, ownTurn: s.to_move === s.you, moves: s.moves.length, inPlay: s.phase === 'play' };
    this.board.load(size, setStones(size, s.handicap_stones, s.settings.ruleset), new MoveNode());
    let at = this.board.tree;
    for (const m of s.moves) at = at.child({ color: m.color, vertex: m.vertex });
    this.root = at;
    this.saved = JSON.stringify(s.plan && !this.game.ownTurn ? repliesTree(s.plan.replies) : []);
    const kept = this.draft;
    this.draft = null;
    if (s.you && s.settings.correspondence) {
      // A game no longer in play has nothing to plan: its draft goes.
      if (this.game.inPlay) this.draft = this.currentDraft(kept);
      else this.forget();
    }
    grow(at, this.draft ? this.draft.tree : JSON.parse(this.saved), s.to_move);
    this.state = !s.settings.correspondence ? 'Plans are for correspondence games.'
      : !s.you ? 'Only the game\'s players make plans.'
        : !this.game.inPlay ? 'The game is not in play: there is nothing to plan.'
          : this.draft ? this.draftState() : s.plan ? 'Your stored plan.' : 'No plan stored.';
    this.board.go(at);
  }

  /** Where this player's draft for this game is kept. */
  key() {
    return `${this.conn.user?.id}/${this.id}`;
  }

  /**
   * The draft (`kept`, the page's own, else the one kept in this browser) if it was made
   * at this position over this stored plan; any other is dropped, and the notice says why.
   */
  currentDraft(kept) {
    const draft = kept ?? drafts.get(this.key());
    if (!draft) return null;
    const why = draft.at !== this.game.moves ? `it was made at move ${draft.at} and the game has moved on to move ${this.game.moves}`
      : draft.base !== this.saved ? 'your stored plan has changed since it was made'
        : null;
    if (!why) return draft;
    this.forget();
    this.notice = `Your unsaved changes to the plan were dropped: ${why}.`;
    return null;
  }

  draftState() {
    return this.saved === '[]' ? 'Draft, not stored yet.' : 'Draft, not stored: it differs from your stored plan.';
  }

  /** The draft is gone: stored, discarded or stale. */
  forget() {
    this.draft = null;
    drafts.put(this.key(), null);
  }

  /** Goes back to the stored plan, dropping the draft. */
  discard() {
    this.forget();
    this.notice = null;
    this.error = null;
    if (this.snap) this.load(this.snap);
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
    this.changed();
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
      this.notice = null;
      this.forget();
      this.state = msg.replies.length ? 'Your stored plan.' : 'No plan stored.';
      toast(msg.replies.length ? 'Plan stored' : 'Plan dropped', 'ok');
      // The tree as stored (an opponent's move left without a reply is not); on your own
      // turn the move is played, and the game's next snapshot brings the plan.
      if (!g.ownTurn) {
        this.load({ ...this.snap, plan: msg.replies.length ? { move_number: msg.move_number, replies: msg.replies } : null });
        return;
      }
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
      el('p', { class: `small${this.draft ? ' plan-draft' : ''}`, 'data-testid': 'plan-state', 'data-draft': this.draft ? 'true' : 'false' }, this.state),
      this.notice ? el('p', { class: 'plan-notice small', role: 'status', 'data-testid': 'plan-notice' }, this.notice) : null,
      top ? el('ul', { class: 'plan-tree', 'data-testid': 'plan-tree' }, top.children.map(item)) : null,
      this.error ? el('p', { class: 'plan-error small', role: 'alert', 'data-testid': 'plan-error', 'data-code': this.error.code }, `Not stored: ${this.error.message}`) : null,
      el('div', { class: 'actions' },
        b('Store plan', 'plan-store', () => this.store(), { class: 'primary', disabled: !g?.inPlay }),
        b('Delete this branch', 'plan-delete', () => this.deleteBranch(), { disabled: !this.inPlan(here) }),
        b('Game position', 'plan-root', () => this.root && this.board.go(this.root)),
        b('Discard draft', 'plan-discard', () => this.discard(), { disabled: !this.draft }),
        b('Drop plan', 'plan-drop', () => this.store([]), { disabled: !g?.inPlay || g.ownTurn })));
  }

  /** The tree changed: it is a draft, kept, unless it is the stored plan again. */
  changed() {
    if (!this.game?.inPlay) return;
    const tree = treeOf(this.root);
    this.notice = null;
    if (JSON.stringify(tree) === this.saved) {
      this.forget();
      this.state = this.saved === '[]' ? 'No plan stored.' : 'Your stored plan.';
      return;
    }
    this.draft = { at: this.game.moves, base: this.saved, tree };
    drafts.put(this.key(), this.draft);
    this.state = this.draftState();
  }
}
