// The one WebSocket to the server: requests with ids matched to their replies, every
// other frame handed to whoever listens, the offset between our clock and the server's,
// and reconnection with backoff when the socket closes (views rejoin their games with
// a snapshot on the next `welcome`). The token is never put in the socket's URL, where
// browsers print it in their error logs: it goes in an `auth` message, the first frame
// after `welcome`, and the connection counts as ready once it is answered.

/** A request the server refused: `code` is the stable error code, `message` a sentence. */
export class ServerError extends Error {
  constructor(frame) {
    super(frame.message || frame.code);
    this.code = frame.code;
    this.reason = frame.reason;
    this.gameId = frame.game_id;
    /** When waiting lifts the refusal (a `claim_win` too early): the ms left to wait. */
    this.retryAfterMs = frame.retry_after_ms;
  }
}

export class Connection extends EventTarget {
  constructor() {
    super();
    this.token = null;
    this.socket = null;
    this.user = null;
    this.ready = false;
    this.nextId = 1;
    this.pending = new Map();
    this.attempt = 0;
    this.retryTimer = null;
    /** When the next attempt to reconnect is due (Date.now() scale), while offline. */
    this.retryAt = 0;
    /** How many times the server has welcomed us (reconnections show here). */
    this.welcomes = 0;
    /** Server time minus local time, in ms. */
    this.offset = 0;
    this.pinger = setInterval(() => this.syncClock(), 30000);
  }

  /** Connects (again) with `token`, or anonymously with null. */
  open(token) {
    this.token = token;
    this.close();
    this.connect();
  }

  close() {
    clearTimeout(this.retryTimer);
    if (this.socket) {
      const old = this.socket;
      this.socket = null;
      old.onclose = null;
      old.onmessage = null;
      old.close(1000, 'reconnecting');
      this.lost('reconnecting');
    }
  }

  connect() {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}/ws`);
    this.socket = ws;
    this.setStatus('connecting');
    ws.onmessage = (e) => this.receive(e.data);
    ws.onclose = () => {
      if (this.socket !== ws) return;
      this.socket = null;
      this.lost('the connection to the server was lost');
      this.retry();
    };
  }

  retry() {
    const delay = Math.min(10000, 500 * 2 ** this.attempt) * (0.75 + Math.random() * 0.5);
    this.attempt += 1;
    this.retryAt = Date.now() + delay;
    this.setStatus('offline');
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  /** Every request in flight fails: its reply will never come. */
  lost(why) {
    this.ready = false;
    for (const { reject } of this.pending.values()) reject(new Error(`Not sent: ${why}.`));
    this.pending.clear();
  }

  setStatus(status) {
    this.status = status;
    this.dispatch('status', { status });
  }

  dispatch(name, detail) {
    this.dispatchEvent(new CustomEvent(name, { detail }));
  }

  receive(text) {
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    if (msg.type === 'welcome') {
      this.welcomes += 1;
      this.offset = msg.server_time - Date.now();
      this.attempt = 0;
      if (this.token) this.authenticate(this.token);
      else this.becomeReady(null);
      return;
    }
    if (msg.type === 'closing') this.setStatus('closing');
    if (msg.id !== undefined && this.pending.has(msg.id)) {
      const { resolve, reject } = this.pending.get(msg.id);
      this.pending.delete(msg.id);
      if (msg.type === 'error') reject(new ServerError(msg));
      else resolve(msg);
      // A reply is still a frame others may care about (e.g. a game's `ack`); errors
      // belong to whoever asked.
      if (msg.type === 'error') return;
    } else if (msg.type === 'error') {
      this.dispatch('server-error', msg);
      return;
    }
    this.dispatch('message', msg);
  }

  /** Logs the fresh connection in with `auth`; a refused token leaves it anonymous. */
  authenticate(token) {
    const id = this.nextId++;
    this.pending.set(id, {
      resolve: (reply) => this.becomeReady(reply.user),
      reject: (err) => {
        if (!err.code) return;
        if (err.code === 'unauthorized') {
          this.token = null;
          this.dispatch('token-refused', {});
        } else {
          this.dispatch('server-error', { code: err.code, message: err.message });
        }
        this.becomeReady(null);
      },
    });
    this.socket.send(JSON.stringify({ type: 'auth', id, token }));
  }

  becomeReady(user) {
    this.user = user || null;
    this.ready = true;
    this.setStatus('online');
    this.dispatch('ready', { user: this.user });
    this.syncClock();
  }

  /** Sends a request; resolves with its reply, rejects with a ServerError or Error. */
  request(msg) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN || !this.ready) {
      return Promise.reject(new Error('Not connected to the server; reconnecting…'));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ ...msg, id }));
    });
  }

  /** Learns the server's clock from a `ping` round trip. */
  async syncClock() {
    if (!this.ready) return;
    const sent = Date.now();
    try {
      const pong = await this.request({ type: 'ping' });
      const now = Date.now();
      this.offset = pong.server_time - (sent + now) / 2;
    } catch (err) {
      // A lost connection: the next welcome sets the offset again. A refusal is shown.
      if (err.code) this.dispatch('server-error', { code: err.code, message: err.message });
    }
  }

  /** The local time (Date.now() scale) of a server instant. */
  localTime(serverMs) {
    return serverMs - this.offset;
  }
}
