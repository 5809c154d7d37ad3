// Positions of a game record, for review: the board, the captures and the last stone
// after each move, replayed from the moves alone (captures by liberties; the server
// already refused every illegal move, so no ko or superko check is needed here).

import { chainAt, neighbours, parseVertex, starPoints, vertexName } from './coords.js';

const STONE = { black: 'X', white: 'O' };

/** The position after each move: `positions[k]` follows move k (0 is the start). */
export class Replay {
  /** `handicap`: vertex names of Black's handicap stones; `ruleset`: the game's. */
  constructor(size, handicap = [], ruleset = null) {
    this.size = size;
    this.positions = [start(size, handicap, ruleset)];
  }

  /** The position after `k` moves, replaying what is not replayed yet. */
  at(moves, k) {
    for (let i = this.positions.length - 1; i < k; i++) {
      this.positions.push(step(this.positions[i], moves[i], this.size));
    }
    return this.positions[k];
  }
}

/**
 * The stones on the board before the first move, as vertex names of each colour: under
 * `ancient-chinese` rules the set stones (座子, docs/RULES.md §9.1: Black on the
 * lower-left and upper-right corner star points, White on the other two), and Black's
 * `handicap` stones.
 */
export function setStones(size, handicap = [], ruleset = null) {
  const stones = { black: [], white: [] };
  if (ruleset === 'ancient-chinese' && size >= 7) {
    const [topLeft, topRight, bottomLeft, bottomRight] = starPoints(size);
    const name = ([x, y]) => vertexName(x, y, size);
    stones.white.push(name(topLeft), name(bottomRight));
    stones.black.push(name(topRight), name(bottomLeft));
  }
  stones.black.push(...handicap);
  return stones;
}

/** The board before the first move, with the set stones `stones` ({black, white}). */
export function place(size, stones) {
  const board = Array.from({ length: size }, () => Array(size).fill('.'));
  for (const [colour, list] of Object.entries(stones)) {
    for (const v of list) {
      const p = parseVertex(v, size);
      if (p) board[p.y][p.x] = STONE[colour];
    }
  }
  return { board, prisoners: { black: 0, white: 0 }, last: null };
}

/** The board before the first move of a game with these `handicap` stones and rules. */
export function start(size, handicap = [], ruleset = null) {
  return place(size, setStones(size, handicap, ruleset));
}

/** The position after `move` ({color, vertex}) is played on `pos`. */
export function step(pos, move, size) {
  const board = pos.board.map((row) => row.slice());
  const prisoners = { ...pos.prisoners };
  const p = parseVertex(move.vertex, size);
  if (!p) return { board, prisoners, last: null };
  const me = STONE[move.color];
  const them = me === 'X' ? 'O' : 'X';
  board[p.y][p.x] = me;
  const free = (chain) => chain.some(([x, y]) => neighbours(x, y, size).some(([nx, ny]) => board[ny][nx] === '.'));
  const take = (chain, by) => {
    for (const [x, y] of chain) board[y][x] = '.';
    prisoners[by] += chain.length;
  };
  for (const [nx, ny] of neighbours(p.x, p.y, size)) {
    if (board[ny][nx] !== them) continue;
    const chain = chainAt(board, nx, ny);
    if (!free(chain)) take(chain, move.color);
  }
  // Suicide, where the rules allow it: the opponent takes the mover's stones.
  const own = chainAt(board, p.x, p.y);
  if (!free(own)) take(own, move.color === 'black' ? 'white' : 'black');
  return { board, prisoners, last: board[p.y][p.x] === '.' ? null : p };
}
