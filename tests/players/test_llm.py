"""Language-model players with no network and no model: the text face of a seat's view, answers read exactly, and
``agents.load("llm")`` against the stand-in server (``agents.players.llm_stub``) answering well, with nonsense,
with illegal labels, with HTTP errors, past the timeout and with huge bodies; what every request names is checked
against the cards its seat has seen."""

from __future__ import annotations

import json
import logging
import os
import re
import time

import numpy as np
import pytest

import agents
import hpuno_env
from agents.evaluate import duplicate_win_rate
from agents.players.llm import AnswerCache, LLMAgent
from hpuno_env.text_view import read_answer
from agents.players.llm_stub import ChatStub
from hpuno_env import ACTION_LABELS, CARD_LABELS, VectorEngine
from hpuno_env.options import ALL_HOUSE_RULES, RulesOptions
from hpuno_env.text_view import action_lines, read_observation, rules_text, seat_text, table_rules

KEY = "sk-test-DO-NOT-LEAK-1234567890"
COLOURED = re.compile(r"\b(red|yellow|green|blue):(\d|skip|reverse|draw2)\b")
WILDS = re.compile(r"(?<![\w:])(wild_draw4|sorting_hat|wild)(?![\w])")
TABLES = [(2, {}), (3, {"uno_penalty": 4}), (4, dict(ALL_HOUSE_RULES)), (3, {"deck": "classic", "stacking": "both"})]


def cards_named(text: str) -> set[str]:
    """Every card label a text names (action labels name their card: play:red:5 names red:5)."""
    return {match.group(0) for match in COLOURED.finditer(text)} | {m.group(1) for m in WILDS.finditer(text)}


def seen_by(engine: VectorEngine, game: int, seat: int) -> set[str]:
    """Card labels seat may know now: its hand, the discard pile, hands shown to it (as tests/arena reads them)."""
    state = engine.game_state(game)
    seen = set(state["hands"][f"player_{seat}"]) | set(state["discard"])
    s = engine.state
    for owner in range(engine.num_players):
        if owner != seat and s.revealed_seen[game, seat, owner]:
            seen |= {CARD_LABELS[c] for c in np.flatnonzero(s.revealed[game, seat, owner])}
    return seen


# ---------------------------------------------------------------- the text face of a view


@pytest.mark.parametrize("players,rules", TABLES)
def test_the_view_read_from_an_observation_is_the_engine_s_table(players, rules):
    engine = VectorEngine(num_games=4, num_players=players, seed=1, **rules)
    engine.reset(seed=1)
    random_play = agents.load("random-play", num_players=players, seed=1)
    for _ in range(150):
        observations, masks = engine.observe(), engine.legal_mask()
        for g in range(4):
            seat = int(engine.current_player[g])
            view, state = read_observation(observations[g], players), engine.game_state(g)
            assert view["hand"] == state["hands"][f"player_{seat}"]
            assert (view["top"], view["color"], view["phase"]) == (state["top"], state["color"], state["phase"])
            assert view["draw_pile"] == len(state["draw_pile"]) and view["pending_draw"] == state["pending_draw"]
            assert sorted(view["discard"]) == sorted(state["discard"])
            assert view["direction_left"] == (state["direction"] == 1)
            sizes = [len(state["hands"][f"player_{(seat + k) % players}"]) for k in range(1, players)]
            assert [o["cards"] for o in view["opponents"]] == sizes
            assert table_rules(view, rules) == RulesOptions.from_kwargs(**rules)
        engine.step(random_play.act(observations, masks))


@pytest.mark.parametrize("players,rules", TABLES)
def test_the_aec_text_render_names_no_card_its_seat_has_not_seen(players, rules):
    env = hpuno_env.raw_env(num_players=players, render_mode="text", **rules)
    policy = agents.load("random-play", num_players=players, seed=2)
    renders = 0
    for seed in range(3):
        env.reset(seed=seed)
        seen = {agent: set() for agent in env.possible_agents}
        for agent in env.agent_iter(400):
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent)
            seen[agent] |= seen_by(env.engine, 0, seat)
            text = env.render()
            assert text == env.render(), "the text is deterministic"
            situation = text.split("\n\n", 1)[1]
            assert cards_named(situation) <= seen[agent], cards_named(situation) - seen[agent]
            assert text.split("\n\n", 1)[0] == rules_text(players, env.engine.options)
            assert text.count("\n") < 200
            legal = [line for line in text.splitlines() if re.fullmatch(r"\d+\. \S+", line)]
            assert legal == action_lines(observation["action_mask"]) and legal
            renders += 1
            env.step(int(policy.act(observation["observation"][None], observation["action_mask"][None])[0]))
    assert renders > 100


def test_the_rules_in_brief_follow_the_options():
    standard = rules_text(2, RulesOptions())
    assert "sorting_hat" in standard and "draw 2 cards" in standard and "500 points" in standard
    changed = {
        "uno_penalty": (4, "draw 4 cards"), "uno_catch": ("off", "no UNO calls"), "wd4_bluffing": (False, "no challenge"),
        "voluntary_draw": (False, "only when you cannot play"), "gryffindor_color": ("blue", "draw a blue card"),
        "target_score": (200, "200 points"), "scoring": ("lowest", "lowest total wins"), "episode": ("match", "win the match"),
        "deck": ("classic", "no sorting_hat"), "stacking": ("mixed", "wild_draw4 on a draw2"), "jump_in": (True, "Jump-in"),
        "seven_zero": (True, "Seven-O"), "draw_until_playable": (True, "keep drawing"), "forced_play": (True, "must be played"),
        "two_player_reverse_skips": (False, "the direction of play flips."),
    }
    for name, (value, words) in changed.items():
        text = rules_text(2, RulesOptions.from_kwargs(**{name: value}))
        assert words in text and words not in standard, name


def test_a_seat_text_starts_with_the_rules_and_ends_with_the_numbered_actions():
    engine = VectorEngine(num_games=1, num_players=3, seed=4)
    engine.reset(seed=4)
    text = seat_text(engine.observe()[0], engine.legal_mask()[0], 3)
    lines = text.splitlines()
    legal = [ACTION_LABELS[a] for a in np.flatnonzero(engine.legal_mask()[0])]
    assert lines[0].startswith("You are playing Harry Potter UNO")
    assert lines[-1 - len(legal) - 1] == "Your legal actions:"
    assert lines[-1 - len(legal):-1] == [f"{n}. {label}" for n, label in enumerate(legal, 1)]
    with pytest.raises(ValueError, match="observation must be one row"):
        read_observation(engine.observe()[0][:-1], 3)


# ---------------------------------------------------------------- reading an answer


@pytest.mark.parametrize("answer,expected", [
    ("2", 55), (" 2. ", 55), ("**2**", 55), ("draw", 55), ("DRAW", 55), ("2. draw", 55), ("I will draw.", 55),
    ("`play:red:5`", 5), ("red:5", 5), ("1", 5), ("Answer: play:red:5 (1)", 5), ("<think>1 or 2? 7?</think>2", 55),
])
def test_an_answer_naming_one_legal_action_is_that_action(answer, expected):
    assert read_answer(answer, [5, 55]) == (expected, None)


@pytest.mark.parametrize("answer,why", [
    ("", "no action"), ("I am not sure.", "no action"), ("1 or 2", "2 different"), ("play:red:5 or draw", "2 different"),
    ("3", "not on the list"), ("0", "not on the list"), ("99999999999999999999", "not on the list"),
    ("keep", "not legal now"), ("play:blue:7", "not legal now"), ("<think>2", "cut off"), ("1. play:red:5, 2. draw", "2 different"),
])
def test_an_answer_naming_none_or_two_or_an_illegal_action_is_illegal(answer, why):
    action, problem = read_answer(answer, [5, 55])
    assert action is None and why in problem
    assert not cards_named(problem), "the reason names no card"


# ---------------------------------------------------------------- the player against the stand-in server


@pytest.fixture(scope="module")
def stub():
    with ChatStub(delay=3.0, huge_bytes=4 * 2**20, lifetime=300) as server:
        yield server


@pytest.fixture(scope="module")
def position():
    engine = VectorEngine(num_games=6, num_players=3, seed=5)
    engine.reset(seed=5)
    return engine.observe(), engine.legal_mask()


def llm(stub, model, **options):
    options = {"timeout": 1.0, "max_retries": 2, "retry_wait": 0.0, "api_key": KEY, "seed": 0, **options}
    return agents.load("llm", num_players=3, base_url=stub.base_url, model=model, **options)


# behaviour -> (requests per decision, illegal answers per decision, errors, timeouts, fallback?)
CASES = {
    "good": (1, 0, 0, 0, False), "label": (1, 0, 0, 0, False), "think": (1, 0, 0, 0, False),
    "nonsense": (3, 3, 0, 0, True), "two": (3, 3, 0, 0, True), "illegal": (3, 3, 0, 0, True), "fix": (2, 1, 0, 0, False),
    "error": (3, 0, 3, 0, True), "flaky": (2, 0, 1, 0, False), "broken": (3, 0, 3, 0, True),
    "huge": (3, 0, 3, 0, True), "endless": (3, 0, 3, 0, True), "slow": (3, 0, 0, 3, True), "trickle": (3, 0, 0, 3, True),
}


@pytest.mark.parametrize("model", sorted(CASES))
def test_every_kind_of_answer_ends_in_bounded_time_with_the_right_counts(stub, position, model):
    observations, masks = position
    requests, illegal, errors, timeouts, falls_back = CASES[model]
    # 1 s where the stub is meant to outlast the timeout; more where it answers at once, so that a loaded
    # machine's slow answer is not counted as a timeout
    timeout = 1.0 if timeouts else 5.0
    player = llm(stub, model, timeout=timeout)
    fallback = agents.load("heuristic", num_players=3, seed=0)
    started = time.perf_counter()
    with player:
        actions = player.act(observations, masks)
    assert time.perf_counter() - started < 3 * timeout + 10, "6 decisions, at most 3 requests each, 6 at a time"
    assert masks[np.arange(6), actions].all()
    rows = len(masks)
    stats = player.stats
    assert (stats["decisions"], stats["requests"], stats["illegal_answers"]) == (rows, rows * requests, rows * illegal)
    assert (stats["errors"], stats["timeouts"], stats["fallbacks"]) == (rows * errors, rows * timeouts, rows * falls_back)
    if falls_back:
        np.testing.assert_array_equal(actions, fallback.act(observations, masks))
    assert (stats["prompt_tokens"] > 0) == (model not in ("error", "broken", "huge", "endless", "slow", "trickle"))
    assert stats["seconds"] > 0 and stats["wall_seconds"] > 0


def test_a_retry_tells_the_model_why_and_lists_the_legal_actions_again(stub, position):
    stub.take_requests()
    with llm(stub, "fix") as player:
        player.act(*position)
    conversations = [r["messages"] for r in stub.take_requests()]
    retries = [m for m in conversations if len(m) == 4]
    assert len(retries) == 6
    for messages in retries:
        assert messages[2]["role"] == "assistant" and messages[2]["content"] in ("keep", "accept", "challenge", "catch")
        assert "not legal now" in messages[3]["content"]
        assert action_lines_of(messages[3]["content"]) == action_lines_of(messages[1]["content"])


def test_a_retry_after_an_error_says_so_and_lists_the_legal_actions_again(stub, position):
    stub.take_requests()
    with llm(stub, "flaky") as player:
        player.act(*position)
    retries = [r["messages"] for r in stub.take_requests() if len(r["messages"]) == 3]
    assert len(retries) == 6 and player.stats["errors"] == 6 and player.stats["fallbacks"] == 0
    for messages in retries:
        assert messages[2]["role"] == "user" and "got no answer (HTTP status 503)" in messages[2]["content"]
        assert action_lines_of(messages[2]["content"]) == action_lines_of(messages[1]["content"])


def action_lines_of(text: str) -> list[str]:
    return re.findall(r"^\d+\. \S+$", text, re.M)


def test_requests_carry_the_model_temperature_seed_and_key_but_the_key_goes_nowhere_else(stub, position, tmp_path, caplog):
    stub.take_requests()
    caplog.set_level(logging.DEBUG)
    with llm(stub, "error", temperature=0.7, seed=11, max_tokens=20, cache=tmp_path) as player:
        player.act(*position)
        text = repr(player) + json.dumps(player.stats)
    bodies = stub.take_requests()
    assert {(b["model"], b["temperature"], b["seed"], b["max_tokens"]) for b in bodies} == {("error", 0.7, 11, 20)}
    assert all(stub.authorized[-len(bodies):])
    text += caplog.text + "".join(path.read_text() for path in tmp_path.iterdir())
    assert KEY not in text and "Bearer" not in text
    with pytest.raises(TypeError, match="not pickled"):
        import copy
        copy.deepcopy(player)


def test_many_decisions_are_asked_concurrently(stub, position):
    with llm(stub, "slow", timeout=5.0, concurrency=6) as player:
        stub.delay = 0.5
        try:
            started = time.perf_counter()
            player.act(*position)
            wall = time.perf_counter() - started
        finally:
            stub.delay = 3.0
    assert player.stats["timeouts"] == 0 and player.stats["seconds"] >= 6 * 0.5
    assert wall < 6 * 0.5 * 0.6, f"six 0.5 s answers took {wall:.2f} s"


def test_the_cache_answers_a_rerun_without_asking_and_plays_the_same(stub, tmp_path):
    engine = VectorEngine(num_games=4, num_players=3, seed=8)

    def play(player):
        engine.reset(seed=8)
        chosen = []
        for _ in range(30):
            actions = player.act(engine.observe(), engine.legal_mask())
            chosen.append(actions.tolist())
            engine.step(actions)
        return chosen

    with llm(stub, "fix", cache=tmp_path / "answers") as first:
        played = play(first)
    with llm(stub, "fix", cache=tmp_path / "answers") as second:
        assert play(second) == played
    assert first.stats["requests"] > 0 and second.stats["requests"] == 0
    assert second.stats["cache_hits"] == first.stats["requests"] and second.stats["prompt_tokens"] == 0
    names = os.listdir(tmp_path / "answers")
    assert names and all(re.fullmatch(r"[0-9a-f]{64}\.json", name) for name in names)
    (tmp_path / "answers" / names[0]).write_text("[not, an answer")  # a damaged entry is asked again, not trusted
    with llm(stub, "fix", cache=tmp_path / "answers", cache_limit=len(names)) as third:
        assert play(third) == played
    assert third.stats["requests"] == 1 and len(os.listdir(tmp_path / "answers")) == len(names)


def test_no_request_names_a_card_its_seat_has_not_seen(stub):
    """Games with the language model in every seat (with the house rules too): every request's user messages are
    scanned against the cards the asked seat had seen this round; the system message is the table's rules."""
    for players, rules in [(2, {}), (4, dict(ALL_HOUSE_RULES, uno_penalty=4))]:
        engine = VectorEngine(num_games=3, num_players=players, seed=3, **rules)
        engine.reset(seed=3)
        player = agents.load("llm", num_players=players, base_url=stub.base_url, model="label", rules_options=rules,
                             timeout=5.0, retry_wait=0.0)
        system = rules_text(players, RulesOptions.from_kwargs(**rules))
        seen = [[set() for _ in range(players)] for _ in range(3)]
        stub.take_requests()
        scanned = 0
        with player:
            for _ in range(200):
                observations, masks, seats = engine.observe(), engine.legal_mask(), engine.current_player.copy()
                for g in range(3):
                    seen[g][seats[g]] |= seen_by(engine, g, int(seats[g]))
                asked = {player.prompt(observations[g], masks[g])[1]["content"]: g for g in range(3)}
                actions = player.act(observations, masks)
                for body in stub.take_requests():
                    assert body["messages"][0] == {"role": "system", "content": system}
                    g = asked[body["messages"][1]["content"]]
                    named = set().union(*(cards_named(m["content"]) for m in body["messages"] if m["role"] == "user"))
                    assert named <= seen[g][seats[g]], named - seen[g][seats[g]]
                    scanned += 1
                _, terminated, truncated = engine.step(actions)
                for g in np.flatnonzero(terminated | truncated):
                    seen[g] = [set() for _ in range(players)]
        assert scanned == player.stats["requests"] >= 3 * 200 and player.stats["fallbacks"] == 0


def test_options_are_checked_with_one_line_errors(stub, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    bad = [({}, "base_url is not given"), ({"base_url": "ftp://x"}, "http:// or https://"),
           ({"base_url": stub.base_url}, "model must be"), ({"base_url": stub.base_url, "model": ""}, "model must be"),
           ({"base_url": stub.base_url, "model": "m", "timeout": 0}, "timeout"),
           ({"base_url": stub.base_url, "model": "m", "max_retries": -1}, "max_retries"),
           ({"base_url": stub.base_url, "model": "m", "max_retries": 2.0}, "max_retries"),
           ({"base_url": stub.base_url, "model": "m", "temperature": float("nan")}, "temperature"),
           ({"base_url": stub.base_url, "model": "m", "concurrency": 0}, "concurrency"),
           ({"base_url": stub.base_url, "model": "m", "fallback": "ppo_2p"}, "fallback"),
           ({"base_url": stub.base_url, "model": "m", "api_key": "a\nb"}, "api_key"),
           ({"base_url": stub.base_url, "model": "m", "colour": "red"}, "unexpected keyword")]
    for options, words in bad:
        with pytest.raises(ValueError, match=words) as raised:
            agents.load("llm", num_players=2, **options)
        assert "\n" not in str(raised.value) and "a\nb" not in str(raised.value)


def test_base_url_and_key_come_from_the_environment(stub, monkeypatch, position):
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    stub.take_requests()
    with agents.load("llm", num_players=3, model="good") as player:
        player.act(*position)
    assert player.base_url == stub.base_url and all(stub.authorized[-6:])
    assert KEY not in repr(player)


def test_the_duplicate_evaluation_plays_the_language_model_and_the_tournament_takes_its_options(stub, tmp_path):
    with llm(stub, "label") as player:
        result = duplicate_win_rate(player, agents.load("heuristic", num_players=3), agents.load("random-play", num_players=3),
                                    num_players=3, rounds=3, seed=0)
    assert result["rounds"] == 3 and player.stats["decisions"] > 0 and player.stats["fallbacks"] == 0
    from agents.evaluation import tournament

    status = tournament.main(["llm", "heuristic", "--players", "2", "--rounds", "2", "--quiet", "--no-mixed",
                              "--option", f"llm:base_url={stub.base_url}", "--option", "llm:model=good",
                              "--option", "llm:timeout=2.5", "--out", str(tmp_path / "t")])
    assert status == 0
    results = json.loads((tmp_path / "t" / "results.json").read_text())
    assert [entry["agent"] for entry in results["ranking"]] and "llm" in json.dumps(results["ranking"])
    with pytest.raises(SystemExit):
        tournament.main(["llm", "heuristic", "--option", f"llm:api_key={KEY}", "--option", "llm:model=good"])


def test_agent_options_on_the_command_line_are_read_and_checked():
    from agents._cli import parse_agent_options

    assert parse_agent_options(["llm:timeout=2.5", "llm:max_retries=3", "llm#2:model=b", "llm:cache=runs/c"]) == {
        "llm": {"timeout": 2.5, "max_retries": 3, "cache": "runs/c"}, "llm#2": {"model": "b"}}
    for bad, words in [("llm=model", "AGENT:NAME=VALUE"), ("llm:model", "NAME=VALUE"), ("llm:api_key=sk-1", "secret")]:
        with pytest.raises(ValueError, match=words):
            parse_agent_options([bad])
    with pytest.raises(ValueError, match="twice"):
        parse_agent_options(["llm:model=a", "llm:model=b"])
    from agents.evaluation import tournament

    with pytest.raises(ValueError, match="name no agent"):
        tournament.load_agents(["heuristic", "random"], 2, agent_options={"llm": {"model": "a"}})


def test_the_answer_cache_keys_are_the_request_s_hash():
    a = AnswerCache.key("http://h/v1", {"model": "m", "messages": []})
    assert re.fullmatch(r"[0-9a-f]{64}", a) and a != AnswerCache.key("http://h/v1", {"model": "n", "messages": []})
    assert isinstance(LLMAgent, type)
