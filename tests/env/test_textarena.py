"""The TextArena adapter (``hpuno_env.textarena_env``): whole rounds through ``textarena.make``, what each player is
told (no card it has not seen), invalid moves asked again and then lost, bad options refused."""

from __future__ import annotations

import re

import pytest
import textarena as ta

import hpuno_env.textarena_env  # noqa: F401  (registers HPUno-v0)
from hpuno_env import CARD_LABELS
from hpuno_env.options import ALL_HOUSE_RULES

COLOURED = re.compile(r"\b(red|yellow|green|blue):(\d|skip|reverse|draw2)\b")
WILDS = re.compile(r"(?<![\w:])(wild_draw4|sorting_hat|wild)(?![\w])")


def board_of(observation: str) -> str:
    """The board part of HPUno-v0's observation (the prompt, the rules, comes first, then a blank line)."""
    return observation.split("\n\n", 1)[1]


def seen_by(engine, seat: int) -> set[str]:
    state = engine.game_state(0)
    seen = set(state["hands"][f"player_{seat}"]) | set(state["discard"])
    for owner in range(engine.num_players):
        if owner != seat and engine.state.revealed_seen[0, seat, owner]:
            seen |= {CARD_LABELS[c] for c in range(len(CARD_LABELS)) if engine.state.revealed[0, seat, owner, c]}
    return seen


def simple_answer(observation: str) -> str:
    """A simple player: calls UNO when it may, else plays the first card listed, else takes the last action listed."""
    actions = re.findall(r"^\d+\. (\S+)$", observation, re.M)
    plays = [a for a in actions if a.startswith("play:")]
    return f"I choose {'uno' if 'uno' in actions else plays[0] if plays else actions[-1]}."


@pytest.mark.parametrize("players,rules", [(2, {}), (3, dict(ALL_HOUSE_RULES, uno_penalty=4))])
def test_whole_rounds_through_textarena_name_no_card_a_player_has_not_seen(players, rules):
    for seed in range(2):
        env = ta.make("HPUno-v0", **rules)
        env.reset(num_players=players, seed=seed)
        game = env.env  # the adapter under the observation wrapper
        done, steps = False, 0
        while not done:
            player, observation = env.get_observation()
            assert player == game.current
            named = {m.group(0) for m in COLOURED.finditer(board_of(observation))} | set(WILDS.findall(board_of(observation)))
            assert named <= seen_by(game.env.engine, player), named - seen_by(game.env.engine, player)
            done, _ = env.step(action=simple_answer(observation))
            steps += 1
            assert steps < 3000
        rewards, info = env.close()
        assert sorted(rewards.values()) == [-1.0] * (players - 1) + [1.0]
        assert all(entry["reason"] == "the round is over" and not entry["invalid_move"] for entry in info.values())


def test_the_raw_env_gives_textarena_s_messages_the_prompt_once():
    env = ta.make("HPUno-v0-raw")
    env.reset(num_players=2, seed=1)
    player, messages = env.get_observation()
    assert [kind for _, _, kind in messages] == [ta.ObservationType.PROMPT, ta.ObservationType.GAME_BOARD]
    assert messages[0][1].startswith("You are playing Harry Potter UNO") and "Your legal actions:" in messages[1][1]
    env.step(action="1")
    _, later = env.get_observation()
    assert [kind for _, _, kind in later] in ([ta.ObservationType.GAME_BOARD], [ta.ObservationType.PROMPT, ta.ObservationType.GAME_BOARD])


def test_an_invalid_move_is_asked_again_with_its_reason_then_lost():
    env = ta.make("HPUno-v0-raw", error_allowance=1)
    env.reset(num_players=2, seed=2)
    player, _ = env.get_observation()
    assert env.step(action="I would rather not say") == (False, {"reason": "your answer named no action from the list"})
    again, messages = env.get_observation()
    assert again == player and messages[-1][1].startswith("Your last action was not played: your answer named no action")
    done, info = env.step(action="1 or 2")
    assert done and "2 different actions" in info["reason"]
    rewards, game_info = env.close()
    assert rewards[player] == -1.0 and game_info[player]["invalid_move"]
    with pytest.raises(ValueError, match="reset"):
        env.step(action="1")


def test_bad_options_are_refused_when_the_env_is_made():
    with pytest.raises(ValueError, match="uno_penalty"):
        ta.make("HPUno-v0", uno_penalty=-1)
    with pytest.raises(ValueError, match="error_allowance"):
        ta.make("HPUno-v0", error_allowance=-1)
