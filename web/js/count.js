// The count as the marks stand, for display during the dead-stone phase (the server's
// own count, sent with `game_ended`, is the one that decides). Area counting for
// `chinese` (dame split in half, docs/RULES.md §6.2) and `tromp-taylor` (dame to nobody);
// territory plus prisoners for `japanese` and `korean`; under `ancient-chinese` area
// counting less one point per living group (还棋头, docs/RULES.md §9.1).

import { chainAt, neighbours } from './coords.js';

/**
 * `board`: rows from the top ('X', 'O', '.'); `dead`: a Set of "x,y" keys;
 * `settings`: the game's settings; `prisoners`: {black, white}.
 * Returns {black, white, margin, result, owner, tax} where owner maps "x,y" of every empty
 * or dead point to 'black', 'white' or 'dame', and tax is {black, white} (the living
 * groups each side gave a point back for) under the ancient rules, else null.
 */
export function countScore(board, dead, settings, prisoners) {
  const size = board.length;
  const grid = board.map((row, y) => Array.from(row, (c, x) => (dead.has(`${x},${y}`) ? '.' : c)));
  const owner = new Map();
  const seen = new Set();
  let black = 0;
  let white = 0;
  let blackArea = 0;
  let whiteArea = 0;
  let dame = 0;
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const c = grid[y][x];
      if (c === 'X') black += 1;
      else if (c === 'O') white += 1;
      if (c !== '.' || seen.has(`${x},${y}`)) continue;
      // An empty region and the colours around it.
      const region = [];
      const borders = new Set();
      const stack = [[x, y]];
      seen.add(`${x},${y}`);
      while (stack.length) {
        const [cx, cy] = stack.pop();
        region.push(`${cx},${cy}`);
        for (const [nx, ny] of neighbours(cx, cy, size)) {
          const n = grid[ny][nx];
          if (n === '.') {
            if (!seen.has(`${nx},${ny}`)) {
              seen.add(`${nx},${ny}`);
              stack.push([nx, ny]);
            }
          } else borders.add(n);
        }
      }
      const who = borders.size === 1 ? (borders.has('X') ? 'black' : 'white') : 'dame';
      for (const k of region) owner.set(k, who);
      if (who === 'black') blackArea += region.length;
      else if (who === 'white') whiteArea += region.length;
      else dame += region.length;
    }
  }
  const komi = settings.komi ?? 7.5;
  let b;
  let w;
  let margin;
  let tax = null;
  if (settings.ruleset === 'japanese' || settings.ruleset === 'korean') {
    let deadBlack = 0;
    let deadWhite = 0;
    for (const k of dead) {
      const [x, y] = k.split(',').map(Number);
      if (board[y][x] === 'X') deadBlack += 1;
      else if (board[y][x] === 'O') deadWhite += 1;
    }
    b = blackArea + prisoners.black + deadWhite;
    w = whiteArea + prisoners.white + deadBlack;
    margin = b - w - komi;
  } else {
    const split = settings.ruleset === 'tromp-taylor' ? 0 : dame / 2;
    b = black + blackArea + split;
    w = white + whiteArea + split;
    const back = settings.ruleset === 'chinese' && settings.handicap >= 2 ? settings.handicap : 0;
    if (settings.ruleset === 'ancient-chinese') {
      tax = groups(grid);
      b -= tax.black;
      w -= tax.white;
    }
    margin = b - w - komi - back;
  }
  const result = margin > 0 ? `B+${margin}` : margin < 0 ? `W+${-margin}` : '0';
  return { black: b, white: w, margin, result, owner, tax };
}

/** The chains of each colour on `grid` (rows of 'X', 'O', '.'). */
function groups(grid) {
  const size = grid.length;
  const seen = new Set();
  const found = { black: 0, white: 0 };
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const c = grid[y][x];
      if (c === '.' || seen.has(`${x},${y}`)) continue;
      for (const [cx, cy] of chainAt(grid, x, y)) seen.add(`${cx},${cy}`);
      found[c === 'X' ? 'black' : 'white'] += 1;
    }
  }
  return found;
}
