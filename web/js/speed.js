// Speed classes, one set of names for the whole client: the server's own
// (client-protocol/lobby.md#speed-classes), which an automatch request names and by which
// the lobby files and filters seeks.

/** Moves per player the classes assume when they add up a clock's time. */
const MOVES = 40;
const MINUTE = 60000;

/** The classes, fastest first: each name and the clock of an automatch game of it. */
export const SPEEDS = [
  { name: 'blitz', game: '3 min + 3×10 s' },
  { name: 'live', game: '10 min + 5×30 s' },
  { name: 'long', game: '60 min + 5×60 s' },
];

/**
 * The class of a time control, as the server reckons it: main time plus 40 times the
 * time per move after it; up to 10 minutes `blitz`, up to 60 `live`, beyond (or no
 * clock) `long`.
 */
export function speed(c) {
  if (!c || c.system === 'none') return 'long';
  const perMove = { fischer: c.increment_ms, byoyomi: c.period_ms, canadian: c.moves ? c.block_ms / c.moves : 0, simple: c.per_move_ms }[c.system] || 0;
  const total = (c.main_ms || 0) + MOVES * perMove;
  return total <= 10 * MINUTE ? 'blitz' : total <= 60 * MINUTE ? 'live' : 'long';
}
