"""The network that learns: a new MaskablePPO model (warm-started by behaviour cloning unless told not to), or the
run's checkpoint loaded for --resume (widened where the observation or the critic's inputs have grown).

The device and precision are chosen in ``agents.training.options`` and ``agents.training.precision``; with
--critic hands the critic also reads the other seats' hidden hands (``agents.training.critic``), while the actor,
and so the exported agent, plays from its own observation alone.
"""

from __future__ import annotations

import sys
import time

import torch
from sb3_contrib import MaskablePPO

from agents import players
from agents._cli import layer_sizes
from agents.training.critic import HandsCriticPolicy, actor_inputs, needs_widening, widened
from agents.training.imitation import warm_start
from agents.training.options import PPOOptions, RunOptions, WarmStartOptions, learning_rate, resumed_update_settings
from hpuno_env.cards import DRAW, KEEP
from hpuno_env.encoding import OBSERVATION_VERSION, observation_size

# The starting logit of draw and keep in a network from random weights (--warm-start none), against about 0 for
# every other action. A network that draws as often as it plays makes rounds of a thousand of its decisions and
# more against the random player, whose result a discount of 0.99 cannot carry back to the choices that made it,
# and PPO then learns to stall instead of to win (docs/training.md, "Warm start"). At -3 the untrained network plays
# a card when it can, as random-play does, so its rounds end, and PPO can still raise these logits where drawing pays.
UNTRAINED_DRAW_LOGIT = -3.0


def new_model(ppo: PPOOptions, env, device: str, *, seed: int, num_players: int, untrained: bool) -> MaskablePPO:
    """A fresh model of --net-arch (a hands critic with --critic hands, reading ``num_players``' observations),
    seeded with ``seed``; ``untrained`` (no warm start follows): its draw and keep logits start at
    UNTRAINED_DRAW_LOGIT."""
    hands_critic = ppo.critic == "hands"
    model = MaskablePPO(
        HandsCriticPolicy if hands_critic else "MlpPolicy", env, n_steps=ppo.n_steps,
        batch_size=min(ppo.batch_size, ppo.n_steps * env.num_envs), n_epochs=ppo.n_epochs,
        learning_rate=learning_rate(ppo), gamma=ppo.gamma, gae_lambda=ppo.gae_lambda, clip_range=ppo.clip_range,
        ent_coef=ppo.ent_coef, policy_kwargs={"net_arch": layer_sizes(ppo.net_arch),
                                              **({"actor_inputs": observation_size(num_players)} if hands_critic else {})},
        seed=seed, device=device, verbose=0,
    )
    if untrained:
        with torch.no_grad():
            model.policy.action_net.bias[[DRAW, KEEP]] = UNTRAINED_DRAW_LOGIT
    return model


def resumed_model(ppo: PPOOptions, given: frozenset, env, device: str, checkpoint_path: str, earlier_config: dict) -> MaskablePPO:
    """The checkpoint at ``checkpoint_path`` on ``env``, with the update's settings of the options (the run's own
    unless ``given`` now, ``earlier_config`` being its config.json); ValueError if it cannot play ``env``'s games."""
    # SB3 rebuilds its schedules and its rollout buffer, sized for this run's games, which may differ from the checkpoint's
    model = MaskablePPO.load(checkpoint_path, device=device, learning_rate=learning_rate(ppo), n_envs=env.num_envs,
                             **resumed_update_settings(ppo, given, earlier_config))
    if not needs_widening(model, env):
        model.set_env(env)  # checks the spaces: ValueError if they differ
        return model
    # observation fields added since it was made, or the hands for its critic
    old_observation, had_hands_critic = actor_inputs(model), isinstance(model.policy, HandsCriticPolicy)
    model = widened(model, env, learning_rate(ppo))
    if old_observation < actor_inputs(model):
        print(f"the checkpoint read {old_observation}-entry observations; it goes on with today's layout "
              f"(version {OBSERVATION_VERSION}, {actor_inputs(model)} entries), zero weights on the new fields")
    if not had_hands_critic and isinstance(model.policy, HandsCriticPolicy):
        print("the critic now reads the other seats' hands too (actor and critic weights carried over)")
    return model


def report_resume(model: MaskablePPO, checkpoint_path: str, timesteps: int, opponent: str, warm_start: str) -> None:
    """Say where a resumed run starts (to ``timesteps``, against ``opponent``), and what it will not do."""
    print(f"resumed from {checkpoint_path} at {model.num_timesteps} steps (opponent {opponent}; learning rate now "
          f"{model.lr_schedule(max(0.0, 1 - model.num_timesteps / timesteps)):.3g})")
    if model.num_timesteps >= timesteps:
        print(f"nothing to train: the checkpoint is at {model.num_timesteps} steps and --timesteps is {timesteps} "
              f"(give a larger --timesteps to train on); evaluating and exporting it")
    if warm_start != "none":
        print(f"--warm-start {warm_start} ignored: the checkpoint holds the weights")


def warm_started(model: MaskablePPO, warm: WarmStartOptions, run: RunOptions, scale_observations: bool) -> dict:
    """Fit ``model`` to the --warm-start player's decisions (agents.training.imitation); config.json's record of it.
    On Ctrl-C it says that nothing was trained or saved, and raises KeyboardInterrupt again."""
    started = time.perf_counter()
    try:
        print(f"warm start: fitting {warm.teacher}'s decisions ({warm.decisions}, {warm.epochs} epochs)", flush=True)
        report = warm_start(model, players.load(warm.teacher, num_players=run.players, seed=run.seed + 11), run.players,
                            decisions=warm.decisions, epochs=warm.epochs, scale_observations=scale_observations,
                            seed=run.seed + 12, progress="bar" if run.progress else "lines", **run.rules)
    except KeyboardInterrupt:  # nothing is trained or written yet: say so, without a traceback
        print(f"\ninterrupted during the warm start ({time.perf_counter() - started:.0f} s in): nothing was trained "
              f"or saved in {run.out}; run the command again to start over", file=sys.stderr, flush=True)
        raise
    seconds = time.perf_counter() - started
    print(f"warm start: agrees with {warm.teacher} on {report['agreement']:.1%} of {report['held_out_decisions']} decisions "
          f"of other games ({seconds:.0f} s)", flush=True)
    return {"teacher": warm.teacher, "seconds": seconds, **report}
