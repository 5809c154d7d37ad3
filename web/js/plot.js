// The rating plot of a profile: one pool's history as a line through the rating after
// each game, starting from the rating before the first, over a band of ± one deviation
// (how sure the rating is). Plain SVG scaled to its box, so it fits a phone as well.

import { svg } from './ui.js';

const W = 600;
const H = 220;
const PAD = { left: 48, right: 12, top: 12, bottom: 24 };

/** The points to draw: the rating (and deviation) before the first game, then after each. */
function series(history) {
  if (!history.length) return [];
  const first = history[0];
  return [{ rating: first.rating_before, deviation: first.deviation_before, at: null },
    ...history.map((h) => ({ rating: h.rating, deviation: h.deviation, at: h.at, game: h.game_id }))];
}

/** An SVG plot of `history` (one pool's entries, oldest first). */
export function ratingPlot(history) {
  const points = series(history);
  const low = Math.floor(Math.min(...points.map((p) => p.rating - p.deviation)) / 100) * 100;
  const high = Math.ceil(Math.max(...points.map((p) => p.rating + p.deviation)) / 100) * 100;
  const x = (i) => PAD.left + (i * (W - PAD.left - PAD.right)) / Math.max(1, points.length - 1);
  const y = (r) => PAD.top + ((high - r) * (H - PAD.top - PAD.bottom)) / Math.max(1, high - low);
  const upper = points.map((p, i) => `${x(i)},${y(p.rating + p.deviation)}`);
  const lower = points.map((p, i) => `${x(i)},${y(p.rating - p.deviation)}`).reverse();
  const step = Math.max(100, Math.ceil((high - low) / 500) * 100);
  const grid = [];
  for (let r = low; r <= high; r += step) {
    grid.push(svg('line', { class: 'plot-grid', x1: PAD.left, x2: W - PAD.right, y1: y(r), y2: y(r) }),
      svg('text', { class: 'plot-label', x: PAD.left - 6, y: y(r) + 4, 'text-anchor': 'end' }, String(r)));
  }
  const day = (ms) => new Date(ms).toLocaleDateString();
  const last = points[points.length - 1];
  return svg('svg', { class: 'rating-plot', viewBox: `0 0 ${W} ${H}`, role: 'img', 'data-testid': 'rating-plot',
    'aria-label': `Rating from ${Math.round(points[0].rating)} to ${Math.round(last.rating)} over ${points.length - 1} games` },
  grid,
  svg('polygon', { class: 'plot-band', points: [...upper, ...lower].join(' ') }),
  svg('polyline', { class: 'plot-line', points: points.map((p, i) => `${x(i)},${y(p.rating)}`).join(' ') }),
  points.map((p, i) => svg('circle', { class: 'plot-point', cx: x(i), cy: y(p.rating), r: 3.5, 'data-testid': 'plot-point', 'data-rating': p.rating.toFixed(1) },
    svg('title', {}, `${Math.round(p.rating)} ± ${Math.round(p.deviation)}${p.at ? ` · ${day(p.at)}` : ' · start'}`))),
  svg('text', { class: 'plot-label', x: PAD.left, y: H - 6 }, 'start'),
  last.at ? svg('text', { class: 'plot-label', x: W - PAD.right, y: H - 6, 'text-anchor': 'end' }, day(last.at)) : null);
}
