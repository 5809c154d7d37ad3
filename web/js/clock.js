// Draws a ticking clock from the server's clock view (client-protocol/clocks.md): the
// running side's time since the view is spent the way its time system spends it. The
// server alone decides a loss on time; this only shows what is left. A correspondence
// clock stands still through its player's weekend, which the view names. For review,
// each move's clocks and the time it took (MoveTimes).

import { formatMs } from './ui.js';

/**
 * What one side's clock shows `elapsed` ms after `view` (that side's part of a clock
 * view), under the time control `tc` (the game's `settings.clock`).
 * Returns `{main, extra, low, period}`: the big time, a line about periods or blocks,
 * whether time is short, and the byo-yomi period or per-move time being spent (null in
 * main time and other systems; the spoken count follows it): `{left, length,
 * periodsLeft}`, the ms left in it, its full length, and the periods left counting it
 * (0, with nothing left, once the last has run out).
 */
export function showClock(tc, view, elapsed) {
  const e = Math.max(0, elapsed);
  switch (tc.system) {
    case 'absolute':
    case 'fischer': {
      const left = view.main_ms - e;
      const extra = tc.system === 'fischer' ? `+${formatMs(tc.increment_ms)} a move` : 'sudden death';
      return { main: formatMs(left), extra, low: left < 30000, period: null };
    }
    case 'byoyomi': {
      const P = tc.period_ms;
      if (e < view.main_ms) {
        const left = view.main_ms - e;
        return { main: formatMs(left), extra: periodsText(view.periods_left, P), low: false, period: null };
      }
      const over = e - view.main_ms;
      if (over < view.period_ms) {
        const left = view.period_ms - over;
        const period = { left, length: P, periodsLeft: view.periods_left };
        return { main: formatMs(left), extra: byoyomiText(view.periods_left, P), low: view.periods_left <= 1 || left < 10000, period };
      }
      const past = over - view.period_ms;
      const used = 1 + Math.floor(past / P);
      if (used >= view.periods_left) return { main: formatMs(0), extra: 'no periods left', low: true, period: { left: 0, length: P, periodsLeft: 0 } };
      const left = P - (past % P);
      const period = { left, length: P, periodsLeft: view.periods_left - used };
      return { main: formatMs(left), extra: byoyomiText(view.periods_left - used, P), low: view.periods_left - used <= 1 || left < 10000, period };
    }
    case 'canadian': {
      if (e < view.main_ms) {
        return { main: formatMs(view.main_ms - e), extra: `then ${tc.moves} moves / ${formatMs(tc.block_ms)}`, low: false, period: null };
      }
      const inBlock = view.period_ms || tc.block_ms;
      const moves = view.moves_left || tc.moves;
      const left = inBlock - (e - view.main_ms);
      return { main: formatMs(left), extra: `${moves} moves in this block`, low: left < 30000, period: null };
    }
    case 'simple': {
      const left = view.period_ms - e;
      const period = { left: Math.max(0, left), length: tc.per_move_ms, periodsLeft: left > 0 ? 1 : 0 };
      return { main: formatMs(left), extra: 'per move', low: left < 10000, period };
    }
    default:
      return null;
  }
}

/**
 * The time a clock running since `since` has used by `now` (both Date.now() scale),
 * less what of `rest` it stood still: the running side's weekend (`{from, until}`, local
 * ms, `from` -Infinity when under way at the view; client-protocol/clocks.md, `weekend`).
 */
export function runningTime(since, now, rest) {
  const all = Math.max(0, now - since);
  if (!rest) return all;
  return all - Math.max(0, Math.min(now, rest.until) - Math.max(since, rest.from));
}

/** Whether `now` falls in `rest` (as in runningTime): the clock stands still. */
export function resting(rest, now) {
  return !!rest && now >= rest.from && now < rest.until;
}

function periodsText(periods, P) {
  return `then ${periods} × ${formatMs(P)}`;
}

function byoyomiText(periods, P) {
  return periods === 1 ? `last period of ${formatMs(P)}` : `byo-yomi · ${periods} × ${formatMs(P)}`;
}

/**
 * How long an opponent must be away before a claim (client-protocol/competition.md,
 * claim_win): `claim_after_ms` for an untimed game; for a timed one a tenth of a player's
 * whole time (main time and all overtime), at least 10 s and at most `claim_after_ms`.
 */
export function claimWaitMs(settings) {
  const c = settings.clock;
  const whole = {
    absolute: c.main_ms,
    fischer: c.main_ms,
    byoyomi: c.main_ms + c.periods * c.period_ms,
    canadian: c.main_ms + c.block_ms,
    simple: c.per_move_ms,
  }[c.system];
  if (whole === undefined) return settings.claim_after_ms;
  return Math.min(settings.claim_after_ms, Math.max(10000, Math.floor(whole / 10)));
}

/**
 * Events after which the time between two moves is not all the mover's thinking: the
 * clocks stopped or were set anew in between.
 */
const STOPS = new Set(['paused', 'move_sealed', 'referee_paused', 'clock_adjusted', 'presence', 'scoring_started', 'play_resumed', 'game_began']);

/** Both clocks as a game of time control `tc` starts (null for an untimed game). */
export function startView(tc) {
  if (!tc || tc.system === 'none') return null;
  const side = () => ({ main_ms: tc.main_ms || 0, periods_left: tc.periods || 0, period_ms: tc.period_ms || tc.block_ms || tc.per_move_ms || 0, moves_left: tc.moves || 0 });
  return { black: side(), white: side(), running: null, paused: false };
}

/**
 * What the mover's clock was charged for a move, from its view as the move began and
 * after it, where the view tells (main time, sudden death, Fischer below its cap); null
 * where it does not (a byo-yomi period or a per-move clock starts afresh).
 */
function charged(tc, before, after) {
  switch (tc.system) {
    case 'absolute': return before.main_ms - after.main_ms;
    case 'fischer': return tc.max_ms && after.main_ms >= tc.max_ms ? null : before.main_ms + tc.increment_ms - after.main_ms;
    case 'byoyomi':
    case 'canadian': return after.main_ms > 0 ? before.main_ms - after.main_ms : null;
    default: return null;
  }
}

/**
 * Each move's clocks and thinking time, for review, from the game's `move_played` events
 * (client-protocol/game.md#move_played: the clocks as of the move, and its `at`). Events
 * come in `seq` order, the record's or the live ones.
 */
export class MoveTimes {
  /** `tc`: the game's time control (`settings.clock`). */
  constructor(tc) {
    this.tc = tc;
    /** Move k is `moves[k - 1]`: `{color, clock, at, lag, stopped, adjusted}`. */
    this.moves = [];
    this.stopped = false;
    this.adjusted = false;
  }

  add(ev) {
    if (ev.type === 'move_played') {
      this.moves[ev.move_number - 1] = {
        color: ev.color, clock: ev.clock || null, at: ev.at, lag: ev.lag_credit_ms || 0, stopped: this.stopped, adjusted: this.adjusted,
      };
      this.stopped = false;
      this.adjusted = false;
    } else if (STOPS.has(ev.type)) {
      this.stopped = true;
      // A referee's correction: the clock's change is not the mover's thinking.
      if (ev.type === 'clock_adjusted') this.adjusted = true;
    }
  }

  /** Takes the moves `other` knows (a whole record, read after the live events began). */
  merge(other) {
    other.moves.forEach((m, i) => { if (m) this.moves[i] = m; });
  }

  /** Both clocks as move `k` left them (0: the start); null where not known. */
  clockAfter(k) {
    return k === 0 ? startView(this.tc) : this.moves[k - 1]?.clock ?? null;
  }

  /**
   * The ms the mover spent on move `k`: what their clock was charged where its view
   * tells, else the time since the opponent's move (less the lag credit) when the clocks
   * ran throughout; null when not known.
   */
  used(k) {
    const m = this.moves[k - 1];
    if (!m) return null;
    const prev = k > 1 ? this.moves[k - 2] : null;
    const before = k === 1 ? startView(this.tc)?.[m.color] : prev?.clock?.[m.color];
    if (before && m.clock && !m.adjusted) {
      const ms = charged(this.tc, before, m.clock[m.color]);
      if (ms !== null) return Math.max(0, ms);
    }
    if (!prev || prev.color === m.color || m.stopped) return null;
    return Math.max(0, m.at - prev.at - m.lag);
  }
}
