// Just enough SGF (FF[4]) for the analysis board: the board size, Black's set-up stones
// and the tree of moves with its variations, read and written; SGF points (`dd`) to and
// from GTP names.

import { parseVertex, vertexName } from './coords.js';

/** A node of a move tree: its move ({color, vertex}, null at the root) and children. */
export class MoveNode {
  constructor(move = null, parent = null) {
    this.move = move;
    this.parent = parent;
    this.children = [];
  }

  /** The child that plays `move`, added when there is none. */
  child(move) {
    let c = this.children.find((n) => n.move.color === move.color && n.move.vertex === move.vertex);
    if (!c) {
      c = new MoveNode(move, this);
      this.children.push(c);
    }
    return c;
  }

  /** The moves from the root to this node. */
  line() {
    const moves = [];
    for (let n = this; n.parent; n = n.parent) moves.unshift(n.move);
    return moves;
  }
}

/** `dd` → `D16` on 19x19; an empty value or `tt` (on boards up to 19) is a pass. */
export function fromSgfPoint(p, size) {
  if (!p || (p === 'tt' && size <= 19)) return 'pass';
  const x = p.charCodeAt(0) - 97;
  const y = p.charCodeAt(1) - 97;
  if (!(x >= 0 && x < size && y >= 0 && y < size)) return null;
  return vertexName(x, y, size);
}

/** Reads one game: `{size, setup: {black, white}, root}` (setup: the AB and AW stones); throws an Error saying what is wrong. */
export function readSgf(text) {
  let i = text.indexOf('(');
  if (i < 0) throw new Error('no SGF game tree in the file');
  const fail = (what) => { throw new Error(`${what} at character ${i}`); };
  const space = () => { while (i < text.length && /\s/.test(text[i])) i++; };
  // A node's properties, as name → list of values.
  const node = () => {
    const props = {};
    i++; // ';'
    for (;;) {
      space();
      const m = /^[A-Za-z]+/.exec(text.slice(i, i + 16));
      if (!m) return props;
      const name = m[0].replace(/[a-z]/g, '');
      i += m[0].length;
      space();
      if (text[i] !== '[') fail(`property ${name} without a value`);
      const values = [];
      while (text[i] === '[') {
        let v = '';
        i++;
        while (i < text.length && text[i] !== ']') {
          if (text[i] === '\\') i++;
          v += text[i++] ?? '';
        }
        if (text[i] !== ']') fail('an unclosed value');
        i++;
        values.push(v);
        space();
      }
      props[name] = values;
    }
  };
  let size = 19;
  let setup = { black: [], white: [] };
  const root = new MoveNode();
  let first = true;
  // A game tree: a sequence of nodes, then its variations.
  const tree = (parent) => {
    i++; // '('
    let at = parent;
    for (;;) {
      space();
      if (text[i] === ';') {
        const props = node();
        if (first) {
          first = false;
          if (props.SZ) size = Number(props.SZ[0].split(':')[0]);
          if (!Number.isInteger(size) || size < 2 || size > 25) fail(`a board size of ${props.SZ} the server does not play`);
          const points = (key) => (props[key] || []).map((p) => fromSgfPoint(p, size)).filter((v) => v && v !== 'pass');
          setup = { black: points('AB'), white: points('AW') };
        }
        for (const [key, color] of [['B', 'black'], ['W', 'white']]) {
          if (!props[key]) continue;
          const vertex = fromSgfPoint(props[key][0], size);
          if (!vertex) fail(`a move off the board (${props[key][0]})`);
          at = at.child({ color, vertex });
        }
      } else if (text[i] === '(') {
        tree(at);
      } else if (text[i] === ')') {
        i++;
        return;
      } else {
        fail('unexpected text');
      }
    }
  };
  tree(root);
  return { size, setup, root };
}

/** Writes a tree of moves as one SGF game, its set stones ({black, white}) and variations included. */
export function writeSgf(size, setup, root) {
  const list = (key, vertices) => (vertices.length ? `${key}${vertices.map((v) => `[${point(v)}]`).join('')}` : '');
  const point = (vertex) => {
    const p = parseVertex(vertex, size);
    return p ? String.fromCharCode(97 + p.x, 97 + p.y) : '';
  };
  const stones = list('AB', setup.black) + list('AW', setup.white);
  const node = (n) => `;${n.move.color === 'black' ? 'B' : 'W'}[${point(n.move.vertex)}]`;
  const after = (n) => {
    if (n.children.length === 1) return node(n.children[0]) + after(n.children[0]);
    return n.children.map((c) => `(${node(c)}${after(c)})`).join('');
  };
  return `(;FF[4]GM[1]CA[UTF-8]SZ[${size}]${stones}${after(root)})`;
}
