// The time control's part of a form, shared by the lobby's New game form and the
// tournament setup: the system's select and each system's fields (shown only for the
// system chosen), and the `clock` of the settings they make (lobby.md#game-settings).
// In days (`useDays`), for correspondence games (correspondence.md#clocks-in-days):
// every length is counted in days, and a game must have a clock.

import { el } from './ui.js';

/** Which field classes each time system shows. */
const SHOWN = {
  'needs-main': ['absolute', 'fischer', 'byoyomi', 'canadian'],
  'clock-byoyomi': ['byoyomi'],
  'clock-fischer': ['fischer'],
  'clock-canadian': ['canadian'],
  'clock-simple': ['simple'],
};

const DAY = 86_400_000;

/** Each length field: its label and unit live, its default in days. */
const LENGTHS = {
  main: ['Main time (min)', 60000, 'Main time (days)', 7],
  period: ['Period (s)', 1000, 'Period (days)', 1],
  increment: ['Increment (s)', 1000, 'Increment (days)', 1],
  max: ['Cap (min, optional)', 60000, 'Cap (days, optional)', 14],
  block: ['Block (min)', 60000, 'Block (days)', 7],
  per_move: ['Per move (s)', 1000, 'Per move (days)', 3],
};

/** The ms in one unit of the length field `name` of `form`. */
const unit = (form, name) => (form.dataset.days === 'true' ? DAY : LENGTHS[name][1]);

/**
 * The select (named `system`) and the fields of every time system, each input named
 * and with `data-testid` `<prefix>-<name>`; `field(label, control, cls)` wraps one.
 */
export function clockFields(field, prefix, onchange, chosen = 'none') {
  const option = (value, label) => el('option', { value, selected: value === chosen }, label);
  const num = (name, value, attrs = {}) => el('input', { type: 'number', name, value, 'data-testid': `${prefix}-${name}`, ...attrs });
  return [
    field('Time', el('select', { name: 'system', 'data-testid': `${prefix}-time`, onchange },
      option('none', 'untimed'), option('byoyomi', 'byo-yomi'), option('fischer', 'Fischer'),
      option('canadian', 'Canadian'), option('absolute', 'sudden death'), option('simple', 'per move'))),
    field(LENGTHS.main[0], num('main', 10, { step: 'any', min: 0 }), 'needs-main'),
    field('Periods', num('periods', 5, { min: 1, max: 100 }), 'clock-byoyomi'),
    field(LENGTHS.period[0], num('period', 30, { step: 'any', min: 1 }), 'clock-byoyomi'),
    field(LENGTHS.increment[0], num('increment', 10, { step: 'any', min: 0 }), 'clock-fischer'),
    field(LENGTHS.max[0], num('max', '', { step: 'any', min: 0 }), 'clock-fischer'),
    field('Moves per block', num('moves', 25, { min: 1 }), 'clock-canadian'),
    field(LENGTHS.block[0], num('block', 10, { step: 'any', min: 0 }), 'clock-canadian'),
    field(LENGTHS.per_move[0], num('per_move', 30, { step: 'any', min: 1 }), 'clock-simple'),
  ];
}

/**
 * Counts the lengths of `form` in days (`on`) or as live games do: relabels them, puts
 * in the defaults of the unit, and offers no untimed game in days.
 */
export function useDays(form, on) {
  if ((form.dataset.days === 'true') === on) return;
  form.dataset.days = String(on);
  const f = form.elements;
  for (const [name, [live, , days, byDay]] of Object.entries(LENGTHS)) {
    f[name].closest('label').firstElementChild.textContent = on ? days : live;
    f[name].value = on ? String(byDay) : '';
  }
  if (!on) {
    const fresh = { main: 10, period: 30, increment: 10, block: 10, per_move: 30 };
    for (const [name, value] of Object.entries(fresh)) f[name].value = String(value);
  }
  const untimed = f.system.querySelector('option[value="none"]');
  untimed.disabled = on;
  untimed.hidden = on;
  if (on && f.system.value === 'none') f.system.value = 'fischer';
  showClock(form);
}

/** Shows the fields of the system chosen in `form`, hides the others. */
export function showClock(form) {
  const system = form.elements.system.value;
  for (const [cls, systems] of Object.entries(SHOWN)) {
    form.querySelectorAll(`.${cls}`).forEach((n) => { n.hidden = !systems.includes(system); });
  }
}

/** Fills the fields from a `clock` (a setup being edited). */
export function setClock(form, clock) {
  const f = form.elements;
  const length = (name, ms) => { f[name].value = String((ms || 0) / unit(form, name)); };
  f.system.value = clock.system;
  if (clock.main_ms !== undefined) length('main', clock.main_ms);
  if (clock.periods !== undefined) f.periods.value = String(clock.periods);
  if (clock.period_ms !== undefined) length('period', clock.period_ms);
  if (clock.increment_ms !== undefined) length('increment', clock.increment_ms);
  if (clock.max_ms) length('max', clock.max_ms);
  if (clock.moves !== undefined) f.moves.value = String(clock.moves);
  if (clock.block_ms !== undefined) length('block', clock.block_ms);
  if (clock.per_move_ms !== undefined) length('per_move', clock.per_move_ms);
  showClock(form);
}

/** The `clock` the fields of `form` describe. */
export function clockFromForm(form) {
  const f = form.elements;
  const n = (name) => Number(f[name].value);
  const ms = (name) => Math.round(n(name) * unit(form, name));
  const system = f.system.value;
  switch (system) {
    case 'absolute': return { system, main_ms: ms('main') };
    case 'fischer': {
      const clock = { system, main_ms: ms('main'), increment_ms: ms('increment') };
      if (f.max.value !== '') clock.max_ms = ms('max');
      return clock;
    }
    case 'byoyomi': return { system, main_ms: ms('main'), periods: n('periods'), period_ms: ms('period') };
    case 'canadian': return { system, main_ms: ms('main'), moves: n('moves'), block_ms: ms('block') };
    case 'simple': return { system, per_move_ms: ms('per_move') };
    default: return { system: 'none' };
  }
}
