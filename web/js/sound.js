// Sounds, made on the spot so the client ships no audio files: the click of a stone
// (a short filtered noise burst), a beep, and the referee's spoken count of byo-yomi
// seconds through the browser's speech synthesis, with the beep where it has none. The
// count is the one of the 2002 Chinese rules (第12条第3项, docs/RULES.md §8.1): within a
// period the referee counts UP, "10秒", "20秒"… as each ten seconds passes, then "1" to
// "9" through the last ten seconds, and "10" as the period is used.

import { prefs } from './prefs.js';

let audio = null;

function context() {
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return null;
  audio ??= new Ctx();
  return audio;
}

/** The click of a stone on wood. */
export function stoneSound() {
  if (!prefs.get('sound')) return;
  const ctx = context();
  if (!ctx) return;
  const length = Math.floor(ctx.sampleRate * 0.06);
  const buffer = ctx.createBuffer(1, length, ctx.sampleRate);
  const data = buffer.getChannelData(0);
  for (let i = 0; i < length; i++) data[i] = (Math.random() * 2 - 1) * (1 - i / length) ** 4;
  const source = ctx.createBufferSource();
  source.buffer = buffer;
  const filter = ctx.createBiquadFilter();
  filter.type = 'bandpass';
  filter.frequency.value = 1800;
  const gain = ctx.createGain();
  gain.gain.value = 0.8;
  source.connect(filter).connect(gain).connect(ctx.destination);
  source.start();
}

/** A short beep, higher for the last seconds. */
export function beep(high = false) {
  const ctx = context();
  if (!ctx) return;
  const osc = ctx.createOscillator();
  const gain = ctx.createGain();
  osc.frequency.value = high ? 1320 : 880;
  gain.gain.setValueAtTime(0.2, ctx.currentTime);
  gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + 0.15);
  osc.connect(gain).connect(ctx.destination);
  osc.start();
  osc.stop(ctx.currentTime + 0.16);
}

const DIGITS = ['零', '一', '二', '三', '四', '五', '六', '七', '八', '九'];

/** 10 → 十, 20 → 二十, 105 → 一百零五, 300 → 三百 (0 < n < 10000). */
export function chineseNumber(n) {
  if (n < 10) return DIGITS[n];
  if (n < 20) return `十${n % 10 ? DIGITS[n % 10] : ''}`;
  const units = [[1000, '千'], [100, '百'], [10, '十']];
  let text = '';
  let gap = false;
  for (const [unit, name] of units) {
    const d = Math.floor(n / unit) % 10;
    if (d) {
      text += `${gap ? '零' : ''}${DIGITS[d]}${name}`;
      gap = false;
    } else if (text) {
      gap = true;
    }
  }
  return n % 10 ? `${text}${gap ? '零' : ''}${DIGITS[n % 10]}` : text;
}

/**
 * The referee's calls in one period of `length` ms, first to last, each with the ms left
 * when it is made: `{at, seconds}` as each ten seconds passes before the last ten (in
 * periods of 20 s or more: "10秒"… "50秒" in a minute), then `{at, count}`, 1 with 9 s
 * left to 9 with 1 s left, and 10 as the period runs out. A period under ten seconds
 * has only the counts that fall inside it.
 */
export function countCalls(length) {
  const calls = [];
  if (length >= 20000) {
    for (let passed = 10000; passed <= length - 10000; passed += 10000) calls.push({ at: length - passed, seconds: passed / 1000 });
  }
  for (let count = 1; count <= 9; count++) {
    const at = (10 - count) * 1000;
    if (at < length) calls.push({ at, count });
  }
  calls.push({ at: 0, count: 10 });
  return calls;
}

/**
 * The call to make when a running clock goes from `before` to `after` (each the running
 * period as the clock shows it, `{left, length, periodsLeft}`), or null: the latest call
 * whose moment was passed, or 10 when the period ran out and the next one began.
 */
export function countCall(before, after) {
  if (after.length !== before.length) return null;
  if (after.periodsLeft < before.periodsLeft) return { at: 0, count: 10 };
  if (after.left >= before.left) return null;
  const passed = countCalls(after.length).filter((c) => c.at < before.left && c.at >= after.left);
  return passed.length ? passed[passed.length - 1] : null;
}

/** A call in words: 二十秒 / "20 seconds" for ten-second marks, 一 / "1" for the count. */
export function callWords(call, language) {
  const zh = language === 'zh';
  if (call.seconds) return zh ? `${chineseNumber(call.seconds)}秒` : `${call.seconds} seconds`;
  return zh ? chineseNumber(call.count) : String(call.count);
}

/** Says a call in the chosen language, or beeps where speech is missing (high from 7 on). */
function announce(call, language) {
  const synth = window.speechSynthesis;
  if (!synth || typeof SpeechSynthesisUtterance === 'undefined') {
    beep(call.count >= 7);
    return;
  }
  const zh = language === 'zh';
  const u = new SpeechSynthesisUtterance(callWords(call, language));
  u.lang = zh ? 'zh-CN' : 'en-US';
  u.rate = 1.2;
  synth.cancel();
  synth.speak(u);
}

/**
 * The spoken count of one player's byo-yomi (or time per move): `update` is called on
 * every clock tick with the running period as the clock shows it (`{left, length,
 * periodsLeft}`, see clock.js), or null when the player's clock is not running, and
 * makes each call of the count once, as its moment passes.
 */
export class ByoyomiCount {
  constructor() {
    this.last = null;
  }

  update(period) {
    const language = prefs.get('count');
    if (period === null || language === 'off') {
      this.last = null;
      return;
    }
    const before = this.last;
    this.last = period;
    const call = before && countCall(before, period);
    if (call) announce(call, language);
  }
}
