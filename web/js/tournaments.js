// The tournaments (`#/tournaments`, client-protocol/tournament.md): the newest from
// `GET /api/tournaments`, each with its system, rounds and players read from its own
// route, and for referees and admins the form that creates one. The form is the whole
// setup (`TournamentSetup`: the regulations, every game's settings, the registration
// window, rank limits and staff); the director's console edits it again with it.

import { clockFields, clockFromForm, setClock, showClock } from './clockform.js';
import { getJson } from './ratings.js';
import { isReferee } from './referee.js';
import { el, fill, refusalLine, showError, toast } from './ui.js';

/** How many tournaments of the list get their details read. */
const DETAILED = 30;

export const SYSTEMS = [['mc_mahon', 'McMahon'], ['swiss', 'Swiss'], ['round_robin', 'Round robin'], ['knockout', 'Knockout']];
export const TIE_BREAKS = [['sos', 'SOS'], ['sosos', 'SOSOS'], ['sodos', 'SODOS'], ['cuss', 'CUSS'], ['wins', 'Wins'], ['direct', 'Direct']];
const SEEDINGS = [['split_and_fold', 'split and fold'], ['split_and_slip', 'split and slip'], ['split_and_random', 'split and random']];
/** Scores in half points, as the regulations keep them. */
const HALVES = [['0', '0'], ['1', '½'], ['2', '1']];
const TIE_BREAK_SLOTS = 4;
const DAY_MS = 24 * 3600 * 1000;

/** The system's name: `McMahon (bar 3d, floor 10k)`. */
export function systemName(system, long = false) {
  const name = SYSTEMS.find(([k]) => k === system.kind)?.[1] || system.kind;
  return long && system.kind === 'mc_mahon' ? `${name} (bar ${system.bar}, floor ${system.floor})` : name;
}

/** Half points in points: 3 → "1½". */
export function half(n) {
  const whole = Math.trunc(n / 2);
  const rest = Math.abs(n % 2) ? '½' : '';
  return `${whole === 0 && rest ? (n < 0 ? '-' : '') : whole}${rest}`;
}

/** Server ms as a `datetime-local` value (blank for 0). */
function localInput(ms) {
  if (!ms) return '';
  const d = new Date(ms);
  return new Date(ms - d.getTimezoneOffset() * 60000).toISOString().slice(0, 16);
}

const list = (text) => text.split(/[\s,]+/).map((s) => s.trim()).filter(Boolean);

/**
 * The setup form: `initial` a setup to edit (or null for a new one); `submit(setup)` is
 * called with the setup it describes.
 */
export function setupForm(initial, button, submit) {
  const s = initial || {};
  const reg = s.regulations || {};
  const settings = s.settings || {};
  const system = reg.system || { kind: 'mc_mahon', bar: '3d', floor: '20k' };
  const option = (value, label, chosen) => el('option', { value, selected: String(value) === String(chosen) }, label);
  const options = (pairs, chosen) => pairs.map(([v, l]) => option(v, l, chosen));
  const field = (label, control, cls = '') => el('label', { class: `field ${cls}` }, el('span', {}, label), control);
  const input = (name, attrs = {}) => el('input', { name, 'data-testid': `t-${name}`, ...attrs });
  const select = (name, pairs, chosen, attrs = {}) => el('select', { name, 'data-testid': `t-${name}`, ...attrs }, options(pairs, chosen));
  const check = (name, label, on, cls = '') => el('label', { class: `field check ${cls}` }, input(name, { type: 'checkbox', checked: !!on }), el('span', {}, label));
  const rule = reg.handicap;
  const show = () => {
    showClock(form);
    const f = form.elements;
    form.querySelectorAll('.needs-mcmahon').forEach((n) => { n.hidden = f.pairing.value !== 'mc_mahon'; });
    form.querySelectorAll('.needs-rule').forEach((n) => { n.hidden = f.handicap.value !== 'rule'; });
  };
  const breaks = reg.tie_breaks || ['sos', 'sosos'];
  const form = el('form', {
    class: 'create-form tournament-setup', 'data-testid': 'tournament-setup',
    onsubmit: (e) => {
      e.preventDefault();
      submit(readSetup(form, s));
    },
  },
  el('div', { class: 'fields' },
    field('Name', input('name', { type: 'text', required: true, maxlength: 100, value: s.name || '' }), 'wide'),
    field('System', select('pairing', SYSTEMS, system.kind, { onchange: show })),
    field('Bar', input('bar', { type: 'text', value: system.bar || '3d', size: 4 }), 'needs-mcmahon'),
    field('Floor', input('floor', { type: 'text', value: system.floor || '20k', size: 4 }), 'needs-mcmahon'),
    field('Rounds', input('rounds', { type: 'number', min: 1, max: 30, value: reg.rounds || 5 })),
    field('Board', select('board_size', [[19, '19×19'], [13, '13×13'], [9, '9×9']], settings.board_size || 19)),
    field('Rules', select('ruleset', [['chinese', 'Chinese (area)'], ['japanese', 'Japanese'], ['korean', 'Korean'], ['tromp-taylor', 'Tromp-Taylor']], settings.ruleset || 'chinese')),
    field('Komi', input('komi', { type: 'number', step: 0.5, min: -500, max: 500, placeholder: 'rules’ default', value: settings.komi ?? '' })),
    clockFields(field, 't', show, settings.clock?.system || 'byoyomi'),
    field('Colours', select('colours', [['draw', 'by the draw'], ['nigiri', 'nigiri at the board']], reg.colours || 'draw')),
    field('Seeding', select('seeding', SEEDINGS, reg.seeding || 'split_and_fold')),
    field('Handicap', select('handicap', [['none', 'none: even games'], ['rule', 'from the score difference']], rule ? 'rule' : 'none', { onchange: show })),
    field('Correction', input('correction', { type: 'number', min: 0, max: 9, value: rule?.correction ?? 1 }), 'needs-rule'),
    field('Ceiling', input('ceiling', { type: 'number', min: 0, max: 9, value: rule?.ceiling ?? 9 }), 'needs-rule'),
    field('No handicap from', input('threshold', { type: 'text', size: 4, value: rule?.threshold || '1d' }), 'needs-rule'),
    Array.from({ length: TIE_BREAK_SLOTS }, (_, i) => field(`Tie-break ${i + 1}`,
      select(`tb${i + 1}`, [['', '—'], ...TIE_BREAKS], breaks[i] || ''))),
    field('Bye scores', select('bye', HALVES, reg.bye ?? 2)),
    field('A missed round scores', select('missed_round', HALVES, reg.missed_round ?? 1)),
    field('Registration opens', input('opens', { type: 'datetime-local', value: localInput(s.registration_opens) })),
    field('Registration closes', input('closes', { type: 'datetime-local', required: true, value: localInput(s.registration_closes || Date.now() + 30 * DAY_MS) })),
    field('Weakest rank', input('min_rank', { type: 'text', size: 4, placeholder: 'any', value: s.min_rank || '' })),
    field('Strongest rank', input('max_rank', { type: 'text', size: 4, placeholder: 'any', value: s.max_rank || '' })),
    field('Games start after (min)', input('delay', { type: 'number', min: 0, step: 'any', value: (s.start_delay_ms || 0) / 60000 })),
    field('Late by (min) loses', input('forfeit', { type: 'number', min: 0, step: 'any', placeholder: 'default', value: settings.forfeit_after_ms ? settings.forfeit_after_ms / 60000 : '' })),
    field('More directors', input('directors', { type: 'text', placeholder: 'user ids', value: (s.directors || []).join(', ') }), 'wide'),
    field('Chief referee', input('chief', { type: 'text', placeholder: 'a user id (rules on appeals)', value: s.chief_referee || '' })),
    field('Board referees', input('referees', { type: 'text', placeholder: 'user ids', value: (s.referees || []).join(', ') })),
    check('rated', 'Rated games', settings.rated),
    check('separate_clubs', 'Keep clubs apart', reg.separate_clubs),
    check('separate_countries', 'Keep countries apart', reg.separate_countries),
    check('auto_pair', 'Pair and publish each round by itself', s.auto_pair, 'wide')),
  el('button', { type: 'submit', class: 'primary', 'data-testid': 't-submit' }, button));
  if (settings.clock) setClock(form, settings.clock);
  show();
  return form;
}

/** The setup `form` describes; what it does not show is kept from `initial`. */
function readSetup(form, initial) {
  const f = form.elements;
  const n = (name) => Number(f[name].value);
  const kind = f.pairing.value;
  const system = kind === 'mc_mahon' ? { kind, bar: f.bar.value.trim(), floor: f.floor.value.trim() } : { kind };
  const settings = { ...(initial.settings || {}), board_size: n('board_size'), ruleset: f.ruleset.value, clock: clockFromForm(form), rated: f.rated.checked };
  delete settings.komi;
  if (f.komi.value !== '') settings.komi = n('komi');
  if (f.forfeit.value !== '') settings.forfeit_after_ms = Math.round(n('forfeit') * 60000);
  const setup = {
    name: f.name.value.trim(),
    regulations: {
      system,
      rounds: n('rounds'),
      handicap: f.handicap.value === 'rule' ? { correction: n('correction'), ceiling: n('ceiling'), threshold: f.threshold.value.trim() } : null,
      colours: f.colours.value,
      seeding: f.seeding.value,
      tie_breaks: Array.from({ length: TIE_BREAK_SLOTS }, (_, i) => f[`tb${i + 1}`].value).filter(Boolean),
      bye: n('bye'),
      missed_round: n('missed_round'),
      separate_clubs: f.separate_clubs.checked,
      separate_countries: f.separate_countries.checked,
    },
    settings,
    registration_opens: f.opens.value ? new Date(f.opens.value).getTime() : 0,
    registration_closes: new Date(f.closes.value).getTime(),
    directors: list(f.directors.value),
    referees: list(f.referees.value),
    start_delay_ms: Math.round(n('delay') * 60000),
    auto_pair: f.auto_pair.checked,
  };
  if (f.min_rank.value.trim()) setup.min_rank = f.min_rank.value.trim();
  if (f.max_rank.value.trim()) setup.max_rank = f.max_rank.value.trim();
  if (f.chief.value.trim()) setup.chief_referee = f.chief.value.trim();
  return setup;
}

export class TournamentsView {
  constructor(conn) {
    this.conn = conn;
    this.refusal = refusalLine('t-create-refusal');
  }

  mount(container) {
    document.title = 'Tournaments · tengen';
    this.list = el('div', { 'data-testid': 'tournament-list' }, el('p', { class: 'muted' }, 'Loading…'));
    const me = this.conn.user;
    fill(container, el('div', { class: 'tournaments stack' },
      el('section', { class: 'card', 'data-testid': 'tournaments' },
        el('div', { class: 'card-head' }, el('h2', {}, 'Tournaments'),
          el('button', { type: 'button', class: 'quiet', 'data-testid': 'tournaments-refresh', onclick: () => this.load() }, 'Refresh')),
        this.list),
      isReferee(me)
        ? el('section', { class: 'card', 'data-testid': 'tournament-create' },
          el('h2', {}, 'Create tournament'), setupForm(null, 'Create tournament', (setup) => this.create(setup)), this.refusal.line)
        : null));
    this.load();
  }

  unmount() {}

  async create(setup) {
    this.refusal.clear();
    try {
      const reply = await this.conn.request({ type: 'create_tournament', setup });
      toast(`${setup.name} is created: players may register`, 'ok');
      location.hash = `#/tournament/${reply.tournament.tournament_id}`;
    } catch (err) {
      if (err.code) this.refusal.show(err);
      showError(err);
    }
  }

  async load() {
    try {
      const page = await getJson('/api/tournaments');
      const details = await Promise.all(page.tournaments.slice(0, DETAILED)
        .map((t) => getJson(`/api/tournaments/${encodeURIComponent(t.id)}`).catch(() => null)));
      const rows = page.tournaments.map((t, i) => {
        const d = details[i];
        const reg = d?.setup.regulations;
        return el('tr', { 'data-testid': 'tournament-row', 'data-tournament-id': t.id, 'data-stage': d ? d.stage : t.stage },
          el('td', {}, el('a', { href: `#/tournament/${encodeURIComponent(t.id)}`, 'data-testid': 'tournament-link' }, t.name)),
          el('td', {}, reg ? systemName(reg.system) : ''),
          el('td', {}, reg ? `${reg.rounds} rounds` : ''),
          el('td', { 'data-testid': 'tournament-stage' }, d ? d.stage : t.stage),
          el('td', { class: 'muted' }, d ? `${d.players.length} players` : ''),
          el('td', { class: 'muted small' }, new Date(t.created_at_ms).toLocaleDateString()));
      });
      fill(this.list, rows.length
        ? el('table', { class: 'stack-table' },
          el('thead', {}, el('tr', {}, ['Name', 'System', 'Rounds', 'Stage', 'Players', 'Created'].map((h) => el('th', {}, h)))),
          el('tbody', {}, rows))
        : el('p', { class: 'muted', 'data-testid': 'no-tournaments' }, 'No tournament yet.'));
    } catch (err) {
      fill(this.list, el('p', { class: 'muted' }, `The tournaments cannot be read: ${err.message}`));
    }
  }
}
