"""A fuzz of the WebSocket from the protocol's own JSON Schemas (tests/contract.rs runs it).

For every client message type of client.json, hypothesis-jsonschema draws well-formed
messages; each is sent with a fresh `id` over one logged-in connection and must be answered
once with that `id` (a reply or an `error`) while the connection stays open. Each is then
broken (an unknown field, a required field left out) and must be answered with an `error`
whose code is `bad_request`. A few frames that are not messages at all must be refused the
same way. Every frame the server sends on the way must be valid by server.json.

Usage: ws_fuzz.py WS_URL SCHEMA_DIR. Prints a JSON summary as its last line.
"""

import itertools
import json
import sys

import hypothesis
import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema
from websockets.sync.client import connect

EXAMPLES = 5
REPLY_WITHIN_S = 10

url, schema_dir = sys.argv[1], sys.argv[2]
with open(f"{schema_dir}/client.json") as f:
    client = json.load(f)
with open(f"{schema_dir}/server.json") as f:
    server_schema = json.load(f)
server = jsonschema.Draft202012Validator(server_schema)
ids = itertools.count(1)
ws = connect(url, max_size=None, open_timeout=REPLY_WITHIN_S).__enter__()
counts = {"types": 0, "well_formed": 0, "malformed": 0, "frames": 0}


def answer(frame_text, request_id, what):
    """Sends a frame; returns the server's answer to `request_id`, checking every frame."""
    try:
        ws.send(frame_text)
        while True:
            frame = json.loads(ws.recv(timeout=REPLY_WITHIN_S))
            counts["frames"] += 1
            errors = [e.message for e in server.iter_errors(frame)]
            assert not errors, f"after {what}: a frame not valid by server.json: {frame}: {errors[:3]}"
            if frame.get("id") == request_id:
                return frame
    except TimeoutError:
        raise AssertionError(f"no answer within {REPLY_WITHIN_S} s to {what}: {frame_text}")
    except Exception as e:  # the connection closed, or a frame that is not JSON
        if isinstance(e, AssertionError):
            raise
        raise AssertionError(f"the connection failed after {what}: {frame_text}: {e!r}")


def unrolled(schema, stack=()):
    """The schema with every `$ref` inlined: hypothesis-jsonschema cannot draw from a
    recursive one (a plan's branches hold branches). A definition already inlined twice
    on the way down becomes `false`, which nothing matches, so the optional list that
    holds it stays empty there."""
    if isinstance(schema, list):
        return [unrolled(v, stack) for v in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return {k: unrolled(v, stack) for k, v in schema.items()}
    name = ref.rsplit("/", 1)[-1]
    if stack.count(name) >= 2:
        return False
    target = unrolled(client["$defs"][name], stack + (name,))
    rest = {k: unrolled(v, stack) for k, v in schema.items() if k != "$ref"}
    return {"allOf": [target, rest]} if rest and target is not False else target


def broken_versions(message):
    """The message with an unknown field, and with each required field left out."""
    yield "an unknown field", {**message, "no_such_field": 1}
    for name in message:
        if name not in ("type", "id"):
            rest = {k: v for k, v in message.items() if k != name}
            yield f"no `{name}`", rest


def check_type(kind, branch):
    required = set(branch.get("required", []))

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(from_schema(unrolled(branch)))
    def well_formed(message):
        request_id = next(ids)
        message = {**message, "id": request_id}
        reply = answer(json.dumps(message), request_id, f"a well-formed `{kind}`")
        assert reply.get("type") != "error" or reply.get("code") != "bad_request" or \
            not reply.get("message", "").startswith("bad message:"), \
            f"a well-formed `{kind}` was refused as not matching its type: {message} -> {reply}"
        counts["well_formed"] += 1
        for what, broken in broken_versions(message):
            # Leaving out a field that may be left out is no fault.
            if what.startswith("no `") and what[4:-1] not in required:
                continue
            reply = answer(json.dumps(broken), request_id, f"`{kind}` with {what}")
            assert reply.get("type") == "error" and reply.get("code") == "bad_request", \
                f"`{kind}` with {what} was not refused as bad_request: {broken} -> {reply}"
            counts["malformed"] += 1

    well_formed()
    counts["types"] += 1


def check_not_messages():
    """Frames that are no message: each refused with an error, the connection kept."""
    request_id = next(ids)
    for text, code in [
        (json.dumps({"type": "no_such_type", "id": request_id}), "unknown_type"),
        (json.dumps({"id": request_id}), "bad_request"),
        (json.dumps({"type": 7, "id": request_id}), "bad_request"),
        (json.dumps({"type": "ping", "id": request_id, "type ": 1}), "bad_request"),
    ]:
        reply = answer(text, request_id, "a frame that is no message")
        assert reply.get("type") == "error" and reply.get("code") == code, f"{text} -> {reply}"
        counts["malformed"] += 1
    # Not an object at all: the error has no id to carry, so a ping after it must still
    # be answered on the same connection.
    for text in ["[1, 2]", "not json", "\"text\"", "{"]:
        ws.send(text)
        request_id = next(ids)
        reply = answer(json.dumps({"type": "ping", "id": request_id}), request_id, f"the frame {text!r}")
        assert reply.get("type") == "pong", reply
        counts["malformed"] += 1


for branch in client["oneOf"]:
    check_type(branch["properties"]["type"]["const"], branch)
check_not_messages()
ws.close()
print(json.dumps(counts))
