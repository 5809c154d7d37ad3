// GTP coordinates: a column letter A–Z without I, then the row counted from the bottom.
// Boards are arrays of rows from the top, as the snapshot sends them.

export const LETTERS = 'ABCDEFGHJKLMNOPQRSTUVWXYZ';

/** The vertex name of column `x` (0 = left) and row `y` (0 = top). */
export function vertexName(x, y, size) {
  return LETTERS[x] + String(size - y);
}

/** `{x, y}` of a vertex name, or null for `pass` or a name off the board. */
export function parseVertex(name, size) {
  if (typeof name !== 'string' || name.toLowerCase() === 'pass') return null;
  const x = LETTERS.indexOf(name[0].toUpperCase());
  const row = Number(name.slice(1));
  if (x < 0 || x >= size || !Number.isInteger(row) || row < 1 || row > size) return null;
  return { x, y: size - row };
}

/** The four neighbours of a point that are on the board. */
export function neighbours(x, y, size) {
  const out = [];
  if (x > 0) out.push([x - 1, y]);
  if (x < size - 1) out.push([x + 1, y]);
  if (y > 0) out.push([x, y - 1]);
  if (y < size - 1) out.push([x, y + 1]);
  return out;
}

/** The connected stones of one colour through (x, y), as [x, y] pairs. */
export function chainAt(board, x, y) {
  const size = board.length;
  const colour = board[y][x];
  if (colour === '.') return [];
  const seen = new Set([y * size + x]);
  const stack = [[x, y]];
  const chain = [];
  while (stack.length) {
    const [cx, cy] = stack.pop();
    chain.push([cx, cy]);
    for (const [nx, ny] of neighbours(cx, cy, size)) {
      const k = ny * size + nx;
      if (!seen.has(k) && board[ny][nx] === colour) {
        seen.add(k);
        stack.push([nx, ny]);
      }
    }
  }
  return chain;
}

/** Traditional star points (hoshi) of a board, as [x, y] pairs. */
export function starPoints(size) {
  if (size < 7) return [];
  const e = size >= 13 ? 3 : 2;
  const far = size - 1 - e;
  const mid = (size - 1) / 2;
  const points = [[e, e], [far, e], [e, far], [far, far]];
  if (size % 2 === 1) {
    points.push([mid, mid]);
    if (size >= 15) points.push([mid, e], [mid, far], [e, mid], [far, mid]);
  }
  return points;
}
