// Small DOM helpers, the toast area where every server error is shown in words, and the
// texts the lobby and the game share (settings, results, durations).

const SVG_NS = 'http://www.w3.org/2000/svg';

/** `el('div', {class: 'x', onclick: f}, child, 'text')`. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  node.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

/** An SVG element with attributes. */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  node.append(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

function setAttrs(node, attrs) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') node.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
}

/** Replaces the children of `node`. */
export function fill(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

/**
 * Shows a message for a few seconds; `kind` is `error`, `info` or `ok`. With `onTap`
 * the message is a button that does it.
 */
export function toast(message, kind = 'info', detail = '', onTap = null) {
  const box = document.getElementById('toasts');
  const text = onTap
    ? el('button', { type: 'button', class: 'toast-tap', 'data-testid': 'toast-tap', onclick: () => { item.remove(); onTap(); } }, message)
    : el('span', {}, message);
  const item = el('div', { class: `toast toast-${kind}`, role: kind === 'error' ? 'alert' : 'status', 'data-testid': `toast-${kind}` },
    text,
    detail ? el('small', {}, detail) : null,
    el('button', { class: 'toast-close', 'aria-label': 'Dismiss', onclick: () => item.remove() }, '×'));
  box.append(item);
  setTimeout(() => item.remove(), kind === 'error' || onTap ? 8000 : 4000);
  placeToasts();
}

/** What a notice must never cover: the game's buttons and the review bar. */
const CONTROLS = '.actions button, .nav-bar button';

let placing = null;

/**
 * Keeps the notices off the controls: at the foot of the screen, or at its top (over the
 * header at worst) while the foot would cover a control on the screen. Looked at again
 * as long as notices are shown, since the page under them scrolls and changes.
 */
function placeToasts() {
  const box = document.getElementById('toasts');
  if (!box.childElementCount) {
    clearInterval(placing);
    placing = null;
    return;
  }
  placing ??= setInterval(placeToasts, 200);
  box.classList.remove('toasts-top');
  const r = box.getBoundingClientRect();
  const covered = [...document.querySelectorAll(CONTROLS)].some((c) => {
    const b = c.getBoundingClientRect();
    return b.width > 0 && b.left < r.right && b.right > r.left && b.top < r.bottom && b.bottom > r.top;
  });
  box.classList.toggle('toasts-top', covered);
}

/** Shows a refused request or a lost connection to the person, in words. */
export function showError(err) {
  if (err && err.code) {
    // The server's sentence as it wrote it: it may begin with a user id, which is
    // case-sensitive.
    const what = err.message || 'The server refused the request.';
    toast(what, 'error', err.code.replace(/_/g, ' '));
  } else {
    toast(String(err && err.message ? err.message : err), 'error');
  }
}

/** A server refusal's message, kept beside the form it answers (its code in `data-code`). */
export function refusalLine(testid) {
  const line = el('p', { class: 'form-error', 'data-testid': testid, role: 'alert', hidden: true });
  return {
    line,
    show(err) {
      line.textContent = err.message;
      line.dataset.code = err.code || '';
      line.hidden = false;
    },
    clear() {
      line.hidden = true;
      line.textContent = '';
      delete line.dataset.code;
    },
  };
}

/** 754000 → "12:34", 3723000 → "1:02:03", under 10 s → "9.3". */
export function formatMs(ms) {
  ms = Math.max(0, ms);
  if (ms < 10000) return (Math.floor(ms / 100) / 10).toFixed(1);
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

/** A duration in words for settings: 600000 → "10 min", 30000 → "30 s", whole days as "3 d". */
export function span(ms) {
  if (ms % 86_400_000 === 0 && ms >= 86_400_000) return `${ms / 86_400_000} d`;
  if (ms % 60000 === 0 && ms >= 60000) return `${ms / 60000} min`;
  return `${ms / 1000} s`;
}

/** The time control in a few words. */
export function describeClock(c) {
  if (!c || c.system === 'none') return 'untimed';
  switch (c.system) {
    case 'absolute': return `${span(c.main_ms)} sudden death`;
    case 'fischer': return `${span(c.main_ms)} + ${span(c.increment_ms)}/move${c.max_ms ? ` (max ${span(c.max_ms)})` : ''}`;
    case 'byoyomi': return `${c.main_ms ? span(c.main_ms) + ' + ' : ''}${c.periods} × ${span(c.period_ms)} byo-yomi`;
    case 'canadian': return `${c.main_ms ? span(c.main_ms) + ' + ' : ''}${c.moves} moves / ${span(c.block_ms)}`;
    case 'simple': return `${span(c.per_move_ms)} per move`;
    default: return c.system;
  }
}

/** Settings in one line: "9×9 · rated · chinese · komi 7.5 · nigiri · untimed". */
export function describeSettings(s, { colour = true, clock = true } = {}) {
  const parts = [`${s.board_size}×${s.board_size}`];
  if (s.rated) parts.push('rated');
  if (s.correspondence) parts.push('correspondence');
  parts.push(s.ruleset);
  if (s.handicap >= 2) parts.push(`${s.handicap} stones${s.handicap_placement === 'free' ? ' (free)' : ''}`);
  if (s.komi !== undefined && s.komi !== null) parts.push(`komi ${s.komi}`);
  if (colour) parts.push(s.color === 'nigiri' ? 'nigiri' : `challenger ${s.color}`);
  if (clock) parts.push(describeClock(s.clock));
  return parts.join(' · ');
}

const QUARTERS = ['', '¼', '½', '¾'];

/** 0.75 → "¾ stone", 1.25 → "1¼ stones", 2 → "2 stones". */
export function stonesText(stones) {
  const q = Math.round(Math.abs(stones) * 4);
  const whole = Math.floor(q / 4);
  const frac = QUARTERS[q % 4];
  const text = `${whole || !frac ? whole : ''}${frac}`;
  return `${text} ${q === 4 || (whole === 0 && frac) ? 'stone' : 'stones'}`;
}

/** The result in words, in points and (for counted games) in stones. */
export function resultText(result, score) {
  if (!result) return '';
  if (result === 'Void') return 'No result (void)';
  if (result === '0') return 'Draw (jigo)';
  const m = /^([BW])\+(.+)$/.exec(result);
  if (!m) return result;
  const winner = m[1] === 'B' ? 'Black' : 'White';
  switch (m[2]) {
    case 'R': return `${winner} wins by resignation`;
    case 'T': return `${winner} wins on time`;
    case 'F': return `${winner} wins by forfeit`;
    default: {
      const pts = Number(m[2]);
      const unit = pts === 1 ? 'point' : 'points';
      const stones = score ? ` (${stonesText(score.margin_stones)})` : '';
      return `${winner} wins by ${m[2]} ${unit}${stones}`;
    }
  }
}

/** Whether Chinese can be drawn: null until known. */
let cjk = null;

/**
 * Whether the page can draw Chinese, in a font of the system or in the one the server
 * serves for the result (web/fonts/, loaded): a character drawn in the page's fonts
 * differs from a character no font has (the empty box every missing glyph becomes).
 */
function drawsChinese() {
  const canvas = document.createElement('canvas');
  canvas.width = 64;
  canvas.height = 32;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  if (!ctx) return false;
  const draw = (text) => {
    ctx.clearRect(0, 0, 64, 32);
    ctx.font = '24px "tengen CJK", sans-serif';
    ctx.fillText(text, 2, 26);
    return ctx.getImageData(0, 0, 64, 32).data.join();
  };
  return draw('黑') !== draw('\u{10FFFD}');
}

/**
 * The Chinese result (`黑胜3/4子`, `和棋`) of a counted game, shown once a font can draw
 * it (never as a row of empty boxes: the served font is fetched first, if it must be)
 * and kept as text for copying.
 */
export function chineseText(result, score) {
  const text = result === '0' && score ? '和棋' : score && score.chinese;
  if (!text) return null;
  const span = el('span', { class: 'chinese', lang: 'zh-Hans', 'data-testid': 'result-chinese', hidden: !cjk }, ` · ${text}`);
  if (!cjk) {
    document.fonts.load('24px "tengen CJK"', text)
      .catch(() => [])
      .then(() => {
        cjk = drawsChinese();
        span.hidden = !cjk;
      });
  }
  return span;
}

/** An inline SVG icon (no icon font, no emoji): `eye`, `bot`, `first`, `back`, `forward`, `last`. */
export function icon(name, label) {
  const paths = {
    eye: 'M1 8s2.5-5 7-5 7 5 7 5-2.5 5-7 5-7-5-7-5zm7 3a3 3 0 1 0 0-6 3 3 0 0 0 0 6z',
    bot: 'M7 1h2v2h3a2 2 0 0 1 2 2v6a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2h3zM5 7v2h2V7zm4 0v2h2V7z',
    first: 'M3 2h2v12H3zM14 2v12L6 8z',
    back: 'M12 2v12L4 8z',
    forward: 'M4 2v12l8-6z',
    last: 'M11 2h2v12h-2zM2 2v12l8-6z',
  };
  return svg('svg', { class: 'icon', viewBox: '0 0 16 16', width: 16, height: 16, role: 'img', 'aria-label': label, 'data-icon': name },
    svg('title', {}, label), svg('path', { d: paths[name], 'fill-rule': 'evenodd' }));
}

/** A user's name as every list shows it: with the bot icon for a bot account. */
export function who(user) {
  return user.role === 'bot' ? [icon('bot', 'bot'), ` ${user.name}`] : user.name;
}

/** A random string for `nigiri_seed`. */
export function randomSeed() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Whether `user` may play rated games: every account but a guest's. */
export function mayRate(user) {
  return !!user && user.role !== 'guest';
}

export function colourName(c) {
  return c === 'black' ? 'Black' : 'White';
}

export function other(c) {
  return c === 'black' ? 'white' : 'black';
}
