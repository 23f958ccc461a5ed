"""The belief over the other seats' hands (``agents.belief``): the certain facts it keeps, what it never rules out,
the projection, the belief file (written, read back, refused when made for another table, rules or layout) and
its options."""

from __future__ import annotations

import json

import numpy as np
import pytest
import safetensors.torch
import torch

import agents
from agents.belief import CertainBelief, LearnedBelief, load_belief
from agents.players.belief import METADATA_KEY, BeliefNetwork, project, shipped_beliefs
from agents.players.belief_features import history_features, network_input_size, network_inputs, table_facts
from agents.training.belief import collect_rounds, pile_counts, write_belief_file
from hpuno_env import ACTION_LABELS, VectorEngine
from hpuno_env.cards import CARD_INDEX, DECK_COPIES, NUM_CARD_TYPES
from hpuno_env.encoding import hidden_hands, observation_layout
from hpuno_env.options import ALL_HOUSE_RULES
from hpuno_env.scenarios import stacked_deck


def positions(num_players: int, rules: dict, seed: int, games: int = 48, steps: int = 40):
    """Observations of the seat to act along heuristic rounds, with the true hands of the others (in turn order)."""
    engine = VectorEngine(games, num_players, seed=seed, **rules)
    engine.reset()
    player = agents.load("heuristic", num_players, seed=seed)
    observations, hands = [], []
    for step in range(steps):
        view, masks = engine.observe(), engine.legal_mask()
        if step % 5 == 4:
            observations.append(view)
            hands.append(hidden_hands(engine.state.hands, engine.current_player, num_players).reshape(games, num_players - 1, NUM_CARD_TYPES))
        engine.step(player.act(view, masks))
    return np.concatenate(observations), np.concatenate(hands).astype(np.int64)


def random_belief_file(path, num_players, rules_options, hidden=(16,)) -> None:
    """A belief file of an untrained network (random weights): its numbers mean nothing, its constraints hold."""
    torch.manual_seed(0)
    universal = num_players == "any"
    network = BeliefNetwork(network_input_size(None if universal else num_players), list(hidden), "relu",
                            10 if universal else num_players)
    write_belief_file(network, str(path), num_players=num_players, rules_options=rules_options, training={"test": True})


def check_constraints(expected: np.ndarray, observations: np.ndarray, hands: np.ndarray, num_players: int, deck: str) -> None:
    facts = table_facts(observations, num_players, deck)
    assert expected.shape == (len(observations), num_players - 1, NUM_CARD_TYPES)
    np.testing.assert_allclose(expected.sum(axis=2), facts.sizes, atol=1e-6)  # each row: that seat's hand size
    assert (expected >= 0).all() and (expected <= facts.unseen[:, None, :] + 1e-9).all()
    assert (expected.sum(axis=1) <= facts.unseen + 1e-6).all()  # no kind more often than its unseen copies
    assert (expected >= facts.known - 1e-9).all()  # cards known held are held
    assert not ((hands > 0) & (expected <= 0)).any()  # never rules out where a card really is
    assert (facts.known <= hands).all()  # what it takes for certain is true


@pytest.mark.parametrize("num_players,rules", [(2, {}), (3, {}), (4, ALL_HOUSE_RULES), (7, {"deck": "classic"}), (10, {})])
def test_the_certain_belief_keeps_every_certain_fact(num_players, rules):
    observations, hands = positions(num_players, rules, seed=num_players)
    belief = load_belief(num_players, rules, name_or_path="certain")
    assert isinstance(belief, CertainBelief)
    expected = belief.expected_hands(observations)
    check_constraints(expected, observations, hands, num_players, rules.get("deck", "harry_potter"))
    # uniform given the facts: every other seat's unknown cards in proportion to the kinds' unknown copies
    facts = table_facts(observations, num_players, rules.get("deck", "harry_potter"))
    free = (facts.unseen - facts.known.sum(axis=1)).astype(float)
    share = (facts.sizes - facts.known.sum(axis=2)) / free.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(expected, facts.known + share[:, :, None] * free[:, None, :], atol=1e-9)


def test_a_hand_shown_by_a_challenge_is_certain_until_its_cards_are_played():
    deck = stacked_deck(3, 2, hands=[
        ["red:7", "blue:3", "green:3", "green:4", "yellow:4", "yellow:5", "blue:4"],
        ["wild_draw4", "red:8", "green:8", "blue:8", "yellow:8", "yellow:1", "blue:1"],
        ["green:6", "blue:6", "blue:7", "yellow:6", "yellow:3", "blue:9", "yellow:7"],
    ], starter="red:5")
    engine = VectorEngine(1, 3, seed=0, auto_reset=False)
    engine.reset(options={"deck": deck, "dealer": 2})
    # seat 1 bluffs a Wild Draw Four holding red; seat 2 challenges and sees its hand
    act(engine, "play:red:7", "play:wild_draw4", "color:green", "challenge")
    shown = ["red:8", "green:8", "blue:8", "yellow:8", "yellow:1", "blue:1"]  # seat 1 is two to seat 2's left
    expected = load_belief(3, name_or_path="certain").expected_hands(engine.observe(np.array([2])))[0]
    for label in shown:
        assert expected[1, CARD_INDEX[label]] >= 1 - 1e-9, label
    assert expected[1].sum() == pytest.approx(10)  # the six shown and the four penalty cards
    act(engine, "play:green:6", "play:green:3", "play:green:8")  # seat 2 plays on, then seat 0, then seat 1
    known = table_facts(engine.observe(np.array([2])), 3).known[0, 1]
    assert known[CARD_INDEX["green:8"]] == 0 and known.sum() == 5


def act(engine: VectorEngine, *labels: str) -> None:
    for label in labels:
        engine.step(np.array([ACTION_LABELS.index(label)]))


def test_project_meets_every_row_and_column_total():
    rng = np.random.default_rng(0)
    observations, hands = positions(4, {}, seed=3)
    facts = table_facts(observations, 4)
    weights = rng.random((len(observations), 4, NUM_CARD_TYPES)) ** 4  # lopsided weights
    expected = project(weights, facts)
    check_constraints(expected, observations, hands, 4, "harry_potter")
    pile = facts.unseen - expected.sum(axis=1)
    np.testing.assert_allclose(pile.sum(axis=1), facts.pile, atol=1e-6)


@pytest.mark.parametrize("num_players,made_for,rules", [(2, 2, {}), (4, "any", ALL_HOUSE_RULES), (5, "any", {})])
def test_a_learned_belief_keeps_every_certain_fact(tmp_path, num_players, made_for, rules):
    path = tmp_path / "belief.safetensors"
    random_belief_file(path, made_for, "any" if made_for == "any" else {})
    belief = load_belief(num_players, rules, name_or_path=str(path))
    assert isinstance(belief, LearnedBelief) and belief.universal == (made_for == "any")
    observations, hands = positions(num_players, rules, seed=11)
    check_constraints(belief.expected_hands(observations), observations, hands, num_players, "harry_potter")
    assert belief.expected_hands(observations[:0]).shape == (0, num_players - 1, NUM_CARD_TYPES)


def test_a_belief_file_made_for_another_table_rules_or_layout_is_refused(tmp_path):
    path = tmp_path / "two.safetensors"
    random_belief_file(path, 2, {})
    with pytest.raises(ValueError, match="made for 2-player tables, not 3-player ones"):
        load_belief(3, name_or_path=str(path))
    with pytest.raises(ValueError, match=r"made for other rules: stacking='draw2' \(trained with 'none'\)"):
        load_belief(2, {"stacking": "draw2"}, name_or_path=str(path))
    tensors, document = _read(path)
    for field, value, message in (("observation", {"version": 3}, "reads observation layout 3; this hpuno-env gives layout 4"),
                                  ("features", {"version": 99, "input_size": 1}, "reads features version 99"),
                                  ("format", "hpuno-agent", "not an hpuno belief file"),
                                  ("format_version", 2, "belief format version 2")):
        _write(tmp_path / "other.safetensors", tensors, {**document, field: value})
        with pytest.raises(ValueError, match=message):
            load_belief(2, name_or_path=str(tmp_path / "other.safetensors"))
    with pytest.raises(ValueError, match="not an hpuno belief"):
        load_belief(2, name_or_path=agents.players.SHIPPED["ppo_2p"])  # an agent file is no belief
    (tmp_path / "pickle.safetensors").write_bytes(b"\x80\x04junk")
    with pytest.raises(ValueError, match="pickle"):
        load_belief(2, name_or_path=str(tmp_path / "pickle.safetensors"))


def test_bad_options_and_observations_are_refused_in_one_line():
    for bad, message in ((dict(num_players=1), "num_players"), (dict(num_players=2, rules_options={"colour": 1}), "colour"),
                         (dict(num_players=2, name_or_path=3), "name_or_path"),
                         (dict(num_players=2, name_or_path="/no/such/belief.safetensors"), "cannot read belief file")):
        with pytest.raises(ValueError, match=message) as caught:
            load_belief(**bad)
        assert "\n" not in str(caught.value)
    belief = load_belief(2, name_or_path="certain")
    observations, _ = positions(2, {}, seed=1, games=4, steps=5)
    for bad in (observations[:, :-1], observations[0], observations.astype(np.float32) + 0.5):
        with pytest.raises(ValueError, match="observations"):
            belief.expected_hands(bad)
    with pytest.raises(ValueError, match="do not add up"):  # views of the Harry Potter deck under the classic deck's rules
        load_belief(2, {"deck": "classic"}, name_or_path="certain").expected_hands(observations)


def test_every_table_and_rules_get_a_belief():
    for num_players in range(2, 11):
        for rules in ({}, ALL_HOUSE_RULES):
            belief = load_belief(num_players, rules)
            observations, hands = positions(num_players, rules, seed=num_players, games=6, steps=15)
            check_constraints(belief.expected_hands(observations), observations, hands, num_players, "harry_potter")


def test_history_features_read_draws_on_a_colour_and_plays():
    deck = stacked_deck(2, 1, hands=[["red:7", "red:8", "blue:3"], ["green:1", "green:2", "yellow:2"]], starter="red:5",
                        draw_pile=["yellow:9", "green:9"])
    engine = VectorEngine(1, 2, seed=0, auto_reset=False)
    engine.reset(options={"deck": deck, "dealer": 1})
    act(engine, "play:red:7", "draw", "play:red:8", "draw")  # seat 1 draws on red twice (a yellow 9, a green 9)
    features = history_features(engine.observe(np.array([0])), 2, 1)[0]
    assert features[:4].tolist() == [2, 0, 0, 0]  # draws by choice while red was in play
    assert features[4:8].tolist() == [2, 0, 0, 0]  # since its last play (none)
    assert network_inputs(engine.observe(np.array([0])), 2, None, False).shape == (1, network_input_size(2))


def test_collected_rounds_are_consistent():
    rounds = collect_rounds(2, {}, 300, seed=0, games=16, league=("random",), log=lambda _: None)
    facts = table_facts(rounds["observations"], 2)
    total = rounds["hands"].astype(np.int64).sum(axis=1) + rounds["pile"]
    np.testing.assert_array_equal(total, facts.unseen)  # every unseen copy is in a hand or the pile
    engine = VectorEngine(2, 2, seed=0)
    engine.reset()
    counts = pile_counts(engine.state.draw_pile, engine.state.draw_count)
    assert counts.sum(axis=1).tolist() == engine.state.draw_count.tolist()
    assert (counts <= DECK_COPIES["harry_potter"]).all()


def test_the_shipped_beliefs_load_for_their_tables():
    for name, path in shipped_beliefs().items():
        made_for = json.loads(safetensors.safe_open(path, "pt").metadata()[METADATA_KEY])["num_players"]
        tables = range(2, 11) if made_for == "any" else [made_for]
        for num_players in tables:
            assert isinstance(load_belief(num_players, name_or_path=path), LearnedBelief), name


def _read(path):
    with safetensors.safe_open(str(path), "pt") as file:
        return {name: file.get_tensor(name) for name in file.keys()}, json.loads(file.metadata()[METADATA_KEY])


def _write(path, tensors, document) -> None:
    path.write_bytes(safetensors.torch.save(tensors, metadata={METADATA_KEY: json.dumps(document)}))


def test_observation_layout_has_the_fields_the_belief_reads():
    layout = observation_layout(4)
    assert {"hand", "discard_counts", "other_hand_sizes", "revealed_hands", "revealed_seen", "history"} <= set(layout)


@pytest.mark.parametrize("argv,message", [
    (["--players", "11"], "--players must be 2..10, or 0 for every table"),
    (["--players", "1"], "--players must be 2..10"),
    (["--samples", "0"], "--samples must be at least 1"),
    (["--keep", "1.5"], "--keep must be in (0, 1]"),
    (["--hidden", "256,x"], "--hidden"),
    (["--league", "ppo_9p"], "--league: 'ppo_9p' is not a shipped agent"),
    (["--league", "ppo_2p:greedy"], "--league: 'ppo_2p:greedy' is not a shipped agent"),
])
def test_the_training_command_refuses_bad_options_in_one_line(tmp_path, capsys, argv, message):
    from agents.training.belief import main

    with pytest.raises(SystemExit) as exited:
        main([*argv, "--out", str(tmp_path / "run")])
    assert exited.value.code == 2
    error = capsys.readouterr().err
    assert message in error.splitlines()[0] and "Traceback" not in error
    assert not (tmp_path / "run").exists()  # nothing made


def test_a_belief_of_the_named_league_says_so_in_its_file(tmp_path):
    from agents.training.belief import main

    main(["--players", "2", "--league", "ppo_2p, ppo_2p:sampling", "--samples", "600", "--epochs", "1", "--out", str(tmp_path)])
    training = load_belief(2, None, str(tmp_path / "belief.safetensors")).describe()["training"]
    assert training["league"] == ["ppo_2p", "ppo_2p:sampling"]


def test_the_training_command_will_not_overwrite_a_run(tmp_path, capsys):
    from agents.training.belief import main

    (tmp_path / "checkpoint.pt").write_bytes(b"")
    with pytest.raises(SystemExit) as exited:
        main(["--out", str(tmp_path)])
    assert exited.value.code == 2 and "give --resume" in capsys.readouterr().err


def test_the_card_names_every_shipped_belief_file_with_its_sha256():
    import hashlib
    import pathlib

    card = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "agents" / "belief.md").read_text()
    assert shipped_beliefs(), "the beliefs ship in agents/weights/belief/"
    for name, path in shipped_beliefs().items():
        digest = hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()
        assert f"{name}.safetensors`" in card and digest in card, name


def test_any_subset_in_any_order_gets_the_same_rows():
    observations, _ = positions(3, {}, seed=2)
    belief = load_belief(3)
    full = belief.expected_hands(observations)
    order = np.random.default_rng(0).permutation(len(observations))[:17]
    np.testing.assert_allclose(belief.expected_hands(observations[order]), full[order], atol=1e-6)
