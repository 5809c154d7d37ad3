// The director's console on a tournament's page (client-protocol/tournament.md), for its
// directors and its chief referee: change the setup before round one, pair the next
// round and see why each proposed board was paired (its costs, which only a director's
// copy of the tournament carries), swap two players, give a bye, withdraw or disqualify
// a player with a reason, publish. Every refusal shows the server's sentence, its code
// in `data-code`. The chief referee who is not a director may only disqualify.

import { setupForm } from './tournaments.js';
import { el, fill, refusalLine, toast } from './ui.js';

/** The cost columns of a proposed board (pairing.rs `Costs`), most important first. */
const yes = (v) => (v ? 'yes' : 'no');
const COSTS = [
  ['repeat', 'repeat', yes],
  ['forbidden', 'forbidden', yes],
  ['score_gap', 'score gap', (v) => String(v / 2)],
  ['floats', 'floats', String],
  ['colour', 'colour', String],
  ['seeding', 'seeding', (v) => `${v}%`],
  ['same_club', 'same club', yes],
  ['same_country', 'same country', yes],
];

/** Sets a select's options (`[value, label]`), keeping the choice when it is still offered. */
function setOptions(select, pairs) {
  const was = select.value;
  fill(select, pairs.map(([v, l]) => el('option', { value: v }, l)));
  if (pairs.some(([v]) => v === was)) select.value = was;
}

export class DirectorConsole {
  constructor(page) {
    this.page = page;
    this.refusal = refusalLine('td-refusal');
    this.proposal = el('div', { 'data-testid': 'td-proposal' });
    this.stageLine = el('p', { class: 'small', 'data-testid': 'td-stage' });
    const select = (testid, label) => el('select', { 'data-testid': testid, 'aria-label': label });
    this.swapA = select('td-swap-a', 'First player');
    this.swapB = select('td-swap-b', 'Second player');
    this.byePlayer = select('td-bye-player', 'Player to get the bye');
    this.removePlayer = select('td-remove-player', 'Player to remove');
    this.reason = el('input', { type: 'text', maxlength: 500, placeholder: 'the reason', 'aria-label': 'Reason', 'data-testid': 'td-reason' });
    const button = (testid, label, onclick, cls = '') => el('button', { type: 'button', class: cls, 'data-testid': testid, onclick }, label);
    this.publish = button('td-publish', 'Publish the round', () => this.send({ type: 'publish' }, 'Published: the games are created'), 'primary');
    this.swapping = el('div', { class: 'row wrap' }, el('span', { class: 'small' }, 'Swap'), this.swapA, this.swapB,
      button('td-swap', 'Swap', () => this.send({ type: 'swap', a: this.swapA.value, b: this.swapB.value }, 'Swapped')));
    this.giving = el('div', { class: 'row wrap' }, el('span', { class: 'small' }, 'Next bye to'), this.byePlayer,
      button('td-bye', 'Give the bye', () => this.send({ type: 'bye', player: this.byePlayer.value }, 'The bye is given for the next pairing')));
    this.directing = el('div', { class: 'stack' },
      el('div', { class: 'row wrap' },
        button('td-pair', 'Pair the next round', () => this.send({ type: 'pair' }, 'Paired: look at the proposal, then publish')),
        this.publish),
      this.proposal, this.swapping, this.giving);
    this.withdraw = button('td-withdraw', 'Withdraw', () => this.send({ type: 'withdraw', player: this.removePlayer.value }, 'Withdrawn'));
    this.removing = el('div', { class: 'row wrap' }, el('span', { class: 'small' }, 'Remove'), this.removePlayer, this.reason,
      this.withdraw,
      button('td-disqualify', 'Disqualify', () => this.disqualify(), 'danger'));
    this.configure = el('details', { class: 'options', 'data-testid': 'td-configure' });
    this.element = el('section', { class: 'card t-console', 'data-testid': 't-console', hidden: true },
      el('h2', {}, 'Director\'s console'), this.stageLine, this.directing, this.removing, this.configure, this.refusal.line);
    this.setupKey = null;
  }

  async send(msg, done) {
    if (await this.page.act(msg, this.refusal)) toast(done, 'ok');
  }

  async disqualify() {
    const reason = this.reason.value.trim();
    if (await this.page.act({ type: 'disqualify', player: this.removePlayer.value, reason }, this.refusal)) {
      this.reason.value = '';
      toast('Disqualified', 'ok');
    }
  }

  draw(t) {
    const page = this.page;
    const director = page.isDirector();
    this.element.hidden = !director && !page.isChief();
    if (this.element.hidden) return;
    const over = t.stage === 'finished';
    const proposed = t.rounds.find((r) => !r.published);
    this.directing.hidden = !director || over;
    this.removing.hidden = over;
    this.withdraw.hidden = !director;
    // A proposal is swapped and published; a bye is given before the pairing.
    this.publish.hidden = !proposed;
    this.swapping.hidden = !proposed;
    this.giving.hidden = !!proposed;
    this.stageLine.textContent = {
      registration: 'Registration: change the setup, or pair round one.',
      paired: 'A round is proposed: swap players or pair it again, then publish it.',
      playing: 'The round is being played: the next can be paired once every game has a result.',
      ready: 'Every game of the round has a result: pair the next round.',
      finished: 'The tournament is over.',
    }[t.stage] || t.stage;
    const name = (id) => page.name(id);
    const inRound = proposed ? [...proposed.boards.flatMap((b) => [b.black, b.white]), ...proposed.byes] : [];
    setOptions(this.swapA, inRound.map((p) => [p, name(p)]));
    setOptions(this.swapB, inRound.map((p) => [p, name(p)]));
    const playing = t.players.filter((p) => p.status === 'playing').map((p) => [p.user.id, p.user.name]);
    setOptions(this.byePlayer, playing);
    setOptions(this.removePlayer, playing);
    this.drawProposal(proposed);
    this.drawConfigure(t, director);
  }

  /** The proposed round, each board with why its two were paired. */
  drawProposal(round) {
    if (!round) {
      fill(this.proposal);
      return;
    }
    const name = (id) => this.page.name(id);
    const rows = round.boards.map((b) => el('tr', { 'data-testid': 'td-costs', 'data-board': b.board, 'data-black': b.black, 'data-white': b.white },
      el('td', {}, `#${b.board}`), el('td', {}, `${name(b.black)} – ${name(b.white)}`),
      el('td', {}, b.handicap ? `${b.handicap} st.` : 'even'),
      COSTS.map(([k, , shown]) => el('td', { 'data-cost': k, class: b.costs ? (b.costs[k] ? 'warn' : 'muted') : null }, b.costs ? shown(b.costs[k]) : '…'))));
    fill(this.proposal,
      el('h3', {}, `Round ${round.round}, proposed: why each board`),
      el('div', { class: 'scroll' }, el('table', { class: 'costs' },
        el('thead', {}, el('tr', {}, ['Board', 'Players', 'Handicap', ...COSTS.map(([, label]) => label)].map((h) => el('th', {}, h)))),
        el('tbody', {}, rows))),
      round.byes.length ? el('p', { class: 'small' }, `Bye: ${round.byes.map(name).join(', ')}`) : null,
      el('p', { class: 'muted small' }, 'Grey cells cost nothing. A repeat or a forbidden pair only when nothing else was possible; the score gap in points; floats: earlier moves out of the score group the same way; colour: how unbalanced colours stay; seeding: how far from the ideal opponent; then club and country.'));
  }

  /** The setup form, before round one only; rebuilt when the setup changes. */
  drawConfigure(t, director) {
    const open = director && t.stage === 'registration';
    this.configure.hidden = !open;
    const key = open ? JSON.stringify(t.setup) : null;
    if (!open || key === this.setupKey) return;
    this.setupKey = key;
    fill(this.configure, el('summary', {}, 'Change the setup (until round one is paired)'),
      // A new setup is not told on the channel: read the tournament again.
      setupForm(t.setup, 'Save the setup', (setup) => this.send({ type: 'configure', setup }, 'The setup is saved').then(() => this.page.later())));
  }
}
