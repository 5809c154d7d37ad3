#!/usr/bin/env python3
"""A minimal tengen client: two players meet through a seek, play, reconnect and finish.

Alice posts a seek (9x9, no clock, she takes Black); Bob accepts; both join. Alice plays
E5; Bob's connection drops and he comes back with `since_seq`, receiving exactly the
events he missed (Alice's chat among them); both pass; both accept the count, and the game ends B+73.5 (Black's
area is the whole board; komi 7.5). Prints the final `game_ended` event as JSON and
exits 0, or exits 1 with the reason.

Usage: client.py WS_URL ALICE_TOKEN BOB_TOKEN   (e.g. ws://127.0.0.1:7480/ws)

Python's standard library only: the WebSocket part (RFC 6455, the client side of
text frames) is the first sixty lines. With the `websockets` package, `Socket` is
`websockets.sync.client.connect(url)` and its `send`/`recv`.
"""

import base64
import json
import os
import socket
import struct
import sys
import urllib.parse


class Socket:
    """A WebSocket client connection that sends and receives text frames."""

    def __init__(self, url):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "ws":
            raise ValueError("this example speaks plain ws://; put TLS in front for wss://")
        self.sock = socket.create_connection((u.hostname, u.port or 80), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        path = u.path + ("?" + u.query if u.query else "")
        self.sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {u.netloc}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("closed during the handshake")
            head += chunk
        if not head.startswith(b"HTTP/1.1 101"):
            raise ConnectionError(head.split(b"\r\n")[0].decode())

    def _exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("connection closed")
            data += chunk
        return data

    def _frame(self, opcode, payload):
        # Client frames are masked (RFC 6455 §5.3).
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 1 << 16:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + body)

    def send(self, text):
        self._frame(0x1, text.encode())

    def recv(self):
        """The next text message; answers pings, and raises when the server closes."""
        message = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", self._exact(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", self._exact(8))
            payload = self._exact(n)
            opcode = b0 & 0x0F
            if opcode == 0x9:
                self._frame(0xA, payload)
            elif opcode == 0x8:
                raise ConnectionError(f"closed by the server: {payload[:2].hex()}")
            elif opcode in (0x0, 0x1):
                message += payload
                if b0 & 0x80:
                    return message.decode()

    def close(self):
        self.sock.close()


class Player:
    """One logged-in connection: requests with ids, and the last `seq` seen per game."""

    def __init__(self, url, token):
        self.ws = Socket(f"{url}?token={urllib.parse.quote(token)}")
        self.next_id = 1
        self.last_seq = {}
        # Frames that arrived while a reply was awaited, for `wait_for`.
        self.pending = []
        self.welcome = self.recv()
        assert self.welcome["type"] == "welcome", self.welcome

    def recv(self):
        frame = json.loads(self.ws.recv())
        if "game_id" in frame and "seq" in frame and frame["type"] not in ("ack",):
            self.last_seq[frame["game_id"]] = frame["seq"]
        return frame

    def wait_for(self, kind, **fields):
        """Reads frames until one of type `kind` with these fields; others are skipped."""
        while True:
            frame = self.pending.pop(0) if self.pending else self.recv()
            if frame["type"] == "error":
                raise RuntimeError(f"refused: {frame}")
            if frame["type"] == kind and all(frame.get(k) == v for k, v in fields.items()):
                return frame

    def request(self, msg):
        """Sends `msg` with a fresh id and returns its reply (an error raises)."""
        msg = dict(msg, id=self.next_id)
        self.next_id += 1
        self.ws.send(json.dumps(msg))
        while True:
            frame = self.recv()
            if frame.get("id") == msg["id"]:
                if frame["type"] == "error":
                    raise RuntimeError(f"{msg['type']} refused: {frame['code']}: {frame['message']}")
                return frame
            self.pending.append(frame)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    url, alice_token, bob_token = sys.argv[1:]
    alice, bob = Player(url, alice_token), Player(url, bob_token)

    # Seek and accept: `color` is the challenger's colour.
    settings = {"board_size": 9, "color": "black", "clock": {"system": "none"}}
    seek = alice.request({"type": "seek", "settings": settings})
    accepted = bob.request({"type": "accept", "challenge_id": seek["challenge"]["challenge_id"]})
    game = accepted["game_id"]
    for p in (alice, bob):
        p.request({"type": "join", "game_id": game})

    alice.request({"type": "play", "game_id": game, "move_number": 1, "vertex": "E5"})
    bob.wait_for("move_played", move_number=1)

    # Bob drops; Alice chats meanwhile (a numbered event); Bob reconnects and asks for
    # what he missed.
    seen = bob.last_seq[game]
    bob.ws.close()
    alice.request({"type": "chat", "game_id": game, "text": "come back soon"})
    bob = Player(url, bob_token)
    bob.last_seq[game] = seen
    bob.ws.send(json.dumps({"type": "join", "id": 1, "game_id": game, "since_seq": seen}))
    missed = []
    while True:
        frame = bob.recv()
        if frame["type"] == "ack" and frame.get("id") == 1:
            break
        if frame.get("game_id") == game and "seq" in frame:
            missed.append(frame)
    numbers = [f["seq"] for f in missed]
    if numbers != list(range(seen + 1, seen + 1 + len(missed))):
        sys.exit(f"the catch-up has a gap: after {seen} came {numbers}")
    if not any(f["type"] == "chat" for f in missed):
        sys.exit(f"the catch-up lacks the chat sent while away: {missed}")
    bob.next_id = 2

    # Two passes end play; both accept the count (nothing marked dead).
    bob.request({"type": "pass", "game_id": game, "move_number": 2})
    alice.request({"type": "pass", "game_id": game, "move_number": 3})
    for p in (alice, bob):
        p.wait_for("scoring_started")
    alice.request({"type": "accept_score", "game_id": game})
    bob.request({"type": "accept_score", "game_id": game})
    ended = alice.wait_for("game_ended")
    print(json.dumps(ended))
    return 0 if ended["result"] == "B+73.5" else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, ConnectionError, OSError, AssertionError) as e:
        sys.exit(f"client.py: {e}")
