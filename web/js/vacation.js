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
