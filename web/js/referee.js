// The referee in the web client (client-protocol/referee.md): the lines a game shows for
// referee events, the game's referee box (a player's "call the referee", anyone's
// "report", and a referee's actions with a reason), and the referee's own view,
// `#/referee`: the games assigned to the referee, the open calls and reports, each
// leading to its game.

import { colourName, el, fill, showError, toast } from './ui.js';

/** Events a referee's action or a player's call adds to a game's log. */
export const REFEREE_EVENTS = new Set([
  'warned', 'clock_adjusted', 'referee_paused', 'referee_resumed', 'adjournment_scheduled',
  'ruled', 'result_changed', 'illegal_attempt', 'referee_called',
]);

const RULINGS = {
  black_wins: 'Black wins', white_wins: 'White wins', draw: 'a draw',
  both_lose: 'both players lose', replay: 'the game is replayed', annul: 'the game is annulled',
};

/** Whether `user` may act as a referee somewhere (the server decides for each game). */
export function isReferee(user) {
  return !!user && (user.role === 'referee' || user.role === 'admin');
}

/** A referee event in words, for the game's referee log. */
export function refereeLine(ev) {
  const by = ev.by ? `Referee ${ev.by.name}` : 'The referee';
  const why = ev.reason ? `: ${ev.reason}` : '';
  switch (ev.type) {
    case 'warned': return `${by} warned ${colourName(ev.color)} (warning ${ev.warnings})${why}`;
    case 'clock_adjusted': {
      const s = Math.abs(ev.delta_ms) / 1000;
      return `${by} ${ev.delta_ms > 0 ? 'gave' : 'took'} ${s} s ${ev.delta_ms > 0 ? 'to' : 'from'} ${colourName(ev.color)}${why}`;
    }
    case 'referee_paused': return `${by} paused the game${why}`;
    case 'referee_resumed': return `${by} resumed the game${why}`;
    case 'adjournment_scheduled': return `${by} adjourns the game at ${new Date(ev.at).toLocaleTimeString()}${why}`;
    case 'ruled': return `${by} ruled: ${RULINGS[ev.ruling] || ev.ruling}${why}`;
    case 'result_changed': return `${by} changed the result from ${ev.previous} to ${ev.result}${why}`;
    case 'illegal_attempt': return `${colourName(ev.color)} tried an illegal move at ${ev.vertex} (${ev.reason}) and loses the turn`;
    case 'referee_called': return `${colourName(ev.color)} called the referee: ${ev.message}`;
    default: return ev.type;
  }
}

/** A one-line form: a text input and a button; `submit(text)` resolves truthy on success. */
function lineForm(testid, placeholder, button, submit) {
  const input = el('input', { type: 'text', maxlength: 500, placeholder, 'aria-label': placeholder, 'data-testid': `${testid}-input` });
  return el('form', {
    class: 'chat-form',
    onsubmit: async (e) => {
      e.preventDefault();
      const text = input.value.trim();
      if (!text) return;
      if (await submit(text)) input.value = '';
    },
  }, input, el('button', { type: 'submit', 'data-testid': `${testid}-send` }, button));
}

/**
 * The referee box of a game view: its referee log (`view.notes`), then what the user may
 * do: players call the referee, logged-in users report, referees act. Built once per
 * role and phase (like the chat), so a half-typed reason survives events.
 */
export class RefereeBox {
  constructor(view) {
    this.view = view;
    this.key = null;
    this.log = null;
  }

  /** Draws into `slot`, rebuilding the forms only when who you are or the phase changed. */
  draw(slot) {
    const { s, conn } = this.view;
    const me = conn.user;
    const over = s.phase === 'ended';
    const key = `${s.you}|${over}|${me ? me.id : ''}|${me ? me.role : ''}`;
    if (key !== this.key) {
      this.key = key;
      this.log = el('ul', { class: 'chat-log referee-log', 'data-testid': 'referee-log' });
      const parts = [el('h3', {}, 'Referee'), this.log];
      if (s.you && !over) {
        parts.push(lineForm('referee-call', 'Call the referee: what happened?', 'Call the referee',
          (message) => this.view.send({ type: 'referee_call', message }).then((r) => r && toast('The referee has been called', 'ok'))));
      }
      if (me) parts.push(lineForm('report', 'Report this game to the referees: why?', 'Report', (reason) => this.report(reason)));
      if (isReferee(me) && !s.you) parts.push(this.actions(over));
      fill(slot, el('div', { class: 'chat referee-box', 'data-testid': 'referee-box' }, parts));
    }
    const notes = this.view.notes;
    if (this.log.childElementCount !== notes.length) {
      fill(this.log, notes.map((n) => el('li', { 'data-seq': n.seq, 'data-type': n.type }, refereeLine(n))));
      this.log.scrollTop = this.log.scrollHeight;
    }
  }

  /** A report on the game (and the opponent, from a player), citing its latest events. */
  async report(reason) {
    const { s, conn } = this.view;
    const msg = { type: 'report', game_id: this.view.id, reason, from_seq: Math.max(1, s.seq - 29), to_seq: s.seq };
    if (s.you) msg.user = s[s.you === 'black' ? 'white' : 'black'].user.id;
    try {
      const reply = await conn.request(msg);
      toast(`Report ${reply.report_id} filed: the referees will look at it`, 'ok');
      return true;
    } catch (err) {
      showError(err);
      return false;
    }
  }

  /** A referee's actions on this game, each with a reason. */
  actions(over) {
    const choices = over
      ? [['change_result', 'Change the result'], ['correct_count', 'Correct the count (all stones alive)']]
      : [['warn', 'Warn a player'], ['adjust_clock', 'Add or take time'], ['referee_pause', 'Pause'],
          ['referee_resume', 'Resume (or open a sealed move)'], ['adjourn', 'Adjourn with a sealed move'],
          ['rule', 'End with a ruling']];
    const select = (testid, label, options) => el('select', { 'data-testid': testid, 'aria-label': label },
      options.map(([v, t]) => el('option', { value: v }, t)));
    const action = select('ref-action', 'Action', choices);
    const colour = select('ref-color', 'Player', [['black', 'Black'], ['white', 'White']]);
    const seconds = el('input', { type: 'number', step: 1, value: 60, 'data-testid': 'ref-seconds', 'aria-label': 'Seconds (negative: a penalty)' });
    const minutes = el('input', { type: 'number', step: 1, min: 0, value: 0, 'data-testid': 'ref-minutes', 'aria-label': 'Adjourn in how many minutes (0: now)' });
    const rulings = over
      ? [['black_wins', 'Black wins'], ['white_wins', 'White wins'], ['draw', 'Draw'], ['both_lose', 'Both lose'], ['annul', 'Annul']]
      : [['black_wins', 'Black wins'], ['white_wins', 'White wins'], ['draw', 'Draw'], ['both_lose', 'Both lose'], ['replay', 'Replay']];
    const ruling = select('ref-ruling', 'Ruling', rulings);
    const reason = el('input', { type: 'text', maxlength: 500, required: true, placeholder: 'The reason, in words', 'aria-label': 'Reason', 'data-testid': 'ref-reason' });
    const show = () => {
      const a = action.value;
      colour.hidden = !['warn', 'adjust_clock'].includes(a);
      seconds.hidden = a !== 'adjust_clock';
      minutes.hidden = a !== 'adjourn';
      ruling.hidden = !['rule', 'change_result'].includes(a);
    };
    action.addEventListener('change', show);
    show();
    return el('form', {
      class: 'referee-actions stack', 'data-testid': 'referee-actions',
      onsubmit: async (e) => {
        e.preventDefault();
        const msg = { type: action.value, reason: reason.value.trim() };
        if (!msg.reason) return;
        if (!colour.hidden) msg.color = colour.value;
        if (!seconds.hidden) msg.delta_ms = Math.round(Number(seconds.value) * 1000);
        if (!minutes.hidden) {
          const wait = Math.max(0, Math.round(Number(minutes.value) * 60000));
          // Server time: 0 means now; otherwise now on the server's clock plus the wait.
          msg.at = wait === 0 ? 0 : Date.now() + this.view.conn.offset + wait;
        }
        if (!ruling.hidden) msg.ruling = ruling.value;
        if (msg.type === 'correct_count') msg.dead = [];
        if (await this.view.send(msg)) {
          reason.value = '';
          toast('Done: the players and spectators see it', 'ok');
        }
      },
    }, el('div', { class: 'row' }, action, colour, seconds, minutes, ruling), reason,
    el('button', { type: 'submit', class: 'primary', 'data-testid': 'ref-apply' }, 'Apply'));
  }
}

/** `#/referee`: the open calls and reports a referee or admin may deal with. */
export class RefereeView {
  constructor(conn) {
    this.conn = conn;
    this.onReady = () => this.load();
  }

  mount(container) {
    this.assigned = el('div', { 'data-testid': 'referee-assigned' });
    this.calls = el('div', { 'data-testid': 'referee-calls' });
    this.reports = el('div', { 'data-testid': 'referee-reports' });
    this.root = el('section', { class: 'referee-view stack', 'data-testid': 'referee-view' },
      el('h2', {}, 'Referee'),
      el('p', { class: 'muted small' }, 'Open a game to act on it: every action needs a reason, and the players and spectators see it.'),
      el('button', { type: 'button', 'data-testid': 'referee-refresh', onclick: () => this.load() }, 'Refresh'),
      el('h3', {}, 'Your games'), this.assigned,
      el('h3', {}, 'Calls for a referee'), this.calls,
      el('h3', {}, 'Open reports'), this.reports);
    fill(container, this.root);
    this.conn.addEventListener('ready', this.onReady);
    // Calls and reports are not pushed: look again now and then.
    this.timer = setInterval(() => this.load(), 10000);
    if (this.conn.ready) this.load();
  }

  unmount() {
    clearInterval(this.timer);
    this.conn.removeEventListener('ready', this.onReady);
  }

  async load() {
    if (!this.conn.ready) return;
    if (!isReferee(this.conn.user)) {
      fill(this.calls, el('p', { class: 'muted' }, 'Only referees and admins see the calls and reports.'));
      fill(this.reports);
      fill(this.assigned);
      return;
    }
    try {
      const [calls, reports] = await Promise.all([
        this.conn.request({ type: 'list_referee_calls' }),
        this.conn.request({ type: 'list_reports' }),
      ]);
      this.drawAssigned(calls.assigned || []);
      this.drawCalls(calls.games);
      this.drawReports(reports.reports);
    } catch (err) {
      showError(err);
    }
  }

  drawAssigned(games) {
    if (!games.length) return fill(this.assigned, el('p', { class: 'muted', 'data-testid': 'no-assigned' }, 'No game names you as its referee.'));
    fill(this.assigned, el('ul', { class: 'referee-list' }, games.map((g) => el('li', { 'data-testid': 'assigned', 'data-game-id': g.game_id },
      el('a', { href: `#/game/${encodeURIComponent(g.game_id)}` }, `${g.black.name} vs ${g.white.name}`),
      el('span', { class: 'muted' }, ` · ${g.board_size}×${g.board_size}, move ${g.move_number}, ${g.phase}`)))));
  }

  drawCalls(games) {
    if (!games.length) return fill(this.calls, el('p', { class: 'muted', 'data-testid': 'no-calls' }, 'No open calls.'));
    fill(this.calls, el('ul', { class: 'referee-list' }, games.map(({ game, calls }) => el('li', { 'data-testid': 'call', 'data-game-id': game.game_id },
      el('a', { href: `#/game/${encodeURIComponent(game.game_id)}`, 'data-testid': 'call-game' },
        `${game.black.name} vs ${game.white.name}`),
      el('span', { class: 'muted' }, ` · ${game.board_size}×${game.board_size}, move ${game.move_number}, ${game.phase}`),
      el('ul', {}, calls.map((c) => el('li', {}, el('b', {}, c.from.name), ` (${c.color}): ${c.message}`)))))));
  }

  drawReports(reports) {
    if (!reports.length) return fill(this.reports, el('p', { class: 'muted', 'data-testid': 'no-reports' }, 'No open reports.'));
    fill(this.reports, el('ul', { class: 'referee-list' }, reports.map((r) => el('li', { 'data-testid': 'report', 'data-report-id': r.report_id },
      el('b', {}, `#${r.report_id}`), ` by ${r.reporter}`,
      r.user ? ` about ${r.user}` : '',
      r.game_id ? el('span', {}, ' in ', el('a', { href: `#/game/${encodeURIComponent(r.game_id)}` }, `game ${r.game_id}`),
        r.from_seq ? ` (events ${r.from_seq}–${r.to_seq})` : '') : '',
      `: ${r.reason} `,
      el('button', {
        type: 'button', class: 'quiet', 'data-testid': 'close-report',
        onclick: async () => {
          try {
            await this.conn.request({ type: 'close_report', report_id: r.report_id });
            this.load();
          } catch (err) {
            showError(err);
          }
        },
      }, 'Close')))));
  }
}
