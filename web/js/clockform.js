// The time control's part of a form, shared by the lobby's New game form and the
// tournament setup: the system's select and each system's fields (shown only for the
// system chosen), and the `clock` of the settings they make (lobby.md#game-settings).

import { el } from './ui.js';

/** Which field classes each time system shows. */
const SHOWN = {
  'needs-main': ['absolute', 'fischer', 'byoyomi', 'canadian'],
  'clock-byoyomi': ['byoyomi'],
  'clock-fischer': ['fischer'],
  'clock-canadian': ['canadian'],
  'clock-simple': ['simple'],
};

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
    field('Main time (min)', num('main', 10, { step: 'any', min: 0 }), 'needs-main'),
    field('Periods', num('periods', 5, { min: 1, max: 100 }), 'clock-byoyomi'),
    field('Period (s)', num('period', 30, { step: 'any', min: 1 }), 'clock-byoyomi'),
    field('Increment (s)', num('increment', 10, { step: 'any', min: 0 }), 'clock-fischer'),
    field('Cap (min, optional)', num('max', '', { step: 'any', min: 0 }), 'clock-fischer'),
    field('Moves per block', num('moves', 25, { min: 1 }), 'clock-canadian'),
    field('Block (min)', num('block', 10, { step: 'any', min: 0 }), 'clock-canadian'),
    field('Per move (s)', num('per_move', 30, { step: 'any', min: 1 }), 'clock-simple'),
  ];
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
  const min = (ms) => String((ms || 0) / 60000);
  const sec = (ms) => String((ms || 0) / 1000);
  f.system.value = clock.system;
  if (clock.main_ms !== undefined) f.main.value = min(clock.main_ms);
  if (clock.periods !== undefined) f.periods.value = String(clock.periods);
  if (clock.period_ms !== undefined) f.period.value = sec(clock.period_ms);
  if (clock.increment_ms !== undefined) f.increment.value = sec(clock.increment_ms);
  if (clock.max_ms) f.max.value = min(clock.max_ms);
  if (clock.moves !== undefined) f.moves.value = String(clock.moves);
  if (clock.block_ms !== undefined) f.block.value = min(clock.block_ms);
  if (clock.per_move_ms !== undefined) f.per_move.value = sec(clock.per_move_ms);
  showClock(form);
}

/** The `clock` the fields of `form` describe. */
export function clockFromForm(form) {
  const f = form.elements;
  const n = (name) => Number(f[name].value);
  const min = (name) => Math.round(n(name) * 60000);
  const sec = (name) => Math.round(n(name) * 1000);
  const system = f.system.value;
  switch (system) {
    case 'absolute': return { system, main_ms: min('main') };
    case 'fischer': {
      const clock = { system, main_ms: min('main'), increment_ms: sec('increment') };
      if (f.max.value !== '') clock.max_ms = min('max');
      return clock;
    }
    case 'byoyomi': return { system, main_ms: min('main'), periods: n('periods'), period_ms: sec('period') };
    case 'canadian': return { system, main_ms: min('main'), moves: n('moves'), block_ms: min('block') };
    case 'simple': return { system, per_move_ms: sec('per_move') };
    default: return { system: 'none' };
  }
}
