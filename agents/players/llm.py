"""A language model at the table: each decision asked of an OpenAI-compatible chat-completions endpoint.

``agents.load("llm", num_players=P, base_url="http://127.0.0.1:8080/v1", model="NAME")``. Any server that speaks
that API works: vLLM, llama.cpp's ``llama-server``, Ollama (``/v1``), or a hosted one. ``base_url`` and ``api_key``
default to the environment variables ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``.

Each decision is one conversation (``POST {base_url}/chat/completions``): a system message with the rules in brief
(``hpuno_env.text_view.rules_text``) and a user message with the table as the seat sees it and its legal actions,
one a line as number, full stop, label (``3. play:red:5``), both written from the observation alone
(``hpuno_env.text_view``), so the text names no card the seat has not seen and the player keeps nothing between
calls.

**Reading an answer** (``hpuno_env.text_view.read_answer``): an answer that names exactly one action, a legal one,
by its number on the list or its label, is played; anything else (no action, two, a number off the list, an action
not legal now) is an *illegal answer*.

**Retries and the fallback.** An illegal answer is asked again: the conversation goes on with the answer and a
user message saying what was wrong and listing the legal actions again. An error (an HTTP status other than 200,
no connection, an answer that is not a chat completion or is over ``max_answer_bytes``) or a timeout (no complete
answer ``timeout`` seconds after the request) is asked again the same way, saying what went wrong, after
``retry_wait`` seconds (doubled each time, at most 30). After ``max_retries`` retries the *fallback* player (``fallback``: the heuristic by
default; ``"random-play"`` or ``"random"``) chooses, and ``stats["fallbacks"]`` counts it.

**Many games at once.** ``act`` asks about every row of its batch concurrently, at most ``concurrency`` requests
in flight (threads sharing one ``httpx.Client``).

**Reproducible and free on a rerun.** ``temperature`` (default 0) and ``seed`` (the seed given to ``load``; None
sends none) go into every request. With ``cache`` (a folder) every answer is stored under the SHA-256 of its
request (the base URL without credentials, and the request body: model, messages, temperature, seed, max_tokens)
and a request met again is answered from the folder without asking: a rerun of the same games costs nothing and
plays the same. At most ``cache_limit`` answers are stored (then no more are written); a file that is not a
stored answer is ignored.

**Secrets.** The API key goes only into the ``Authorization`` header: never into the cache, ``stats``, a log line,
a ``repr`` or an error message (the reasons kept for errors are the player's own words, and any text that passes
through them has the key blanked).

``stats`` counts ``decisions``, ``requests`` (sent to the server), ``cache_hits``, ``illegal_answers``, ``errors``,
``timeouts``, ``fallbacks``, ``prompt_tokens`` and ``completion_tokens`` (as the server reports them; cached
answers cost none), ``seconds`` (each decision's time from its first request to its action, summed: per decision,
the model's latency whatever the concurrency) and ``wall_seconds`` (time spent in ``act``).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import logging
import math
import os
import threading
import time
import urllib.parse
from dataclasses import dataclass

import numpy as np

from hpuno_env._checks import check_finite, check_int, check_seed
from hpuno_env._reading import parse_json, read_json_file
from hpuno_env.cards import ACTION_LABELS
from hpuno_env.options import RulesOptions
from hpuno_env.text_view import (action_lines, legal_actions, read_answer, read_observation, rules_text, situation_text,
                                 table_rules)

from ._base import SeededAgent
from ._batch import check_batch
from .heuristic import HeuristicAgent
from .random_agent import RandomAgent
from .random_play import RandomPlayAgent

log = logging.getLogger(__name__)

FALLBACKS = {"heuristic": HeuristicAgent, "random-play": RandomPlayAgent, "random": RandomAgent}
MAX_RETRIES = 10
MAX_CONCURRENCY = 256
MAX_RETRY_WAIT = 30.0  # seconds: the longest pause before resending after an error
ECHOED_ANSWER_CHARS = 500  # an illegal answer is repeated to the model up to this length
STATS_KEYS = ("decisions", "requests", "cache_hits", "illegal_answers", "errors", "timeouts", "fallbacks",
              "prompt_tokens", "completion_tokens", "seconds", "wall_seconds")


# ---------------------------------------------------------------- one request


@dataclass
class Reply:
    """What one request brought: the answer's text, or why there is none (``timed_out`` for a timeout)."""

    text: str | None = None
    problem: str | None = None
    timed_out: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False


def completion_text(document) -> tuple[str | None, int, int]:
    """(the first choice's message content, prompt tokens, completion tokens) of a chat completion, or
    (None, 0, 0) when ``document`` is not one. Token counts the server does not give count as 0."""
    try:
        content = document["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None, 0, 0
    if not isinstance(content, str):
        return None, 0, 0
    usage = document.get("usage") if isinstance(document.get("usage"), dict) else {}
    counts = [usage.get(key) for key in ("prompt_tokens", "completion_tokens")]
    counts = [value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**40 else 0
              for value in counts]
    return content, counts[0], counts[1]


def public_url(url: str) -> str:
    """``url`` without any user name or password in it (what may be shown and keyed on)."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


class AnswerCache:
    """Answers on disk, one JSON file per request named by the SHA-256 of the request (module docstring)."""

    def __init__(self, folder: str, limit: int, max_bytes: int):
        os.makedirs(folder, exist_ok=True)
        self.folder, self.limit, self.max_bytes = folder, limit, max_bytes
        self._count = sum(1 for entry in os.scandir(folder) if entry.name.endswith(".json"))
        self._lock = threading.Lock()

    @staticmethod
    def key(url: str, body: dict) -> str:
        return hashlib.sha256(json.dumps({"url": url, "body": body}, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> Reply | None:
        path = os.path.join(self.folder, f"{key}.json")
        if not os.path.exists(path):
            return None
        try:
            stored = read_json_file(path, "a cached answer", self.max_bytes)
        except ValueError:
            return None
        if not isinstance(stored, dict) or not isinstance(stored.get("text"), str):
            return None
        return Reply(text=stored["text"], cached=True)

    def put(self, key: str, text: str) -> None:
        with self._lock:
            if self._count >= self.limit:
                return
            self._count += 1
        path = os.path.join(self.folder, f"{key}.json")
        partial = f"{path}.{threading.get_ident()}.part"
        with open(partial, "w") as file:
            json.dump({"text": text}, file)
        os.replace(partial, path)  # a reader never sees half a file


# ---------------------------------------------------------------- the player


class LLMAgent(SeededAgent):
    """A language model behind an OpenAI-compatible chat-completions endpoint (module docstring).

    Args:
        num_players: seats of the games it plays.
        seed: its random stream (the fallback's tie-breaks) and the ``seed`` of every request (None: none sent).
        base_url: the API's root, e.g. ``http://127.0.0.1:8080/v1`` (default: ``OPENAI_BASE_URL``).
        model: the model's name on that server.
        api_key: sent as ``Authorization: Bearer KEY`` (default: ``OPENAI_API_KEY``; none sent when neither).
        timeout: seconds a request may take, answer included.
        max_retries: requests again after an illegal answer, an error or a timeout, before the fallback plays.
        temperature: the sampling temperature sent.
        max_tokens: the longest answer asked for (None: not sent, the server's default).
        concurrency: requests in flight at once.
        cache: a folder for answers (None: no cache).
        cache_limit: answers the cache folder stores at most.
        max_answer_bytes: the largest answer body read; a longer one is an error.
        retry_wait: seconds before resending after an error or timeout (doubled each time, at most 30).
        fallback: who plays when the model gives no legal answer: ``"heuristic"``, ``"random-play"``, ``"random"``.
        rules: the table's rules options (``RulesOptions``'s); the house rules are read from each observation.
    """

    def __init__(self, num_players: int = 4, seed: int | None = None, base_url: str | None = None,
                 model: str | None = None, api_key: str | None = None, timeout: float = 60.0, max_retries: int = 2,
                 temperature: float = 0.0, max_tokens: int | None = None, concurrency: int = 8,
                 cache: str | os.PathLike | None = None, cache_limit: int = 100_000, max_answer_bytes: int = 1_000_000,
                 retry_wait: float = 1.0, fallback: str = "heuristic", rules: dict | None = None):
        self._fallback = None  # set below; SeededAgent.__init__ calls seed() first
        super().__init__(num_players, seed)
        self.request_seed = check_seed(seed)
        self.base_url = _checked_url(base_url if base_url is not None else os.environ.get("OPENAI_BASE_URL"))
        self.model = _checked_text(model, "model")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY") or None
        self.__key = None if key is None else _checked_text(key, "api_key", secret=True)
        self.timeout = check_finite(timeout, "timeout", low=0, high=3600, low_open=True)
        self.max_retries = check_int(max_retries, "max_retries", low=0, high=MAX_RETRIES)
        self.temperature = check_finite(temperature, "temperature", low=0, high=2)
        self.max_tokens = None if max_tokens is None else check_int(max_tokens, "max_tokens", low=1, high=1_000_000)
        self.concurrency = check_int(concurrency, "concurrency", low=1, high=MAX_CONCURRENCY)
        self.max_answer_bytes = check_int(max_answer_bytes, "max_answer_bytes", low=1024, high=2**30)
        self.retry_wait = check_finite(retry_wait, "retry_wait", low=0, high=MAX_RETRY_WAIT)
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {sorted(FALLBACKS)}, got {fallback!r}")
        self.fallback = fallback
        self._fallback = FALLBACKS[fallback](num_players, seed=seed)
        self.rules = RulesOptions.from_kwargs(**(rules or {}))
        cache_limit = check_int(cache_limit, "cache_limit", low=0, high=10_000_000)
        if cache is not None and not isinstance(cache, (str, os.PathLike)):
            raise ValueError(f"cache must be a folder path or None, got {type(cache).__name__}")
        self.cache = None if cache is None else AnswerCache(os.fspath(cache), cache_limit, self.max_answer_bytes)
        self.stats = dict.fromkeys(STATS_KEYS, 0)
        self.stats["seconds"] = self.stats["wall_seconds"] = 0.0
        self._lock = threading.Lock()
        self._client = None
        self._pool = None

    def __repr__(self) -> str:
        return f"LLMAgent(num_players={self.num_players}, model={self.model!r}, base_url={public_url(self.base_url)!r})"

    def __getstate__(self):
        raise TypeError("an LLMAgent holds an API key and open connections: it is not pickled or copied")

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        if self._fallback is not None:
            self._fallback.seed(seed)

    def close(self) -> None:
        """Close the connections and the worker threads (a later ``act`` opens them again)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ------------------------------------------------------------ act

    def act(self, observations, action_masks) -> np.ndarray:
        masks = check_batch(observations, action_masks, self.num_players)
        started = time.perf_counter()
        # The fallback's choice for every row, from the agent's own stream (one draw block per row, as the
        # evaluation's row streams want), whether or not it is needed.
        self._fallback.rng = self.rng
        fallback_actions = np.asarray(self._fallback.act(observations, masks))
        prompts = [self.prompt(observation, mask) for observation, mask in zip(np.asarray(observations), masks)]
        self._open()
        futures = [self._pool.submit(self._decide, messages, legal_actions(mask))
                   for messages, mask in zip(prompts, masks)]
        actions = np.array([future.result() for future in futures], np.int64)
        missing = actions < 0
        actions[missing] = fallback_actions[missing]
        with self._lock:
            self.stats["fallbacks"] += int(missing.sum())
            self.stats["wall_seconds"] += time.perf_counter() - started
        return actions

    def prompt(self, observation, mask) -> list[dict]:
        """The messages of one decision's first request: the rules, then the table and the legal actions."""
        view = read_observation(observation, self.num_players)
        rules = table_rules(view, self.rules)
        return [{"role": "system", "content": rules_text(self.num_players, rules)},
                {"role": "user", "content": situation_text(view, self.num_players, rules.target_score, mask)}]

    def _open(self) -> None:
        if self._pool is None:
            import httpx  # here: importing agents stays free of it until a language model plays

            limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
            self._client = httpx.Client(timeout=httpx.Timeout(self.timeout), limits=limits, follow_redirects=False)
            self._pool = concurrent.futures.ThreadPoolExecutor(self.concurrency, thread_name_prefix="llm")

    def _decide(self, messages: list[dict], legal: list[int]) -> int:
        """One decision: ask, and ask again with the reason while no legal action comes; -1 when the fallback must
        play. Every retry's last message lists the legal actions again."""
        started = time.perf_counter()
        messages = list(messages)
        action, waited = -1, 0
        for attempt in range(self.max_retries + 1):
            reply = self._ask(messages)
            if reply.text is None:
                log.info("request %d of a decision got no answer: %s", attempt + 1, reply.problem)
                messages.append(_retry_message(f"your last request got no answer ({reply.problem})", legal))
                if attempt < self.max_retries and self.retry_wait > 0:
                    time.sleep(min(MAX_RETRY_WAIT, self.retry_wait * 2**waited))
                    waited += 1
                continue
            chosen, problem = read_answer(reply.text, legal)
            if chosen is not None:
                action = chosen
                break
            self._count(illegal_answers=1)
            log.info("answer %d of a decision was illegal: %s", attempt + 1, problem)
            messages += [{"role": "assistant", "content": reply.text[:ECHOED_ANSWER_CHARS]},
                         _retry_message(f"that is not one legal action: {problem}", legal)]
        self._count(decisions=1, seconds=time.perf_counter() - started)
        return action

    def _count(self, **amounts) -> None:
        with self._lock:
            for name, amount in amounts.items():
                self.stats[name] += amount

    def _ask(self, messages: list[dict]) -> Reply:
        """One request, or its answer from the cache; every outcome counted in ``stats``."""
        body = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.request_seed is not None:
            body["seed"] = self.request_seed
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        key = None if self.cache is None else AnswerCache.key(public_url(self.base_url), body)
        if key is not None:
            reply = self.cache.get(key)
            if reply is not None:
                self._count(cache_hits=1)
                return reply
        reply = self._post(body)
        self._count(requests=1, errors=int(reply.text is None and not reply.timed_out), timeouts=int(reply.timed_out),
                    prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens)
        if reply.text is not None and key is not None:
            self.cache.put(key, reply.text)
        return reply

    def _post(self, body: dict) -> Reply:
        """POST the body to ``{base_url}/chat/completions``; the answer read up to ``max_answer_bytes``, within
        ``timeout`` seconds in all."""
        import httpx

        headers = {"Content-Type": "application/json"}
        if self.__key is not None:
            headers["Authorization"] = f"Bearer {self.__key}"
        deadline = time.monotonic() + self.timeout
        try:
            with self._client.stream("POST", self.base_url.rstrip("/") + "/chat/completions", json=body,
                                     headers=headers) as response:
                if response.status_code != 200:
                    return Reply(problem=f"HTTP status {response.status_code}")
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > self.max_answer_bytes:
                    return Reply(problem=f"an answer of {int(declared):,} bytes, over max_answer_bytes")
                data = bytearray()
                for chunk in response.iter_bytes():
                    data += chunk
                    if len(data) > self.max_answer_bytes:
                        return Reply(problem=f"an answer over max_answer_bytes ({self.max_answer_bytes:,} bytes)")
                    if time.monotonic() > deadline:
                        return Reply(problem=f"no whole answer within {self.timeout:g} s", timed_out=True)
        except httpx.TimeoutException:
            return Reply(problem=f"no answer within {self.timeout:g} s", timed_out=True)
        except (httpx.HTTPError, OSError, ValueError) as error:
            return Reply(problem=self._redacted(f"no answer ({type(error).__name__})"))
        try:
            document = parse_json(bytes(data), "the answer")
        except ValueError:
            return Reply(problem="an answer that is not JSON")
        text, prompt_tokens, completion_tokens = completion_text(document)
        if text is None:
            return Reply(problem="an answer that is not a chat completion")
        return Reply(text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)

    def _redacted(self, text: str) -> str:
        return text if not self.__key else text.replace(self.__key, "***")


def _retry_message(reason: str, legal: list[int]) -> dict:
    """The user message of a retry: why, then the legal actions listed again (the request's last message lists
    them, as in the first request)."""
    mask = np.zeros(len(ACTION_LABELS), bool)
    mask[legal] = True
    return {"role": "user", "content": f"{reason[0].upper()}{reason[1:]}. Your legal actions:\n"
            + "\n".join(action_lines(mask)) + "\nAnswer with exactly one number or label."}


def _checked_text(value, name: str, secret: bool = False) -> str:
    """A non-empty one-line string of at most 4,096 characters, else ValueError (a secret's value never shown)."""
    if not isinstance(value, str) or not value or len(value) > 4096 or any(c in value for c in "\r\n\0"):
        shown = "a value" if secret else repr(value)[:80]
        raise ValueError(f"{name} must be a non-empty one-line string, got {shown}"
                         + ("" if value is not None or name != "model" else " (the model's name on the server)"))
    return value


def _checked_url(url) -> str:
    if url is None:
        raise ValueError("base_url is not given and OPENAI_BASE_URL is not set: give the API's root, "
                         "e.g. base_url='http://127.0.0.1:8080/v1'")
    if not isinstance(url, str) or not url or len(url) > 4096 or any(c in url for c in "\r\n\0"):
        raise ValueError(f"base_url must be a one-line http:// or https:// URL, got a {type(url).__name__}")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"base_url must be an http:// or https:// URL, got {public_url(url)!r}")
    return url


def measured_rates(stats: dict) -> dict:
    """Per-decision rates of a ``stats`` dict: illegal answers, fallbacks, tokens and seconds per decision."""
    decisions = stats["decisions"] or math.nan
    return {"illegal_answers_per_decision": stats["illegal_answers"] / decisions,
            "fallback_rate": stats["fallbacks"] / decisions,
            "prompt_tokens_per_decision": stats["prompt_tokens"] / decisions,
            "completion_tokens_per_decision": stats["completion_tokens"] / decisions,
            "seconds_per_decision": stats["seconds"] / decisions}
