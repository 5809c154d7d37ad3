// Sounds, made on the spot so the client ships no audio files: the click of a stone
// (a short filtered noise burst), a beep, and the referee's spoken count of byo-yomi
// seconds (Art. 12 of the 2002 Chinese rules: the last ten seconds of a period are
// announced) through the browser's speech synthesis, with the beep where it has none.

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

const CHINESE = ['', '一', '二', '三', '四', '五', '六', '七', '八', '九', '十'];

/** Says `n` (1 to 10) in the chosen language, or beeps where speech is missing. */
function announce(n, language) {
  const synth = window.speechSynthesis;
  if (!synth || typeof SpeechSynthesisUtterance === 'undefined') {
    beep(n <= 3);
    return;
  }
  const zh = language === 'zh';
  const u = new SpeechSynthesisUtterance(zh ? CHINESE[n] : String(n));
  u.lang = zh ? 'zh-CN' : 'en-US';
  u.rate = 1.2;
  synth.cancel();
  synth.speak(u);
}

/**
 * The spoken count of one player's byo-yomi: `update` is called on every clock tick
 * with the milliseconds left in the running period (null when not in a period or not
 * running) and says each of the last ten seconds once, as it begins.
 */
export class ByoyomiCount {
  constructor() {
    this.said = null;
  }

  update(leftMs) {
    const language = prefs.get('count');
    if (leftMs === null || language === 'off') {
      this.said = null;
      return;
    }
    const second = Math.ceil(leftMs / 1000);
    if (second > 10 || second < 1) {
      this.said = null;
      return;
    }
    if (second === this.said) return;
    this.said = second;
    announce(second, language);
  }
}
