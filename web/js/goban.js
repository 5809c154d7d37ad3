// The board as SVG: wood, lines, star points and coordinates drawn once; stones, the
// last-move marker, dead-stone marks, the count's territory and the hover shadow drawn
// on every change. One unit is the distance between two lines, so the picture scales to
// any width. Every point carries `data-vertex` (its GTP name) for clicks and tests.
// The board takes the keyboard focus: the arrow keys move a cursor over the points and
// Enter or Space plays there, as a click would.

import { LETTERS, starPoints, vertexName } from './coords.js';
import { svg } from './ui.js';

const MARGIN = 1.25;

export class Goban {
  /** `onPoint(x, y, vertex)` is called when a point is clicked or tapped. */
  constructor(size, onPoint) {
    this.size = size;
    this.onPoint = onPoint;
    this.shadow = null;
    this.board = null;
    const span = size - 1 + 2 * MARGIN;
    this.root = svg('svg', {
      class: 'goban',
      viewBox: `${-MARGIN} ${-MARGIN} ${span} ${span}`,
      role: 'application',
      tabindex: 0,
      'aria-label': `${size}×${size} board: arrow keys move, Enter plays`,
      'data-testid': 'goban',
      'data-size': size,
    });
    this.root.append(this.defs(), this.wood(), this.lines(), this.coordinates());
    this.territory = svg('g', { class: 'territory' });
    this.stones = svg('g', { class: 'stones' });
    this.marks = svg('g', { class: 'marks' });
    this.hover = svg('circle', { class: 'hover-stone', r: 0.47, cx: -10, cy: -10, visibility: 'hidden' });
    this.pendingStone = svg('circle', { class: 'pending-stone', r: 0.47, cx: -10, cy: -10, visibility: 'hidden', 'data-testid': 'pending-stone' });
    this.cursor = svg('rect', { class: 'key-cursor', x: -10, y: -10, width: 0.9, height: 0.9, rx: 0.12, visibility: 'hidden', 'data-testid': 'key-cursor' });
    this.cx = Math.floor(size / 2);
    this.cy = Math.floor(size / 2);
    // The board takes the arrow keys only when the keyboard brought the focus (Tab, or a
    // script); after a click or a tap they stay with the page (review).
    this.keys = false;
    this.pointer = false;
    this.root.addEventListener('pointerdown', () => { this.pointer = true; });
    this.root.addEventListener('keydown', (e) => this.key(e));
    this.root.addEventListener('focus', () => {
      this.keys = !this.pointer;
      this.pointer = false;
      if (this.keys) this.moveCursor(0, 0);
    });
    this.root.addEventListener('blur', () => {
      this.keys = false;
      this.cursor.setAttribute('visibility', 'hidden');
    });
    this.hits = svg('g', { class: 'hits' });
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        this.hits.append(svg('rect', {
          x: x - 0.5, y: y - 0.5, width: 1, height: 1,
          'data-vertex': vertexName(x, y, size), 'data-x': x, 'data-y': y,
        }));
      }
    }
    this.hits.addEventListener('click', (e) => {
      const t = e.target.closest('[data-vertex]');
      if (t) this.onPoint(Number(t.dataset.x), Number(t.dataset.y), t.dataset.vertex);
    });
    this.hits.addEventListener('pointerover', (e) => {
      const t = e.target.closest('[data-vertex]');
      if (t) this.hoverAt(Number(t.dataset.x), Number(t.dataset.y));
    });
    this.hits.addEventListener('pointerleave', () => this.hoverAt(-1, -1));
    this.root.append(this.territory, this.stones, this.marks, this.hover, this.pendingStone, this.cursor, this.hits);
  }

  key(e) {
    if (!this.keys) return;
    const step = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
    if (step) this.moveCursor(...step);
    else if (e.key === 'Enter' || e.key === ' ') this.onPoint(this.cx, this.cy, vertexName(this.cx, this.cy, this.size));
    else return;
    e.preventDefault();
    e.stopPropagation();
  }

  moveCursor(dx, dy) {
    this.cx = Math.max(0, Math.min(this.size - 1, this.cx + dx));
    this.cy = Math.max(0, Math.min(this.size - 1, this.cy + dy));
    this.cursor.setAttribute('x', this.cx - 0.45);
    this.cursor.setAttribute('y', this.cy - 0.45);
    this.cursor.setAttribute('visibility', 'visible');
    this.cursor.dataset.at = vertexName(this.cx, this.cy, this.size);
    this.hoverAt(this.cx, this.cy);
  }

  defs() {
    const gradient = (id, stops) => svg('radialGradient', { id, cx: '35%', cy: '30%', r: '70%' },
      stops.map(([offset, colour]) => svg('stop', { offset, 'stop-color': colour })));
    return svg('defs', {},
      gradient('stone-black', [['0%', '#6b6b6b'], ['35%', '#2a2a2a'], ['100%', '#050505']]),
      gradient('stone-white', [['0%', '#ffffff'], ['70%', '#e9e6df'], ['100%', '#bdb8ad']]),
      svg('linearGradient', { id: 'wood', x1: '0', y1: '0', x2: '1', y2: '1' },
        svg('stop', { offset: '0%', 'stop-color': '#e8c27a' }),
        svg('stop', { offset: '100%', 'stop-color': '#d4a55a' })));
  }

  wood() {
    const span = this.size - 1 + 2 * MARGIN;
    return svg('rect', { class: 'wood', x: -MARGIN, y: -MARGIN, width: span, height: span, rx: 0.25, fill: 'url(#wood)' });
  }

  lines() {
    const n = this.size - 1;
    let d = '';
    for (let i = 0; i <= n; i++) d += `M0 ${i}H${n}M${i} 0V${n}`;
    const g = svg('g', { class: 'grid' }, svg('path', { d }));
    if (n > 0) g.append(svg('rect', { class: 'edge', x: 0, y: 0, width: n, height: n }));
    for (const [x, y] of starPoints(this.size)) g.append(svg('circle', { class: 'star', cx: x, cy: y, r: 0.11 }));
    return g;
  }

  coordinates() {
    const g = svg('g', { class: 'coords', 'aria-hidden': 'true' });
    const n = this.size - 1;
    const off = MARGIN * 0.62;
    for (let i = 0; i < this.size; i++) {
      const letter = LETTERS[i];
      const number = String(this.size - i);
      g.append(
        svg('text', { x: i, y: -off }, letter),
        svg('text', { x: i, y: n + off }, letter),
        svg('text', { x: -off, y: i }, number),
        svg('text', { x: n + off, y: i }, number),
      );
    }
    return g;
  }

  /**
   * Draws a position. `board`: rows from the top; `last`: {x, y} of the last stone;
   * `dead`: Set of "x,y"; `owner`: Map "x,y" → colour or 'dame' (the count), or null;
   * `selected`: Set of "x,y" (free handicap being placed); `shadow`: the colour of the
   * hover stone when a click would play there, else null; `pending`: the vertex a
   * first tap chose, shown as a stone waiting for the second.
   */
  render({ board, last = null, dead = new Set(), owner = null, selected = new Set(), shadow = null, pending = null }) {
    this.board = board;
    this.shadow = shadow;
    const stones = [];
    const marks = [];
    const size = this.size;
    for (let y = 0; y < size; y++) {
      for (let x = 0; x < size; x++) {
        const c = board[y][x];
        const key = `${x},${y}`;
        const vertex = vertexName(x, y, size);
        if (c === 'X' || c === 'O') {
          const colour = c === 'X' ? 'black' : 'white';
          const isDead = dead.has(key);
          stones.push(svg('circle', {
            class: `stone stone-${colour}${isDead ? ' dead' : ''}`,
            cx: x, cy: y, r: 0.47, fill: `url(#stone-${colour})`,
            'data-stone': vertex, 'data-color': colour, 'data-dead': isDead ? 'true' : null,
          }));
          if (isDead) {
            marks.push(svg('path', { class: `dead-mark on-${colour}`, d: `M${x - 0.2} ${y - 0.2}L${x + 0.2} ${y + 0.2}M${x + 0.2} ${y - 0.2}L${x - 0.2} ${y + 0.2}` }));
          }
        } else if (selected.has(key)) {
          stones.push(svg('circle', { class: 'stone stone-black selected', cx: x, cy: y, r: 0.47, fill: 'url(#stone-black)', 'data-selected': vertex }));
        }
      }
    }
    const territory = [];
    if (owner) {
      for (const [key, who] of owner) {
        if (who === 'dame') continue;
        const [x, y] = key.split(',').map(Number);
        territory.push(svg('rect', { class: `owned owned-${who}`, x: x - 0.13, y: y - 0.13, width: 0.26, height: 0.26, 'data-owner': who, 'data-point': vertexName(x, y, size) }));
      }
    }
    if (last && board[last.y][last.x] !== '.') {
      const on = board[last.y][last.x] === 'X' ? 'black' : 'white';
      marks.push(svg('circle', { class: `last-move on-${on}`, cx: last.x, cy: last.y, r: 0.22, 'data-testid': 'last-move', 'data-vertex': vertexName(last.x, last.y, size) }));
    }
    this.stones.replaceChildren(...stones);
    this.marks.replaceChildren(...marks);
    this.territory.replaceChildren(...territory);
    this.hover.setAttribute('class', `hover-stone hover-${shadow || 'none'}`);
    const p = pending && shadow ? this.point(pending) : null;
    this.pendingStone.setAttribute('visibility', p ? 'visible' : 'hidden');
    this.pendingStone.setAttribute('class', `pending-stone hover-${shadow || 'none'}`);
    if (p) {
      this.pendingStone.setAttribute('cx', p.x);
      this.pendingStone.setAttribute('cy', p.y);
      this.pendingStone.dataset.at = pending;
    }
    this.hoverAt(this.hx ?? -1, this.hy ?? -1);
  }

  point(vertex) {
    const t = this.hits.querySelector(`[data-vertex="${vertex}"]`);
    return t ? { x: Number(t.dataset.x), y: Number(t.dataset.y) } : null;
  }

  hoverAt(x, y) {
    this.hx = x;
    this.hy = y;
    const show = this.shadow && x >= 0 && this.board && this.board[y][x] === '.';
    this.hover.setAttribute('visibility', show ? 'visible' : 'hidden');
    if (show) {
      this.hover.setAttribute('cx', x);
      this.hover.setAttribute('cy', y);
    }
  }
}
