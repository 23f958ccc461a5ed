"""Sampling at batch speed for ``HPUnoEnvRunner``: one forward pass per module and step for every
game's acting seat, the rollout kept as numpy arrays, RLlib's episodes built from them once per ``sample()``.

RLlib's own ``MultiAgentEnvRunner`` does Python work per game and per step: its env-to-module
connectors gather each game's observation into a batch, its module-to-env connectors split the
actions back per game, and ``MultiAgentEpisode.add_env_step`` files each step into each game's
episode. ``BatchSampler`` does that work in arrays: every observation handed out (the acting
seat's, every seat's last view at a round's end) is a row of ``_Rows``; the actions, their
log-probabilities and the action distribution's inputs are written onto the rows they were chosen
at; at the end of ``sample()`` the rows are sorted by (episode, seat) and every seat's stretch
becomes one ``SingleAgentEpisode`` in one constructor call, with numpy columns (RLlib's
``to_numpy()`` form).

The episodes hold what RLlib's per-step path puts in them, for PPO's learner connectors and the
runner's metrics: per seat the observations (a Dict of ``"observations"`` and ``"action_mask"``),
actions, rewards (what the seat was paid, with its next observation), ``extra_model_outputs``
``ACTION_DIST_INPUTS`` (the masked logits), ``ACTION_LOGP`` and ``WEIGHTS_SEQ_NO``, terminated or
truncated at a round's end; an episode cut at the end of a ``sample()`` goes on in the next under
the same ids, each seat's chunk starting at its last observation (an action chosen there but not yet
followed by the seat's next observation belongs to the next chunk, as in RLlib), with
``episode_lookback_horizon`` of the seat's own previous steps as its lookback buffer; seats with no
step in a chunk are left out of it (RLlib prunes them too). ``tests/env/test_rllib.py`` compares the
episodes with those RLlib's ``MultiAgentEpisode`` builds step by step from the same games and actions.

Every game acts in every step: a game whose round ended is dealt again at once, in the same step
(RLlib's vector envs spend a step on the reset). Actions are drawn from the categorical distribution
of the masked logits, as RLlib's ``GetActions`` draws them (with the Gumbel-max trick, in a quarter of
``torch.multinomial``'s time; the arg max without exploration). The episodes are always in numpy
form (RLlib's default ``episodes_to_numpy``). The policy mapping function is asked once per seat
and episode, with an empty ``MultiAgentEpisode`` of that episode's id, as RLlib's runner asks it.
"""

from __future__ import annotations

import time
import uuid
from collections import defaultdict

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.env.single_agent_episode import _REWARDS_BOX_SPACE, SingleAgentEpisode
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO

from .cards import NUM_ACTIONS

# Columns of a row: one observation handed to one seat. "action" is -1 until the seat acts on it.
_INT_COLUMNS = ("id", "game", "seat", "serial", "env_t", "agent_t", "action")
_FLOAT_COLUMNS = ("reward", "logp")
_ARRAY_COLUMNS = ("obs", "mask", "dist")


class _Rows:
    """The observations handed out in one ``sample()``, in blocks (one per step) joined at the end."""

    def __init__(self, first_id: int):
        self.next_id = first_id
        self.blocks: list[dict] = []

    def add(self, **columns) -> np.ndarray:
        """Appends len(columns["game"]) rows (their other columns as given) and returns their ids."""
        count = len(columns["game"])
        ids = np.arange(self.next_id, self.next_id + count)
        self.next_id += count
        self.blocks.append({"id": ids, **columns})
        return ids

    def joined(self, carried: dict | None, observation_size: int) -> dict:
        """Every column of the carried rows and the new ones, in id order (the order handed out)."""
        blocks = ([carried] if carried is not None else []) + [_filled(block, observation_size) for block in self.blocks]
        return {name: np.concatenate([block[name] for block in blocks]) for name in blocks[0]}


def _filled(block: dict, observation_size: int) -> dict:
    """A block with the columns a new row has no value for yet (its action and what came with it)."""
    count = len(block["id"])
    block.setdefault("action", np.full(count, -1, np.int64))
    block.setdefault("logp", np.zeros(count, np.float32))
    block.setdefault("dist", np.zeros((count, NUM_ACTIONS), np.float32))
    block.setdefault("lookback", np.zeros(count, np.bool_))
    return block


class _Episode:
    """What the sampler keeps of one game's episode (a round or a match) while it runs."""

    __slots__ = ("head", "agent_ids", "chunk_t0", "start_time", "end")

    def __init__(self, head: MultiAgentEpisode, agents: list[str]):
        self.head = head  # its id and agent-to-module mapping, as RLlib's mapping function made it
        self.agent_ids = {agent: uuid.uuid4().hex for agent in agents}  # each seat's SingleAgentEpisode id
        self.chunk_t0 = 0  # env step where the current chunk starts
        self.start_time = time.perf_counter()
        self.end = None  # (terminated, truncated) once over


class BatchedEpisode(MultiAgentEpisode):
    """A game's episode chunk as ``BatchSampler`` builds it: a ``MultiAgentEpisode`` whose ``slice`` (what
    RLlib's learner group calls to share a batch between learners) cuts by env steps from the step each
    seat's transitions ended at (``completions``), since the bulk build leaves out the per-step bookkeeping
    (``env_t_to_agent_t``, hanging actions) that ``MultiAgentEpisode.slice`` reads."""

    completions: dict  # agent -> the env step (env_t) at which each of its transitions in the chunk ended

    def slice(self, slice_: slice, *, len_lookback_buffer: int | None = None) -> BatchedEpisode:
        """Env steps ``slice_`` of this chunk (indices relative to its start): each seat's transitions that
        ended in them, the episode's end only in the piece that reaches it."""
        start, stop, step = slice_.indices(len(self))
        if step != 1:
            raise ValueError(f"BatchedEpisode slices with step 1 only, got {slice_}")
        low, high = self.env_t_started + start, self.env_t_started + max(stop, start)
        part = BatchedEpisode(id_=self.id_, observation_space=self.observation_space, action_space=self.action_space,
                              agent_to_module_mapping_fn=self.agent_to_module_mapping_fn,
                              agent_module_ids=dict(self._agent_to_module_mapping), env_t_started=low)
        part.env_t, part.completions, agents = high, {}, {}
        for agent, single in self.agent_episodes.items():
            first, last = np.searchsorted(self.completions[agent], [low, high], side="right").tolist()
            if last > first:
                piece = single.slice(slice(first, last), len_lookback_buffer=len_lookback_buffer)
                piece.agent_id, piece.module_id, piece.multi_agent_episode_id = agent, single.module_id, self.id_
                agents[agent], part.completions[agent] = piece, self.completions[agent][first:last]
        part.agent_episodes = agents
        part.agent_t_started = defaultdict(int, {agent: piece.t_started for agent, piece in agents.items()})
        reaches_end = high == self.env_t
        part.is_terminated, part.is_truncated = self.is_terminated and reaches_end, self.is_truncated and reaches_end
        part._start_time, part._last_step_time = self._start_time, self._last_step_time
        return part


class BatchSampler:
    """The rollout of one ``HPUnoEnvRunner``: its games' engine, the seat to act in each, the episodes running.

    ``sample(num_timesteps, explore)`` steps every game until at least ``num_timesteps`` env steps
    are done and returns RLlib's episodes (finished ones, then the chunks of those that go on) and
    the counts RLlib's runner logs.
    """

    def __init__(self, runner):
        games = runner.env.games  # the runner's HPUnoVectorMultiAgentEnv's MultiAgentGames
        self.runner, self.engine, self.format = runner, games.engine, games.observation_format
        self.num_games, self.num_players, self.agents = games.num_games, games.num_players, list(games.agents)
        self.observation_spaces = dict.fromkeys(self.agents, games.observation_space)
        self.action_spaces = dict.fromkeys(self.agents, games.action_space)
        self.observation_space, self.action_space = games.observation_space, games.action_space
        self.horizon = runner.config.episode_lookback_horizon
        self.module_ids: list[str] = []  # a module's index in self.modules -> its id
        self.needs_reset = True
        n, p = self.num_games, self.num_players
        self.serial = np.zeros(n, np.int64)  # each game's episode, a key of self.episodes
        self.game_t = np.zeros(n, np.int64)  # env steps of each game's episode so far
        self.seat_t = np.zeros((n, p), np.int64)  # observations handed to each seat so far
        self.modules = np.zeros((n, p), np.int64)  # the module each seat plays
        self.carry = np.zeros((n, p), np.float32)  # paid, not yet handed to the seat (with its next observation)
        self.current_rows = np.zeros(n, np.int64)  # the row each game's seat to act acts on
        self.current_obs = np.zeros((n, self.format.space.shape[0]), np.float32)
        self.current_mask = np.zeros((n, NUM_ACTIONS), np.float32)
        self._all = np.arange(n)

    def reset(self, seed: int | None) -> None:
        """Deals every game afresh; the episodes running are dropped (as RLlib's runner drops them)."""
        self.episodes: dict[int, _Episode] = {}
        self.next_serial, self.next_row, self.carried = 0, 0, None
        self.carry[:] = 0.0
        self.engine.reset(seed=seed)
        self.needs_reset = False
        self._pending_deal = self._all

    def sample(self, num_timesteps: int, explore: bool) -> tuple[list[MultiAgentEpisode], dict]:
        rows = _Rows(self.next_row)
        counts = {"env_steps": 0, "episodes": 0, "agents": np.zeros(self.num_players, np.int64),
                  "modules": defaultdict(int)}
        if self._pending_deal is not None:  # the first sample after a reset
            self._deal(rows, self._pending_deal)
            self._pending_deal = None
        log: list[tuple] = []
        modules = [self.runner.module[module_id] for module_id in self.runner.module.keys()]
        training = [module.training for module in modules]
        for module in modules:
            module.eval()
        try:
            while counts["env_steps"] < num_timesteps:
                self._step(rows, log, explore, counts)
        finally:
            for module, mode in zip(modules, training):
                module.train(mode)
        episodes = self._episodes(rows, log)
        self.next_row = rows.next_id
        return episodes, counts

    def _module_index(self, module_id: str) -> int:
        if module_id not in self.module_ids:
            self.module_ids.append(module_id)
        return self.module_ids.index(module_id)

    def _deal(self, rows: _Rows, games: np.ndarray) -> None:
        """New episodes in ``games`` (their engine games just reset): ids, modules, the first observation."""
        serials = np.arange(self.next_serial, self.next_serial + len(games))
        self.next_serial += len(games)
        self.serial[games] = serials
        mapping = self.runner.config.policy_mapping_fn
        for g, serial in zip(games.tolist(), serials.tolist()):
            head = MultiAgentEpisode(observation_space=self.observation_spaces, action_space=self.action_spaces,
                                     agent_to_module_mapping_fn=mapping)
            self.episodes[serial] = _Episode(head, self.agents)
            self.modules[g] = [self._module_index(head.module_for(agent)) for agent in self.agents]
        self.game_t[games] = 0
        self.seat_t[games] = 0
        seats = self.engine.current_player[games].astype(np.int64)
        views = self.format(self.engine.observe()[games])
        masks = self.engine.legal_mask()[games].astype(np.float32)
        zeros = np.zeros(len(games), np.int64)
        ids = rows.add(game=games, seat=seats, serial=serials, env_t=zeros, agent_t=zeros,
                       reward=np.zeros(len(games)), obs=views, mask=masks)
        self.seat_t[games, seats] = 1
        self.current_rows[games], self.current_obs[games], self.current_mask[games] = ids, views, masks

    def _act(self, explore: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(actions, their log-probabilities, the masked logits) of every game's seat to act: one forward
        pass per module, then a draw from the categorical distribution (the arg max without exploration)."""
        acting = self.modules[self._all, self.engine.current_player]
        observations, masks = torch.from_numpy(self.current_obs), torch.from_numpy(self.current_mask)
        used = np.unique(acting)
        with torch.no_grad():
            if len(used) == 1:  # the shared policy: one pass over every game
                logits = self._logits(self.module_ids[used[0]], observations, masks, explore)
            else:
                logits = torch.empty((self.num_games, NUM_ACTIONS))
                for index in used.tolist():
                    games = torch.from_numpy(np.flatnonzero(acting == index))
                    logits[games] = self._logits(self.module_ids[index], observations[games], masks[games], explore)
            if not explore:
                return logits.argmax(dim=1).numpy(), np.zeros(self.num_games, np.float32), logits.numpy()
            log_probs = torch.log_softmax(logits, dim=1)
            # Gumbel-max: the arg max of log-probabilities plus Gumbel noise is a draw from the
            # categorical distribution (torch.multinomial draws the same, at 4x the time for 64 games).
            noise = torch.rand_like(log_probs).log_().neg_().log_().neg_()
            actions = (log_probs + noise).argmax(dim=1, keepdim=True)
            return actions[:, 0].numpy(), log_probs.gather(1, actions)[:, 0].numpy(), logits.numpy()

    def _logits(self, module_id: str, observations, masks, explore: bool):
        # What forward_exploration / forward_inference run, without their switch to eval mode and
        # back at every call (a fifth of the step's time): sample() switches once.
        module = self.runner.module[module_id]
        batch = {Columns.OBS: {"observations": observations, "action_mask": masks}}
        outputs = module._forward_exploration(batch) if explore else module._forward_inference(batch)
        return outputs[Columns.ACTION_DIST_INPUTS]

    def _step(self, rows: _Rows, log: list, explore: bool, counts: dict) -> None:
        """Every game's seat to act moves; the observations handed out become rows."""
        actions, log_probs, logits = self._act(explore)
        log.append((self.current_rows.copy(), actions, log_probs, logits))
        observations, masks, rewards, terminated, truncated = self.engine.step_observe(actions)
        self.carry += rewards
        self.game_t += 1
        ended = terminated | truncated
        live = np.flatnonzero(~ended)
        seats = self.engine.current_player[live].astype(np.int64)
        views, mask_rows = self.format(observations[live]), masks[live].astype(np.float32)
        ids = rows.add(game=live, seat=seats, serial=self.serial[live], env_t=self.game_t[live],
                       agent_t=self.seat_t[live, seats], reward=self.carry[live, seats].astype(np.float64),
                       obs=views, mask=mask_rows)
        self.carry[live, seats] = 0.0
        self.seat_t[live, seats] += 1
        self.current_rows[live], self.current_obs[live], self.current_mask[live] = ids, views, mask_rows
        counts["env_steps"] += self.num_games
        counts["agents"] += np.bincount(seats, minlength=self.num_players)
        for index, count in enumerate(np.bincount(self.modules[live, seats], minlength=len(self.module_ids))):
            counts["modules"][self.module_ids[index]] += int(count)
        if len(live) < self.num_games:
            games = np.flatnonzero(ended)
            self._end(rows, games, terminated, truncated, counts)
            self.engine.reset(games=games)
            self._deal(rows, games)

    def _end(self, rows: _Rows, games: np.ndarray, terminated, truncated, counts: dict) -> None:
        """Every seat of the ended ``games`` gets its last view and what it was paid."""
        for seat in range(self.num_players):
            seats = np.full(self.num_games, -1, np.int64)
            seats[games] = seat
            column = np.full(len(games), seat, np.int64)
            rows.add(game=games, seat=column, serial=self.serial[games], env_t=self.game_t[games],
                     agent_t=self.seat_t[games, seat], reward=self.carry[games, seat].astype(np.float64),
                     obs=self.format(self.engine.observe(seats)[games]),
                     mask=np.zeros((len(games), NUM_ACTIONS), np.float32))
        self.carry[games] = 0.0
        counts["agents"] += len(games)
        counts["episodes"] += len(games)
        for g in games.tolist():
            record = self.episodes[int(self.serial[g])]
            cut = bool(truncated[g] and not terminated[g])  # as MultiAgentGames.step: a cut is not an end
            record.end = (not cut, cut)
            for seat in range(self.num_players):
                counts["modules"][self.module_ids[self.modules[g, seat]]] += 1

    def _episodes(self, rows: _Rows, log: list) -> list[MultiAgentEpisode]:
        """RLlib's episodes from the rows: finished episodes, then the chunks of those that go on."""
        table = rows.joined(self.carried, self.current_obs.shape[1])
        if log:  # each action onto the row of the observation it was chosen at
            at = np.searchsorted(table["id"], np.concatenate([entry[0] for entry in log]))
            for name, index in (("action", 1), ("logp", 2), ("dist", 3)):
                table[name][at] = np.concatenate([entry[index] for entry in log])
        order = np.lexsort((table["id"], table["seat"], table["serial"]))
        table = {name: column[order] for name, column in table.items()}
        serial, seat = table["serial"], table["seat"]
        starts = np.flatnonzero(np.r_[True, (serial[1:] != serial[:-1]) | (seat[1:] != seat[:-1])])
        stops = np.r_[starts[1:], len(serial)]
        now = time.perf_counter()
        chunks: dict[int, dict] = defaultdict(dict)  # serial -> agent -> SingleAgentEpisode
        completions: dict[int, dict] = defaultdict(dict)  # serial -> agent -> env steps its transitions ended at
        for start, stop in zip(starts.tolist(), stops.tolist()):
            key = int(serial[start])
            chunk = self._agent_chunk(table, start, stop, self.episodes[key])
            chunks[key]  # an episode with no seat's step in this chunk is still returned (RLlib does)
            if chunk is not None:
                chunks[key][chunk.agent_id] = chunk
                completions[key][chunk.agent_id] = table["env_t"][stop - len(chunk):stop]
        done, ongoing = [], []
        for key in sorted(chunks):
            record = self.episodes[key]
            ends = table["env_t"][serial == key]
            last = int(ends.max())
            if record.end is None and last == 0:
                continue  # dealt in the last step: nothing in it yet
            episode = self._multi_agent_chunk(record, chunks[key], completions[key], last, now)
            (done if record.end is not None else ongoing).append(episode)
        self._carry_rows(table, starts, stops)
        for key in [key for key, record in self.episodes.items() if record.end is not None]:
            del self.episodes[key]
        return done + ongoing

    def _agent_chunk(self, table: dict, start: int, stop: int, record: _Episode) -> SingleAgentEpisode | None:
        """One seat's SingleAgentEpisode from its rows ``start:stop`` (lookback rows first), None if it
        has no step in this chunk. Its transitions: each row's action, paid with the next row."""
        lookback = int(table["lookback"][start:stop].sum())
        if stop - start - 1 - lookback <= 0:
            return None
        rows, acted, paid = slice(start, stop), slice(start, stop - 1), slice(start + 1, stop)
        agent = self.agents[int(table["seat"][start])]
        terminated, truncated = record.end or (False, False)
        observations = {"observations": table["obs"][rows], "action_mask": table["mask"][rows]}
        extra = {Columns.ACTION_DIST_INPUTS: table["dist"][acted], Columns.ACTION_LOGP: table["logp"][acted],
                 WEIGHTS_SEQ_NO: np.full(stop - start - 1, self.runner._weights_seq_no)}
        return SingleAgentEpisode(
            id_=record.agent_ids[agent], agent_id=agent, module_id=record.head.module_for(agent),
            multi_agent_episode_id=record.head.id_,
            observations=InfiniteLookbackBuffer(observations, lookback, self.observation_space),
            observation_space=self.observation_space,
            infos=InfiniteLookbackBuffer([{} for _ in range(stop - start)], lookback),
            actions=InfiniteLookbackBuffer(table["action"][acted], lookback, self.action_space),
            action_space=self.action_space,
            rewards=InfiniteLookbackBuffer(table["reward"][paid], lookback, _REWARDS_BOX_SPACE),
            extra_model_outputs={name: InfiniteLookbackBuffer(column, lookback) for name, column in extra.items()},
            terminated=terminated, truncated=truncated, t_started=int(table["agent_t"][start + lookback]),
        )

    def _multi_agent_chunk(self, record: _Episode, agent_chunks: dict, completions: dict, env_t: int,
                           now: float) -> BatchedEpisode:
        """The game's MultiAgentEpisode chunk from env step ``record.chunk_t0`` to ``env_t``."""
        head = record.head
        episode = BatchedEpisode(
            id_=head.id_, observation_space=self.observation_spaces, action_space=self.action_spaces,
            agent_to_module_mapping_fn=head.agent_to_module_mapping_fn,
            agent_module_ids=dict(head._agent_to_module_mapping), env_t_started=record.chunk_t0)
        episode.env_t = env_t
        episode.agent_episodes, episode.completions = agent_chunks, completions
        episode.agent_t_started = defaultdict(int, {agent: chunk.t_started for agent, chunk in agent_chunks.items()})
        episode.is_terminated, episode.is_truncated = record.end or (False, False)
        episode._start_time, episode._last_step_time = record.start_time, now
        record.chunk_t0, record.start_time = env_t, now
        return episode

    def _carry_rows(self, table: dict, starts: np.ndarray, stops: np.ndarray) -> None:
        """Keeps, for the next sample, each running seat's last row (where its next chunk starts) and the
        ``episode_lookback_horizon`` rows before it (the chunk's lookback)."""
        stop_of_row = np.repeat(stops, stops - starts)
        from_end = stop_of_row - 1 - np.arange(len(stop_of_row))
        running = np.array([self.episodes[int(key)].end is None for key in table["serial"][starts]])
        keep = np.repeat(running, stops - starts) & (from_end <= self.horizon)
        order = np.argsort(table["id"][keep])
        self.carried = {name: column[keep][order] for name, column in table.items()}
        self.carried["lookback"] = from_end[keep][order] > 0
