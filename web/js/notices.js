// Notices (client-protocol/notifications.md): the bell in the header with the count of
// unread notices, which opens the list (newest first, the unread marked, each linking to
// its game), and the notification settings on your own profile page (the mail address,
// verified or not, how each kind is mailed, which kinds are pushed to the browser, and the
// "Push notifications on this device" switch). The bell hears `notice` and
// `unread_notices` pushed to every connection of the account, so it stays right in every
// tab; the list is read again each time it is opened.

import { call } from './selfservice.js';
import { el, fill, showError, svg, toast } from './ui.js';

const KINDS = {
  your_move: 'Your move',
  deadline: 'Deadline near',
  game_ended: 'Game ended',
  challenge_received: 'Challenge',
  round_paired: 'Round paired',
  vacation_ending: 'Vacation ending',
};

const MODES = { immediate: 'mail at once', digest: 'in the digest', off: 'no mail' };

/** A notice in a line of words, with a link to what it is about. */
function line(n) {
  const p = n.payload;
  const who = p.opponent ? p.opponent.name : null;
  const words = {
    your_move: `It is your move${who ? ` against ${who}` : ''}`,
    deadline: `Your time runs out soon${who ? ` against ${who}` : ''}`,
    game_ended: `Game${who ? ` against ${who}` : ''} ended${p.result ? `: ${p.result}` : ''}`,
    challenge_received: `${who || 'Someone'} challenges you`,
    round_paired: `Round ${p.round ?? ''} is paired${who ? ` against ${who}` : ''}`,
    vacation_ending: 'Your vacation is running out',
  }[n.kind] || n.kind;
  const target = p.game_id ? `#/game/${p.game_id}` : n.kind === 'challenge_received' ? '#/' : null;
  return target ? el('a', { href: target }, words) : el('span', {}, words);
}

/** A bell, drawn (no emoji font is needed). */
function bellIcon() {
  return svg('svg', { viewBox: '0 0 24 24', width: 18, height: 18, 'aria-hidden': 'true', class: 'bell-icon' },
    svg('path', { d: 'M12 3a6 6 0 0 0-6 6v4l-2 3h16l-2-3V9a6 6 0 0 0-6-6z', fill: 'none', stroke: 'currentColor', 'stroke-width': 2, 'stroke-linejoin': 'round' }),
    svg('path', { d: 'M10 19a2 2 0 0 0 4 0', fill: 'none', stroke: 'currentColor', 'stroke-width': 2 }));
}

export class NoticeBell {
  constructor(conn) {
    this.conn = conn;
    this.unread = 0;
    this.count = el('span', { class: 'bell-count', 'data-testid': 'notice-count' });
    this.button = el('button', {
      type: 'button', class: 'quiet bell', 'data-testid': 'notice-bell', 'aria-haspopup': 'true', 'aria-expanded': 'false',
      onclick: () => this.toggle(),
    }, bellIcon(), this.count);
    this.panel = el('div', { class: 'notice-panel', 'data-testid': 'notice-panel', hidden: true });
    this.element = el('span', { class: 'bell-box' }, this.button, this.panel);
    conn.addEventListener('message', (e) => this.heard(e.detail));
    conn.addEventListener('ready', () => this.refresh());
    this.show(0);
  }

  heard(msg) {
    if (msg.type === 'notice') {
      this.show(msg.unread);
      if (!this.panel.hidden) this.refresh();
    } else if (msg.type === 'unread_notices') {
      this.show(msg.unread);
    }
  }

  show(unread) {
    this.unread = unread;
    this.button.dataset.unread = String(unread);
    this.button.setAttribute('aria-label', `Notices: ${unread} unread`);
    this.count.textContent = unread ? String(unread) : '';
  }

  async refresh() {
    if (!this.conn.user) return;
    try {
      const reply = await this.conn.request({ type: 'list_notices', limit: 20 });
      this.show(reply.unread);
      this.notices = reply.notices;
      if (!this.panel.hidden) this.draw();
    } catch (err) {
      if (err.code) showError(err);
    }
  }

  toggle() {
    this.panel.hidden = !this.panel.hidden;
    this.button.setAttribute('aria-expanded', String(!this.panel.hidden));
    if (!this.panel.hidden) this.refresh();
  }

  draw() {
    const rows = (this.notices || []).map((n) => el('li', {
      class: n.read ? 'notice read' : 'notice', 'data-testid': 'notice-row', 'data-kind': n.kind, 'data-read': String(n.read),
    }, el('span', { class: 'muted small' }, `${KINDS[n.kind] || n.kind} · ${new Date(n.at).toLocaleString()}`), line(n)));
    const newest = this.notices?.[0]?.notice_id;
    fill(this.panel,
      rows.length ? el('ul', { class: 'notice-list' }, rows) : el('p', { class: 'muted', 'data-testid': 'notices-empty' }, 'No notices yet.'),
      this.unread && newest ? el('button', { type: 'button', 'data-testid': 'notices-read', onclick: () => this.markRead(newest) }, 'Mark all read') : null);
  }

  async markRead(upTo) {
    try {
      await this.conn.request({ type: 'mark_notices_read', up_to: upTo });
      await this.refresh();
    } catch (err) {
      showError(err);
    }
  }
}

/** Whether this browser can take Web Push at all. */
const canPush = () => 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

/** A base64url key as the bytes `PushManager.subscribe` takes. */
function keyBytes(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(text.length / 4) * 4, '=');
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

/** This browser's push subscription to the server, if any, and the worker's registration. */
async function currentPush() {
  const reg = await navigator.serviceWorker.register('/sw.js');
  return { reg, sub: await reg.pushManager.getSubscription() };
}

/** Subscribes this browser (asking permission) and registers it with the server. */
async function pushOn(conn) {
  if (await Notification.requestPermission() !== 'granted') {
    throw new Error('the browser was not allowed to show notifications');
  }
  const { reg } = await currentPush();
  const { key } = await call(conn, 'GET', '/api/push/key');
  const sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) });
  try {
    await call(conn, 'POST', '/api/push/subscriptions', sub.toJSON());
  } catch (err) {
    await sub.unsubscribe();
    throw err;
  }
}

/** Unregisters this browser from the server and ends its subscription. */
async function pushOff(conn) {
  const { sub } = await currentPush();
  if (!sub) return;
  try {
    await call(conn, 'DELETE', '/api/push/subscriptions', { endpoint: sub.endpoint });
  } catch (err) {
    if (err.code !== 'not_found') throw err;
  }
  await sub.unsubscribe();
}

/** The "Push notifications on this device" switch; null where the browser cannot push. */
function pushSwitch(conn) {
  if (!canPush()) return null;
  const box = el('input', { type: 'checkbox', 'data-testid': 'notify-push-device', disabled: true });
  currentPush().then(({ sub }) => {
    box.checked = Boolean(sub) && Notification.permission === 'granted';
    box.disabled = false;
  }, () => {
    box.title = 'The service worker cannot be installed here';
  });
  box.addEventListener('change', async () => {
    const on = box.checked;
    box.disabled = true;
    try {
      await (on ? pushOn(conn) : pushOff(conn));
      toast(on ? 'Push notifications on for this device' : 'Push notifications off for this device', 'ok');
    } catch (err) {
      box.checked = !on;
      showError(err);
    } finally {
      box.disabled = false;
    }
  });
  return el('label', {}, box, ' Push notifications on this device');
}

/** Your notification settings, for your own profile page. */
export function notificationSettings(conn) {
  const box = el('div', { class: 'notify-settings', 'data-testid': 'notify-settings' },
    el('h3', {}, 'Notifications'), el('p', { class: 'muted' }, 'Loading…'));
  const draw = (s) => {
    const address = el('input', {
      type: 'email', value: s.address || '', placeholder: 'you@example.org', maxlength: 254,
      'data-testid': 'notify-address', 'aria-label': 'Mail address for notices',
    });
    const selects = Object.keys(KINDS).map((kind) => el('label', { class: 'row' }, KINDS[kind],
      el('select', { 'data-testid': `notify-mode-${kind}`, 'data-kind': kind },
        Object.entries(MODES).map(([m, label]) => el('option', { value: m, selected: s.modes[kind] === m }, label))),
      // A span, not a label: a label inside the kind's label would be two controls' label.
      s.push ? el('span', { class: 'small' },
        el('input', {
          type: 'checkbox', 'data-testid': `notify-push-${kind}`, 'data-push-kind': kind,
          'aria-label': `Push: ${KINDS[kind]}`, checked: s.push_kinds?.[kind] !== false,
        }),
        ' push') : null));
    const state = !s.address ? 'No address: notices are shown here only.'
      : !s.mail ? 'Kept for when this server sends mail.'
        : s.verified ? 'Verified: notices are mailed to it.'
        : 'Not verified yet: follow the link mailed to it.';
    // The server's check, not the browser's, says what is wrong with an address.
    const form = el('form', {
      class: 'stack',
      novalidate: true,
      onsubmit: async (e) => {
        e.preventDefault();
        const modes = Object.fromEntries(selects.map((l) => l.querySelector('select')).map((sel) => [sel.dataset.kind, sel.value]));
        const pushKinds = Object.fromEntries(selects.map((l) => l.querySelector('[data-push-kind]')).filter(Boolean)
          .map((box) => [box.dataset.pushKind, box.checked]));
        try {
          const reply = await conn.request({ type: 'set_notification_settings', address: address.value.trim(), modes, push_kinds: pushKinds });
          draw(reply.settings);
          toast('Notification settings saved', 'ok');
        } catch (err) {
          showError(err);
        }
      },
    },
    s.mail ? null : el('p', { class: 'muted small', 'data-testid': 'notify-no-mail' }, 'This server sends no mail: notices are shown here only.'),
    el('label', { class: 'stack' }, 'Mail address', address),
    el('p', { class: 'muted small', 'data-testid': 'notify-verified', 'data-verified': String(s.verified) }, state),
    s.push ? pushSwitch(conn) : null,
    selects,
    el('button', { type: 'submit', class: 'primary', 'data-testid': 'notify-save' }, 'Save'));
    fill(box, el('h3', {}, 'Notifications'), form);
  };
  conn.request({ type: 'get_notification_settings' }).then((reply) => draw(reply.settings), (err) => {
    fill(box, el('h3', {}, 'Notifications'), el('p', { class: 'muted' }, `The settings cannot be read: ${err.message}`));
  });
  return box;
}
