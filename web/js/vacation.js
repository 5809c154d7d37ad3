// Your vacation for correspondence games (client-protocol/correspondence.md#vacation), on
// your own profile: the balance, and going away or coming back. While you are away your
// clock stands still in every correspondence game of yours that allows it.

import { el, fill, showError, toast } from './ui.js';

/** Days and hours, for a balance in ms. */
export function daysHours(ms) {
  const hours = Math.floor(Math.max(0, ms) / 3_600_000);
  const d = Math.floor(hours / 24);
  const h = hours % 24;
  return d ? `${d} d ${h} h` : `${h} h`;
}

export function vacationBox(conn) {
  const box = el('div', { class: 'vacation', 'data-testid': 'vacation' },
    el('h3', {}, 'Vacation'), el('p', { class: 'muted' }, 'Loading…'));
  const act = async (type) => {
    try {
      const reply = await conn.request({ type });
      draw(reply.vacation);
      if (type === 'start_vacation') {
        const kept = reply.vacation.running?.length || 0;
        toast(kept ? `On vacation; ${kept} game${kept === 1 ? '' : 's'} forbid it and run on` : 'On vacation', 'ok');
      }
    } catch (err) {
      showError(err);
    }
  };
  const draw = (v) => {
    const away = v.away_since != null;
    fill(box, el('h3', {}, 'Vacation'),
      el('p', { 'data-testid': 'vacation-balance', 'data-balance': String(v.balance_ms) },
        `${daysHours(v.balance_ms)} of vacation left.`),
      away ? el('p', { 'data-testid': 'vacation-away' },
        `Away since ${new Date(v.away_since).toLocaleString()}; back by ${new Date(v.ends_at).toLocaleString()} at the latest.`) : null,
      el('button', {
        type: 'button', class: away ? '' : 'primary', 'data-testid': away ? 'vacation-end' : 'vacation-start',
        onclick: () => act(away ? 'end_vacation' : 'start_vacation'),
      }, away ? 'Come back' : 'Go on vacation'));
  };
  conn.request({ type: 'get_vacation' }).then((reply) => draw(reply.vacation), (err) => {
    fill(box, el('h3', {}, 'Vacation'), el('p', { class: 'muted' }, `The vacation cannot be read: ${err.message}`));
  });
  return box;
}

const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
/** Set once the player has been asked whether to take the browser's time zone. */
const ZONE_ASKED = 'tengen.zoneAsked';

/** The browser's IANA time zone, if it says. */
function browserZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || null;
  } catch {
    return null;
  }
}

/** Every IANA zone the browser knows, with UTC and `current` among them. */
function zones(current) {
  let all = [];
  try {
    all = Intl.supportedValuesOf('timeZone');
  } catch {
    all = [];
  }
  return [...new Set(['UTC', current, ...all])].sort();
}

// Your calendar (client-protocol/correspondence.md#weekends): your time zone and at most
// two weekend days, on which your clock stands still in correspondence games with
// weekends. The browser's zone is offered once, and taken only if you say so.
export function calendarBox(conn) {
  const box = el('div', { class: 'vacation', 'data-testid': 'calendar' },
    el('h3', {}, 'Weekends'), el('p', { class: 'muted' }, 'Loading…'));
  const save = async (calendar) => {
    try {
      const reply = await conn.request({ type: 'set_calendar', calendar });
      draw(reply.calendar);
      toast('Weekend saved', 'ok');
    } catch (err) {
      showError(err);
    }
  };
  const draw = (c) => {
    box.dataset.zone = c.time_zone;
    box.dataset.weekend = c.weekend.join(',');
    const zone = el('select', { 'data-testid': 'calendar-zone', 'aria-label': 'Time zone' },
      zones(c.time_zone).map((z) => el('option', { value: z, selected: z === c.time_zone }, z)));
    const boxes = DAYS.map((d) => el('input', {
      type: 'checkbox', value: d, checked: c.weekend.includes(d), 'data-testid': `calendar-day-${d}`,
      onchange: () => limit(),
    }));
    // At most two days: the others wait until one is unticked.
    const limit = () => {
      const two = boxes.filter((b) => b.checked).length >= 2;
      for (const b of boxes) b.disabled = two && !b.checked;
    };
    limit();
    const chosen = () => ({ time_zone: zone.value, weekend: boxes.filter((b) => b.checked).map((b) => b.value) });
    const mine = browserZone();
    const ask = mine && mine !== c.time_zone && c.time_zone === 'UTC' && !localStorage.getItem(ZONE_ASKED);
    const answer = (take) => {
      localStorage.setItem(ZONE_ASKED, '1');
      if (take) save({ time_zone: mine, weekend: c.weekend });
      else draw(c);
    };
    fill(box, el('h3', {}, 'Weekends'),
      el('p', { class: 'muted' }, 'In correspondence games with weekends, your clock stands still on your weekend days, midnight to midnight in your time zone. A change counts from your next turn.'),
      ask ? el('p', { 'data-testid': 'calendar-suggest' }, `Your browser says your time zone is ${mine}. Use it? `,
        el('button', { type: 'button', class: 'primary', 'data-testid': 'calendar-suggest-yes', onclick: () => answer(true) }, `Use ${mine}`),
        ' ',
        el('button', { type: 'button', 'data-testid': 'calendar-suggest-no', onclick: () => answer(false) }, 'No')) : null,
      el('label', {}, 'Time zone ', zone),
      el('fieldset', {}, el('legend', {}, 'Weekend days (at most two)'),
        DAYS.map((d, i) => el('label', { class: 'small' }, boxes[i], ` ${d[0].toUpperCase()}${d.slice(1, 3)} `))),
      el('button', { type: 'button', class: 'primary', 'data-testid': 'calendar-save', onclick: () => save(chosen()) }, 'Save weekend'));
  };
  conn.request({ type: 'get_calendar' }).then((reply) => draw(reply.calendar), (err) => {
    fill(box, el('h3', {}, 'Weekends'), el('p', { class: 'muted' }, `The weekend cannot be read: ${err.message}`));
  });
  return box;
}
