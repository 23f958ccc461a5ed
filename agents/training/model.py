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
from agents.training.options import Args, learning_rate, resumed_update_settings
from hpuno_env.cards import DRAW, KEEP
from hpuno_env.encoding import OBSERVATION_VERSION, observation_size

# The starting logit of draw and keep in a network from random weights (--warm-start none), against about 0 for
# every other action. A network that draws as often as it plays makes rounds of a thousand of its decisions and
# more against the random player, whose result a discount of 0.99 cannot carry back to the choices that made it,
# and PPO then learns to stall instead of to win (docs/training.md, "Warm start"). At -3 the untrained network plays
# a card when it can, as random-play does, so its rounds end, and PPO can still raise these logits where drawing pays.
UNTRAINED_DRAW_LOGIT = -3.0


def new_model(args: Args, env, device: str) -> MaskablePPO:
    """A fresh model of --net-arch (a hands critic with --critic hands), seeded with --seed; without a warm start,
    its draw and keep logits start at UNTRAINED_DRAW_LOGIT."""
    hands_critic = args.critic == "hands"
    model = MaskablePPO(
        HandsCriticPolicy if hands_critic else "MlpPolicy", env, n_steps=args.n_steps,
        batch_size=min(args.batch_size, args.n_steps * args.envs), n_epochs=args.n_epochs,
        learning_rate=learning_rate(args), gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range,
        ent_coef=args.ent_coef, policy_kwargs={"net_arch": layer_sizes(args.net_arch),
                                               **({"actor_inputs": observation_size(args.players)} if hands_critic else {})},
        seed=args.seed, device=device, verbose=0,
    )
    if args.warm_start == "none":
        with torch.no_grad():
            model.policy.action_net.bias[[DRAW, KEEP]] = UNTRAINED_DRAW_LOGIT
    return model


def resumed_model(args: Args, argv: list[str], env, device: str, checkpoint_path: str, earlier_config: dict) -> MaskablePPO:
    """The checkpoint at ``checkpoint_path`` on ``env``, with the update's settings of the options (the run's own
    unless given now, ``earlier_config`` being its config.json); ValueError if it cannot play ``env``'s games."""
    # SB3 rebuilds its schedules and its rollout buffer, sized for this run's --envs, which may differ from the checkpoint's
    model = MaskablePPO.load(checkpoint_path, device=device, learning_rate=learning_rate(args), n_envs=args.envs,
                             **resumed_update_settings(args, argv, earlier_config))
    if not needs_widening(model, env):
        model.set_env(env)  # checks the spaces: ValueError if they differ
        return model
    # observation fields added since it was made, or the hands for its critic
    old_observation, had_hands_critic = actor_inputs(model), isinstance(model.policy, HandsCriticPolicy)
    model = widened(model, env, learning_rate(args))
    if old_observation < actor_inputs(model):
        print(f"the checkpoint read {old_observation}-entry observations; it goes on with today's layout "
              f"(version {OBSERVATION_VERSION}, {actor_inputs(model)} entries), zero weights on the new fields")
    if not had_hands_critic and isinstance(model.policy, HandsCriticPolicy):
        print("the critic now reads the other seats' hands too (actor and critic weights carried over)")
    return model


def report_resume(args: Args, model: MaskablePPO, checkpoint_path: str) -> None:
    """Say where a resumed run starts, and what it will not do."""
    print(f"resumed from {checkpoint_path} at {model.num_timesteps} steps (opponent {args.opponent}; learning rate now "
          f"{model.lr_schedule(max(0.0, 1 - model.num_timesteps / args.timesteps)):.3g})")
    if model.num_timesteps >= args.timesteps:
        print(f"nothing to train: the checkpoint is at {model.num_timesteps} steps and --timesteps is {args.timesteps} "
              f"(give a larger --timesteps to train on); evaluating and exporting it")
    if args.warm_start != "none":
        print(f"--warm-start {args.warm_start} ignored: the checkpoint holds the weights")


def warm_started(model: MaskablePPO, args: Args, rules: dict) -> dict:
    """Fit ``model`` to the --warm-start player's decisions (agents.training.imitation); config.json's record of it.
    On Ctrl-C it says that nothing was trained or saved, and raises KeyboardInterrupt again."""
    started = time.perf_counter()
    try:
        print(f"warm start: fitting {args.warm_start}'s decisions ({args.warm_start_decisions}, {args.warm_start_epochs} epochs)", flush=True)
        report = warm_start(model, players.load(args.warm_start, num_players=args.players, seed=args.seed + 11), args.players,
                            decisions=args.warm_start_decisions, epochs=args.warm_start_epochs,
                            scale_observations=args.scale_observations, seed=args.seed + 12,
                            progress="bar" if args.progress else "lines", **rules)
    except KeyboardInterrupt:  # nothing is trained or written yet: say so, without a traceback
        print(f"\ninterrupted during the warm start ({time.perf_counter() - started:.0f} s in): nothing was trained "
              f"or saved in {args.out}; run the command again to start over", file=sys.stderr, flush=True)
        raise
    seconds = time.perf_counter() - started
    print(f"warm start: agrees with {args.warm_start} on {report['agreement']:.1%} of {report['held_out_decisions']} decisions "
          f"of other games ({seconds:.0f} s)", flush=True)
    return {"teacher": args.warm_start, "seconds": seconds, **report}
