"""Who holds what: beliefs over the other seats' hands, read from one seat's observation alone.

``load_belief(num_players, rules_options=None)`` gives the shipped belief for that table (docs/agents/belief.md
is its card); ``.expected_hands(observations)`` is a float array (B, P - 1, 55): entry ``[b, j, k]`` is the
expected number of copies of card kind ``CARD_LABELS[k]`` in the hand of the seat ``j + 1`` places after
observation ``b``'s seat in seat order, given everything that observation holds. Each ``[b, j]`` sums to that seat's
hand size; no entry is negative or above the copies of that kind the viewer neither holds nor sees discarded.

Every belief starts from what is certain (``belief_features.table_facts``): the unseen copies, the hand and pile
sizes, and the cards a hand shown to the viewer still holds. A belief weighs each (seat or draw pile, kind) pair,
and ``project`` turns the weights into expected counts that keep every certain fact: the allocation of the unseen
copies to the other hands and the draw pile with those row and column totals that is closest to the weights
(iterative proportional fitting), plus the cards known held.

- ``CertainBelief`` (``name_or_path="certain"``): equal weights, that is the unseen cards spread uniformly over
  the places they can be, given the certain facts: how every player of the project dealt its worlds so far.
- ``LearnedBelief``: weights from a small network (a softmax over card kinds per seat and for the draw pile) that
  reads the observation and a summary of the round's history (``belief_features``), trained on rounds of other
  players with the true hands as labels (``agents.training.belief``). A file is made for one table (``num_players``)
  or for every table (``"any"``, the table in its input), for one set of rules or for any (``"any"``), and for one
  observation layout and features version; ``load_belief`` refuses one made for another, naming what differs.

Belief files (``.safetensors``, read without running code by ``trained.read_checked_safetensors``) hold the
network's float32 tensors (``net.<i>.weight`` / ``.bias``) and the header's ``__metadata__["hpuno_belief"]``,
a JSON document: format, format_version, num_players (an int or "any"), rules_options (a dict or "any"),
observation (version, size), features (version, input_size), network (hidden_sizes, activation, rows), training,
evaluation, created.
"""

from __future__ import annotations

import copy
import os

import numpy as np
import torch
from torch import nn

from hpuno_env._checks import check_int_array
from hpuno_env._reading import is_json_int
from hpuno_env.cards import NUM_CARD_TYPES
from hpuno_env.encoding import OBSERVATION_VERSION, observation_size
from hpuno_env.options import RulesOptions, check_num_players

from . import belief_features
from .belief_features import FEATURES_VERSION, MAX_OTHERS, TableFacts, network_input_size, network_inputs, table_facts
from .trained import ACTIVATIONS, FILE_SUFFIX, WEIGHTS_DIR, read_checked_safetensors, rules_differences

FORMAT_NAME = "hpuno-belief"
FORMAT_VERSION = 1
METADATA_KEY = "hpuno_belief"
ANY = "any"  # num_players or rules_options of a file made for every table or every rules set
BELIEF_DIR = os.path.join(WEIGHTS_DIR, "belief")
MAX_HIDDEN_LAYERS, MAX_LAYER_SIZE = 8, 4096
PROJECTION_ITERATIONS, PROJECTION_TOLERANCE = 500, 1e-9


def project(weights: np.ndarray, facts: TableFacts) -> np.ndarray:
    """(B, P - 1, 55) expected hands from positive weights (B, P, 55): rows 0 .. P - 2 the other seats (in turn
    order to the left), row P - 1 the draw pile. The unseen copies not known held are allocated to the rows in
    proportion to the weights, scaled (iterative proportional fitting) until every row holds its hand's (or the
    pile's) size less its known cards and every kind its unseen copies less the known ones; the known cards are
    added back. ValueError if the sizes and the unseen cards disagree (observations of another table or rules)."""
    known = facts.known.astype(np.float64)
    rows = np.concatenate([facts.sizes - facts.known.sum(axis=2), facts.pile[:, None]], axis=1).astype(np.float64)
    columns = (facts.unseen - facts.known.sum(axis=1)).astype(np.float64)
    if (rows < 0).any() or (columns < 0).any() or not np.array_equal(rows.sum(axis=1), columns.sum(axis=1)):
        bad = np.flatnonzero((rows < 0).any(axis=1) | (columns < 0).any(axis=1) | (rows.sum(axis=1) != columns.sum(axis=1)))
        raise ValueError(f"observations {bad[:10].tolist()}: the hand and pile sizes do not add up to the unseen cards "
                         f"(observations of another table or rules than this belief's?)")
    allocation = np.where(columns[:, None, :] > 0, np.asarray(weights, np.float64), 0.0)
    allocation = np.where(allocation.sum(axis=2, keepdims=True) > 0, allocation, (columns[:, None, :] > 0) * 1.0)
    for _ in range(PROJECTION_ITERATIONS):
        allocation *= (rows / np.maximum(allocation.sum(axis=2), 1e-300))[:, :, None]
        held = allocation.sum(axis=1)
        if np.abs(held - columns).max(initial=0.0) <= PROJECTION_TOLERANCE:
            break
        allocation *= (columns / np.maximum(held, 1e-300))[:, None, :]
    expected = known + allocation[:, :-1]
    return np.minimum(expected, facts.unseen[:, None, :])


class Belief:
    """A belief for games of ``num_players`` under ``rules`` (module docstring); subclasses give ``weights``."""

    name = "belief"

    def __init__(self, num_players: int, rules_options=None):
        self.num_players = check_num_players(num_players)
        self.rules = rules_options if isinstance(rules_options, RulesOptions) else RulesOptions.from_kwargs(**(rules_options or {}))

    def expected_hands(self, observations) -> np.ndarray:
        """(B, P - 1, 55) float64: the expected copies of each kind in each other seat's hand (module docstring)."""
        rows = self._rows(observations)
        facts = table_facts(rows, self.num_players, self.rules.deck)
        if len(rows) == 0:
            return np.zeros((0, self.num_players - 1, NUM_CARD_TYPES))
        return project(self.weights(rows, facts), facts)

    def weights(self, rows: np.ndarray, facts: TableFacts) -> np.ndarray:
        raise NotImplementedError

    def _rows(self, observations) -> np.ndarray:
        width = observation_size(self.num_players)
        array = np.asarray(observations)
        if array.ndim != 2 or array.shape[1] != width:
            raise ValueError(f"observations must have shape (B, {width}) for {self.num_players} players (observation "
                             f"layout {OBSERVATION_VERSION}), got {array.shape}")
        return check_int_array(array, "observations", array.shape).astype(np.int64)

    def describe(self) -> dict:
        return {"name": self.name, "num_players": self.num_players}


class CertainBelief(Belief):
    """The certain facts and nothing else: every unseen card equally likely in every place it can be."""

    name = "certain"

    def weights(self, rows: np.ndarray, facts: TableFacts) -> np.ndarray:
        return np.ones((len(rows), self.num_players, NUM_CARD_TYPES))


class BeliefNetwork(nn.Module):
    """An MLP from ``network_inputs`` to logits over card kinds for each row (other seats, then the draw pile)."""

    def __init__(self, input_size: int, hidden_sizes: list[int], activation: str, rows: int):
        super().__init__()
        layers, width = [], input_size
        for size in hidden_sizes:
            layers += [nn.Linear(width, size), ACTIVATIONS[activation]()]
            width = size
        layers.append(nn.Linear(width, rows * NUM_CARD_TYPES))
        self.net = nn.Sequential(*layers)
        self.rows = rows

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.net(inputs).reshape(len(inputs), self.rows, NUM_CARD_TYPES)


def network_rows(num_players: int, universal: bool) -> list[int]:
    """The network's output rows for a table of num_players: each other seat's, then the draw pile's."""
    if universal:
        return list(range(num_players - 1)) + [MAX_OTHERS]
    return list(range(num_players))


class LearnedBelief(Belief):
    """A network's weights (module docstring), the certain facts kept by ``project``."""

    name = "learned"

    def __init__(self, network: BeliefNetwork, num_players: int, metadata: dict, rules_options=None, source: str = ""):
        super().__init__(num_players, rules_options)
        self.network = network.eval()
        self.metadata = metadata
        self.universal = metadata["num_players"] == ANY
        self.source = source

    def weights(self, rows: np.ndarray, facts: TableFacts) -> np.ndarray:
        inputs = network_inputs(rows, self.num_players, self.rules.as_dict(), self.universal)
        with torch.no_grad():
            logits = self.network(torch.as_tensor(inputs)).double().numpy()
        logits = logits[:, network_rows(self.num_players, self.universal)]
        logits -= logits.max(axis=2, keepdims=True)
        return np.exp(logits)

    def describe(self) -> dict:
        return {"name": self.name, "source": self.source, **copy.deepcopy(self.metadata)}


# ---- reading a belief file


def read_belief_file(path: str, num_players: int, rules_options=None) -> LearnedBelief:
    """A belief file made for this table, these rules and this observation layout, or ValueError naming what
    does not match (module docstring); nothing in the file is run."""
    num_players = check_num_players(num_players)
    path = os.fspath(path)
    rules = rules_options if isinstance(rules_options, RulesOptions) else RulesOptions.from_kwargs(**(rules_options or {}))

    def expected_tensors(metadata: dict) -> dict:
        _check_belief_metadata(metadata, path, num_players, rules)
        return _network_shapes(metadata)

    metadata, tensors = read_checked_safetensors(path, "belief", METADATA_KEY, expected_tensors)
    network_info = metadata["network"]
    network = BeliefNetwork(metadata["features"]["input_size"], network_info["hidden_sizes"], network_info["activation"],
                            network_info["rows"])
    network.load_state_dict(tensors, strict=True)
    return LearnedBelief(network, num_players, metadata, rules, source=path)


def _check_belief_metadata(metadata: dict, path: str, num_players: int, rules: RulesOptions) -> None:
    """ValueError, one line naming the file and the field, unless the file is a belief this hpuno-env reads for
    num_players under rules."""
    if metadata.get("format") != FORMAT_NAME:
        raise ValueError(f"{path!r} is not an hpuno belief file: format {_short(metadata.get('format'))}, expected {FORMAT_NAME!r}")
    if metadata.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{path!r} has belief format version {_short(metadata.get('format_version'))}; this hpuno-env reads {FORMAT_VERSION}")
    made_for = metadata.get("num_players")
    if made_for != ANY and made_for != num_players:
        raise ValueError(f"belief {path!r} was made for {_short(made_for)}-player tables, not {num_players}-player ones")
    trained_rules = metadata.get("rules_options")
    if trained_rules != ANY:
        if not isinstance(trained_rules, dict):
            raise ValueError(f"{path!r} is corrupt: its rules_options is {_short(trained_rules)}, not a dict or {ANY!r}")
        differing = rules_differences(trained_rules, rules)
        if differing:
            raise ValueError(f"belief {path!r} was made for other rules: {', '.join(differing)}")
    observation = metadata.get("observation") if isinstance(metadata.get("observation"), dict) else {}
    if observation.get("version") != OBSERVATION_VERSION:
        raise ValueError(f"belief {path!r} reads observation layout {_short(observation.get('version'))}; this hpuno-env gives layout {OBSERVATION_VERSION}")
    features = metadata.get("features") if isinstance(metadata.get("features"), dict) else {}
    expected_inputs = network_input_size(None if made_for == ANY else num_players)
    if features.get("version") != FEATURES_VERSION or features.get("input_size") != expected_inputs:
        raise ValueError(f"belief {path!r} reads features version {_short(features.get('version'))} of "
                         f"{_short(features.get('input_size'))} inputs; this hpuno-env gives version {FEATURES_VERSION} of {expected_inputs}")
    _check_network(metadata.get("network"), path, MAX_OTHERS + 1 if made_for == ANY else num_players)


def _check_network(network, path: str, rows: int) -> None:
    if not isinstance(network, dict):
        raise ValueError(f"{path!r} is corrupt: its metadata has no 'network' section")
    hidden = network.get("hidden_sizes")
    if (not isinstance(hidden, list) or len(hidden) > MAX_HIDDEN_LAYERS
            or not all(is_json_int(n) and 1 <= n <= MAX_LAYER_SIZE for n in hidden)):
        raise ValueError(f"{path!r}: network.hidden_sizes is {_short(hidden)}, it must be at most {MAX_HIDDEN_LAYERS} ints in [1, {MAX_LAYER_SIZE}]")
    if network.get("activation") not in ACTIVATIONS:
        raise ValueError(f"{path!r}: network.activation is {_short(network.get('activation'))}, it must be one of {sorted(ACTIVATIONS)}")
    if network.get("rows") != rows:
        raise ValueError(f"{path!r}: network.rows is {_short(network.get('rows'))}, this table needs {rows}")


def _network_shapes(metadata: dict) -> dict[str, tuple[int, ...]]:
    network, width = metadata["network"], metadata["features"]["input_size"]
    shapes = {}
    for index, size in enumerate(network["hidden_sizes"]):
        shapes[f"net.{2 * index}.weight"], shapes[f"net.{2 * index}.bias"] = (size, width), (size,)
        width = size
    last = 2 * len(network["hidden_sizes"])
    outputs = network["rows"] * NUM_CARD_TYPES
    shapes[f"net.{last}.weight"], shapes[f"net.{last}.bias"] = (outputs, width), (outputs,)
    return shapes


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---- the shipped beliefs


def shipped_beliefs() -> dict[str, str]:
    """Name -> file of every belief file in agents/weights/belief/."""
    if not os.path.isdir(BELIEF_DIR):
        return {}
    return {name[: -len(FILE_SUFFIX)]: os.path.join(BELIEF_DIR, name) for name in sorted(os.listdir(BELIEF_DIR))
            if name.endswith(FILE_SUFFIX)}


def load_belief(num_players: int, rules_options=None, name_or_path: str | None = None) -> Belief:
    """The belief for games of num_players under rules_options (a dict or RulesOptions; None: the defaults).

    name_or_path: None, the shipped belief that fits the table best (one made for this table and these rules, else
    one made for every table and rules); ``"certain"``, the certain facts alone (``CertainBelief``); or the path of
    a belief file, refused with a ValueError naming what does not match if it was made for another table, other
    rules or another observation layout."""
    num_players = check_num_players(num_players)
    rules = rules_options if isinstance(rules_options, RulesOptions) else RulesOptions.from_kwargs(**(rules_options or {}))
    if name_or_path == CertainBelief.name:
        return CertainBelief(num_players, rules)
    if name_or_path is not None:
        if not isinstance(name_or_path, (str, os.PathLike)):
            raise ValueError(f"name_or_path must be None, {CertainBelief.name!r} or a belief file's path, got {type(name_or_path).__name__}")
        return read_belief_file(name_or_path, num_players, rules)
    for name in _preferred_files(num_players):
        try:
            return read_belief_file(shipped_beliefs()[name], num_players, rules)
        except ValueError:  # made for other rules: the next one may fit
            continue
    return CertainBelief(num_players, rules)


def _preferred_files(num_players: int) -> list[str]:
    """Shipped belief names to try for a table, best first: its own table's, then the table-conditioned ones."""
    names = list(shipped_beliefs())
    own = [name for name in names if name.endswith(f"_{num_players}p")]
    return own + [name for name in names if name.endswith("_any")]


__all__ = ["Belief", "BeliefNetwork", "CertainBelief", "LearnedBelief", "load_belief", "project", "read_belief_file",
           "shipped_beliefs", "belief_features"]
