"""Behaviour cloning: a warm start for PPO from a teacher's decisions (``train.py --warm-start heuristic``).

PPO from random weights plateaus below the hand-written heuristic (42-44% of
2-player rounds against it, whatever the settings tried); fitting the network
to the heuristic's own decisions first reaches its level in under a minute of
CPU, and PPO then starts from there (docs/training.md, "Warm start").

* ``collect(teacher, num_players, decisions, ...)``: the teacher plays every
  seat of a batch of games on the ``VectorEngine``; each decision is kept with
  its legal mask, the teacher's action and the return the acting seat was
  paid from that decision to the end of its episode (the critic's target).
  Decisions of episodes still running when collection stops are dropped.
* ``fit(model, demonstrations, ...)``: a ``MaskablePPO`` model's actor by
  cross-entropy over the legal actions (the logits of illegal ones masked
  out), its critic by squared error to the return, with Adam.
* ``agreement(model, demonstrations)``: how often the model's greedy choice is
  the teacher's.
* ``warm_start(model, teacher, num_players, ...)``: collect, fit, and measure
  the agreement on decisions of other games than those fitted; with
  ``progress`` it says how far each phase is and about how long is left (a
  tqdm bar, or a line every half minute), since it takes minutes at the
  default size.

The observations the model is fitted on are the training env's:
``hpuno_env.seat_batch.ObservationFormat`` (float32, optionally times
``encoding.observation_scale``), applied to the engine's int8 views, which are
what is stored (a quarter of the memory of float32).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from tqdm import tqdm

from hpuno_env import VectorEngine
from hpuno_env._checks import check_bool, check_positive_int
from hpuno_env.seat_batch import ObservationFormat


# Games played side by side while collecting: a big batch keeps the teacher's per-call cost small.
COLLECTION_GAMES = 512
PROGRESS_LINE_SECONDS = 30  # progress="lines": at most one line per phase this often


class Progress:
    """How far one phase of the warm start is: a tqdm bar (``how="bar"``), a line every PROGRESS_LINE_SECONDS
    with the time left at the rate so far (``"lines"``, for logs), or nothing (None)."""

    def __init__(self, how: str | None, description: str, total: int, unit: str):
        if how not in (None, "bar", "lines"):
            raise ValueError(f"progress must be None, 'bar' or 'lines', got {how!r}")
        self.how, self.description, self.total, self.unit, self.done = how, description, total, unit, 0
        self.started = time.perf_counter()
        self.first = None  # (time, count) of the first update
        self.next_line = self.started + PROGRESS_LINE_SECONDS
        self.bar = tqdm(total=total, desc=description, unit=unit, unit_scale=True, dynamic_ncols=True) if how == "bar" else None

    def update(self, count: int) -> None:
        count = min(count, self.total - self.done)
        self.done += count
        if self.bar is not None:
            self.bar.update(count)
        elif self.how == "lines":
            self._line()

    def _line(self) -> None:
        """A line at most every PROGRESS_LINE_SECONDS. The time left is read from the rate since the first update:
        the time before it (a first compile of the kernel, say) says nothing about the rate."""
        now = time.perf_counter()
        if self.first is None:
            self.first = (now, self.done)
        if now < self.next_line:
            return
        since, done_then = self.first
        left = (f"about {(now - since) * (self.total - self.done) / (self.done - done_then):.0f} s to go"
                if self.done > done_then else "the time left is measured from here")
        print(f"{self.description}: {self.done:,} of {self.total:,} {self.unit} ({now - self.started:.0f} s, {left})", flush=True)
        self.next_line = now + PROGRESS_LINE_SECONDS

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


@dataclass
class Demonstrations:
    """A teacher's decisions: row i is one decision of one seat."""

    observations: np.ndarray  # (N, observation_size) int8: the engine's view of the acting seat
    masks: np.ndarray  # (N, 75) bool: the legal actions
    actions: np.ndarray  # (N,) int64: the teacher's choice
    returns: np.ndarray  # (N,) float32: what the acting seat was paid from this decision to its episode's end

    def __len__(self) -> int:
        return len(self.actions)

    def paid_wins_only(self) -> Demonstrations:
        """The same decisions with the returns of a learner paid only what it wins (``SeatBatch``'s ``wins_only``)."""
        return dataclasses.replace(self, returns=np.maximum(self.returns, 0.0))


def collect(teacher, num_players: int, decisions: int, *, games: int = COLLECTION_GAMES, seed: int | None = 0,
            progress: Callable[[int], None] | None = None, **rule_options) -> Demonstrations:
    """``decisions`` decisions of ``teacher`` playing every seat, all from finished episodes (running ones are dropped).
    ``progress(count)`` is told of each count of decisions newly finished."""
    decisions = check_positive_int(decisions, "decisions")
    games = check_positive_int(games, "games")
    if not callable(getattr(teacher, "act", None)):
        raise TypeError(f"teacher must have act(observations, action_masks), got {type(teacher).__name__}")
    # Fewer games for a small request, so that most collected decisions belong to finished episodes.
    games = min(games, max(8, decisions // 256))
    engine = VectorEngine(num_games=games, num_players=num_players, seed=seed, **rule_options)
    engine.reset()
    rows = np.arange(games)
    paid = np.zeros((games, num_players), np.float64)  # running total per seat in the current episode
    episode = np.zeros(games, np.int64)
    decisions_in_episode = np.zeros(games, np.int64)
    finals = []  # (game, episode, totals per seat) of every finished episode
    steps = []
    finished_decisions = 0
    while finished_decisions < decisions:
        observations, masks, seats = engine.observe(), engine.legal_mask(), engine.current_player.copy()
        actions = np.asarray(teacher.act(observations, masks), dtype=np.int64)
        steps.append((observations, masks, actions, episode.copy(), paid[rows, seats].copy(), seats))
        rewards, terminated, truncated = engine.step(actions)  # finished episodes are dealt again at once
        paid += rewards
        decisions_in_episode += 1
        for game in np.flatnonzero(terminated | truncated):
            finals.append((game, episode[game], paid[game].copy()))
            finished_decisions += decisions_in_episode[game]
            if progress is not None:
                progress(int(decisions_in_episode[game]))
            paid[game], decisions_in_episode[game] = 0.0, 0
            episode[game] += 1
    # Each decision's return: its seat's total at its episode's end minus what the seat had been paid before it.
    total = np.full((games, episode.max() + 1, num_players), np.nan)
    for game, number, totals in finals:
        total[game, number] = totals
    observations, masks, actions, episodes, paid_before, seats = (np.concatenate(part) for part in zip(*steps))
    game_of = np.tile(rows, len(steps))
    final = total[game_of, episodes, seats]
    finished = np.flatnonzero(~np.isnan(final))[:decisions]
    return Demonstrations(
        observations[finished], masks[finished], actions[finished], (final - paid_before)[finished].astype(np.float32)
    )


def _logits_and_values(policy, observations: torch.Tensor, masks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The actor's masked logits and the critic's values, computed as MaskablePPO's MlpPolicy computes them."""
    features = policy.extract_features(observations, policy.pi_features_extractor)
    if policy.share_features_extractor:
        latent_pi, latent_vf = policy.mlp_extractor(features)
    else:
        latent_pi = policy.mlp_extractor.forward_actor(features)
        latent_vf = policy.mlp_extractor.forward_critic(policy.extract_features(observations, policy.vf_features_extractor))
    logits = policy.action_net(latent_pi).masked_fill(~masks, -1e9)
    return logits, policy.value_net(latent_vf)[:, 0]


def _observation_format(model, num_players: int, scale_observations: bool, given=None):
    """The training env's observation format (``given``, or the per-count one), checked against the model's space.

    A given format is a callable from the stored int8 rows to the model's float32 inputs, with a ``space``."""
    observation_format = given if given is not None else ObservationFormat(num_players, np.float32, scale_observations)
    if model.observation_space.shape != observation_format.space.shape:
        raise ValueError(f"model observes shape {model.observation_space.shape}, but the demonstrations' observations "
                         f"have shape {observation_format.space.shape}")
    return observation_format


def fit(model, demonstrations: Demonstrations, num_players: int, *, scale_observations: bool = False, epochs: int = 5,
        batch_size: int = 1024, learning_rate: float = 1e-3, value_coef: float = 0.5, seed: int = 0,
        progress: Callable[[int], None] | None = None, observation_format=None) -> list[dict]:
    """Fit the model's actor to the teacher's actions and its critic to the returns, in place; ``progress(1)`` is
    told of each minibatch. ``observation_format``: how the stored rows become the model's inputs, when they are
    not ``num_players``-player observations (the universal ones, say).

    Returns one row per epoch: mean loss and the agreement with the teacher over
    that epoch's minibatches (measured while fitting, on the fitted decisions).
    """
    epochs = check_positive_int(epochs, "epochs")
    batch_size = check_positive_int(batch_size, "batch_size")
    if not isinstance(demonstrations, Demonstrations) or len(demonstrations) == 0:
        raise ValueError("demonstrations must be a non-empty Demonstrations (from collect)")
    observation_format = _observation_format(model, num_players, scale_observations, observation_format)
    policy = model.policy
    device = policy.device  # the demonstrations stay in host memory; each minibatch goes to the model's device
    policy.set_training_mode(True)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    generator = torch.Generator().manual_seed(seed)
    masks, actions = torch.as_tensor(demonstrations.masks), torch.as_tensor(demonstrations.actions)
    returns = torch.as_tensor(demonstrations.returns)
    history = []
    for epoch in range(epochs):
        order = torch.randperm(len(actions), generator=generator)
        loss_sum = correct = 0.0
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            observations = torch.as_tensor(observation_format(demonstrations.observations[batch.numpy()]), device=device)
            batch_actions = actions[batch].to(device)
            logits, values = _logits_and_values(policy, observations, masks[batch].to(device))
            loss = (torch.nn.functional.cross_entropy(logits, batch_actions)
                    + value_coef * torch.nn.functional.mse_loss(values, returns[batch].to(device)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += float(loss.detach()) * len(batch)
            correct += float((logits.argmax(1) == batch_actions).sum())
            if progress is not None:
                progress(1)
        history.append({"epoch": epoch + 1, "loss": loss_sum / len(actions), "agreement": correct / len(actions)})
    policy.set_training_mode(False)
    return history


def agreement(model, demonstrations: Demonstrations, num_players: int, *, scale_observations: bool = False,
              batch_size: int = 8192, observation_format=None) -> float:
    """The fraction of decisions on which the model's greedy (highest-logit legal) action is the teacher's."""
    observation_format = _observation_format(model, num_players, scale_observations, observation_format)
    same = 0
    device = model.policy.device
    with torch.no_grad():
        for start in range(0, len(demonstrations), batch_size):
            rows = slice(start, start + batch_size)
            observations = torch.as_tensor(observation_format(demonstrations.observations[rows]), device=device)
            logits, _ = _logits_and_values(model.policy, observations, torch.as_tensor(demonstrations.masks[rows], device=device))
            same += int((logits.argmax(1).cpu().numpy() == demonstrations.actions[rows]).sum())
    return same / max(len(demonstrations), 1)


def warm_start(model, teacher, num_players: int, *, decisions: int = 400_000, epochs: int = 5, batch_size: int = 1024,
               learning_rate: float = 1e-3, scale_observations: bool = False, wins_only: bool = False, seed: int = 0,
               progress: str | None = None, **rule_options) -> dict:
    """Behaviour-clone ``teacher`` into ``model`` (in place); returns a report.

    The report: decisions fitted, epochs (loss and agreement while fitting),
    ``agreement``: the share of greedy choices equal to the teacher's on
    ``decisions // 10`` decisions of other games (a teacher that breaks ties at
    random caps it below 1), and the seconds spent collecting and fitting.
    ``progress``: "bar", "lines" or None (``Progress``). ``wins_only``: the critic learns the returns of a
    learner paid only what it wins, for PPO on an env with ``wins_only=True``.
    """
    decisions = check_positive_int(decisions, "decisions")
    wins_only = check_bool(wins_only, "wins_only")
    epochs = check_positive_int(epochs, "epochs")
    batch_size = check_positive_int(batch_size, "batch_size")
    held_out_decisions = max(decisions // 10, COLLECTION_GAMES)
    started = time.perf_counter()
    collecting = Progress(progress, "warm start: collecting the teacher's decisions", decisions + held_out_decisions, "decision")
    try:
        fitted = collect(teacher, num_players, decisions, seed=seed, progress=collecting.update, **rule_options)
        held_out = collect(teacher, num_players, held_out_decisions, seed=seed + 1, progress=collecting.update, **rule_options)
    finally:
        collecting.close()
    if wins_only:
        fitted = fitted.paid_wins_only()
    collected = time.perf_counter()
    fitting = Progress(progress, f"warm start: fitting them ({epochs} epochs)", epochs * math.ceil(len(fitted) / batch_size), "batch")
    try:
        history = fit(model, fitted, num_players, scale_observations=scale_observations, epochs=epochs, batch_size=batch_size,
                      learning_rate=learning_rate, seed=seed, progress=fitting.update)
    finally:
        fitting.close()
    fitted_at = time.perf_counter()
    return {
        "decisions": len(fitted), "epochs": history,
        "agreement": agreement(model, held_out, num_players, scale_observations=scale_observations),
        "held_out_decisions": len(held_out), "collect_seconds": collected - started, "fit_seconds": fitted_at - collected,
    }
