"""A stand-in for a language-model server: an OpenAI-compatible chat-completions endpoint on 127.0.0.1.

It answers by rule, not by thought, so that the language-model player (``agents.players.llm``), its tests, its
benchmark and the documentation's sample prompt run with no network and no model::

    with ChatStub() as stub:
        llm = agents.load("llm", num_players=2, base_url=stub.base_url, model="good")

``POST /chat/completions`` answers as the request's ``model`` names (``BEHAVIOURS``; any other name: the stub's
``behaviour``):

- ``good``: the number of one listed action, picked by a hash of the request (the same request, the same answer);
- ``label``: that action's label in a sentence; ``think``: a ``<think>`` block naming other numbers, then the number;
- ``nonsense``: a sentence naming no action; ``two``: two numbers; ``illegal``: the label of an action not listed;
- ``fix``: ``illegal`` in a conversation's first request, ``good`` once the player has asked again;
- ``error``: HTTP 500 (its body repeats the request's ``Authorization`` header, as a careless server might);
- ``flaky``: HTTP 503 for a conversation's first request, ``good`` once the player has asked again;
- ``slow``: ``good`` after ``delay`` seconds; ``trickle``: a good answer sent a byte every ``delay`` seconds;
- ``huge``: a ``huge_bytes`` body, its length declared; ``endless``: ``huge_bytes`` of body with no length declared;
- ``broken``: a body that is not JSON.

``usage`` counts tokens as characters / 4, rounded up (a real tokenizer differs). Every request body is kept
(``requests``: the ``max_recorded`` first, with whether an ``Authorization`` header came), so tests can read what
the player sent. The server listens on loopback only, on a free port, reads a request body of at most
``MAX_REQUEST_BYTES``, and stops on ``close()``, on leaving the ``with`` block, or by itself ``lifetime`` seconds
after it started.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import math
import re
import sys
import threading
import time

from hpuno_env.cards import ACTION_LABELS

BEHAVIOURS = ("good", "label", "think", "nonsense", "two", "illegal", "fix", "error", "flaky", "slow", "trickle",
              "huge", "endless", "broken")
MAX_REQUEST_BYTES = 8 * 2**20
_LISTED = re.compile(r"^(\d+)\. (\S+)$", re.M)


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


def listed_actions(messages: list) -> list[str]:
    """The action labels listed, numbered from 1, in the last message that lists any."""
    for message in reversed(messages):
        content = message.get("content") if isinstance(message, dict) else None
        found = _LISTED.findall(content) if isinstance(content, str) else []
        if found:
            return [label for _, label in found]
    return []


class ChatStub:
    """The stand-in server (module docstring); ``base_url`` is its API root, ``http://127.0.0.1:PORT/v1``."""

    def __init__(self, behaviour: str = "good", delay: float = 1.0, huge_bytes: int = 4 * 2**20,
                 lifetime: float = 600.0, max_recorded: int = 10_000):
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"behaviour must be one of {BEHAVIOURS}, got {behaviour!r}")
        self.behaviour, self.delay, self.huge_bytes, self.max_recorded = behaviour, delay, huge_bytes, max_recorded
        self.requests: list[dict] = []
        self.authorized: list[bool] = []
        self.count = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _QuietServer(("127.0.0.1", 0), _handler(self))
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        self._timer = threading.Timer(lifetime, self.close)
        self._timer.daemon = True
        self._timer.start()

    def close(self) -> None:
        if not self._stopping.is_set():
            self._stopping.set()
            self._timer.cancel()
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> ChatStub:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def take_requests(self) -> list[dict]:
        """The request bodies received since the last call (and forget them)."""
        with self._lock:
            taken, self.requests = self.requests, []
            return taken

    # ------------------------------------------------------------ answering

    def record(self, body: dict, authorized: bool) -> None:
        """Keep the body (the first ``max_recorded``) and whether an ``Authorization`` header came with it."""
        with self._lock:
            self.count += 1
            if len(self.requests) < self.max_recorded:
                self.requests.append(body)
                self.authorized.append(authorized)

    def answer_text(self, behaviour: str, messages: list) -> str:
        labels = listed_actions(messages)
        pick = int(hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest(), 16) % max(1, len(labels))
        if behaviour == "fix":
            behaviour = "illegal" if len(messages) <= 2 else "good"
        if not labels or behaviour == "nonsense":
            return "The owls are restless tonight."
        if behaviour == "label":
            return f"I will take {labels[pick]}, thank you."
        if behaviour == "think":
            return f"<think>Maybe 1, maybe {len(labels) + 5}.</think>\n{pick + 1}"
        if behaviour == "two":
            return "1 or 2" if len(labels) > 1 else "1 or 3"
        if behaviour == "illegal":
            return next(label for label in ("keep", "accept", "challenge", "catch", "pass", "uno", "draw")
                        if label not in labels and label in ACTION_LABELS)
        return f"{pick + 1}"

    def completion(self, model: str, messages: list, answer: str) -> bytes:
        prompt = sum(_tokens(m.get("content", "")) for m in messages if isinstance(m, dict) and isinstance(m.get("content"), str))
        return json.dumps({
            "id": "chatcmpl-stub", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": _tokens(answer),
                      "total_tokens": prompt + _tokens(answer)},
        }).encode()

    def wait(self, seconds: float) -> bool:
        """Sleep, cut short when the stub stops; True if it is stopping."""
        return self._stopping.wait(seconds)


class _QuietServer(http.server.ThreadingHTTPServer):
    """Threads that never hold up the exit, and a player hanging up mid-answer is no error worth a traceback."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def _handler(stub: ChatStub):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # quiet: tests and benchmarks print their own lines
            pass

        def do_POST(self) -> None:
            length = self.headers.get("Content-Length", "")
            if not self.path.endswith("/chat/completions"):
                return self._send(404, b'{"error": {"message": "no such path"}}')
            if not length.isdigit() or int(length) > MAX_REQUEST_BYTES:
                return self._send(413, b'{"error": {"message": "request body missing or too large"}}')
            try:
                body = json.loads(self.rfile.read(int(length)))
                model, messages = body["model"], body["messages"]
            except (ValueError, KeyError, TypeError):
                return self._send(400, b'{"error": {"message": "not a chat completion request"}}')
            authorization = self.headers.get("Authorization")
            stub.record(body, authorization is not None)
            behaviour = model if model in BEHAVIOURS else stub.behaviour
            if behaviour == "error":
                return self._send(500, json.dumps({"error": {"message": f"failed for {authorization}"}}).encode())
            if behaviour == "flaky" and len(messages) <= 2:
                return self._send(503, b'{"error": {"message": "busy"}}')
            if behaviour == "broken":
                return self._send(200, b"<html>this is not JSON</html>")
            if behaviour in ("huge", "endless"):
                return self._send_huge(declared=behaviour == "huge")
            if behaviour == "slow" and stub.wait(stub.delay):
                return None
            data = stub.completion(model, messages, stub.answer_text(behaviour, messages))
            if behaviour == "trickle":
                return self._trickle(data)
            return self._send(200, data)

        def _send(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self._write(data)

        def _write(self, data: bytes) -> bool:
            try:
                self.wfile.write(data)
                self.wfile.flush()
                return True
            except OSError:  # the player hung up: nothing more to send
                return False

        def _send_huge(self, declared: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if declared:
                self.send_header("Content-Length", str(stub.huge_bytes))
            else:
                self.send_header("Connection", "close")  # the body ends when the connection does
                self.close_connection = True
            self.end_headers()
            chunk = b" " * 65536
            for _ in range(stub.huge_bytes // len(chunk)):
                if stub._stopping.is_set() or not self._write(chunk):
                    return

        def _trickle(self, data: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            for start in range(len(data)):
                if stub.wait(stub.delay) or not self._write(data[start:start + 1]):
                    return

    return Handler
