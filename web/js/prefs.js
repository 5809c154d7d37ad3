// The player's options, kept in localStorage: sound, the spoken byo-yomi count and its
// language, confirming a move with a second tap (on by default on touch screens), and
// the users whose chat lines this browser hides (muted).

const KEY = 'tengen.prefs';

const DEFAULTS = {
  sound: true,
  /** `off`, `en` or `zh`. */
  count: 'off',
  /** User ids whose chat lines are hidden. */
  muted: [],
  confirm: typeof matchMedia === 'function' && matchMedia('(pointer: coarse)').matches,
};

function load() {
  try {
    return { ...DEFAULTS, ...JSON.parse(localStorage.getItem(KEY) || '{}') };
  } catch {
    return { ...DEFAULTS };
  }
}

export const prefs = {
  get(name) {
    return load()[name];
  },
  set(name, value) {
    localStorage.setItem(KEY, JSON.stringify({ ...load(), [name]: value }));
  },
};
