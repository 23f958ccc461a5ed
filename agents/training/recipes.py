"""Training recipes: ``python train.py --recipe champion --players N`` trains a strong agent from scratch in one command.

A recipe is a set of train.py defaults and a list of stages. Each stage is an ordinary train.py run (the
first a fresh one, the others ``--resume`` of the same ``--out``), so its checkpoints, logs, learning curve and
``config.json`` are those of any run, and the commands the stages ran are listed in ``config.json`` and in the
agent file (``"commands"``): a recipe can be replayed, or continued, by hand.

``champion`` is the schedule of the experiments behind the shipped agents (docs/experiments.md), from scratch
and shortened: a warm start cloning the heuristic; PPO against the heuristic at a constant step of 3e-4; then,
against a mixture of heuristic and random-play tables, the step annealed linearly to 0 at the end of the run.

Options given on the command line replace the recipe's in every stage (``--timesteps`` scales the stages,
whose ends are fractions of it; ``--opponent`` replaces every stage's opponent), except two that belong to one
stage: ``--final-learning-rate`` is the annealed stage's final step (the first stage keeps a constant step), and
``--final-rounds`` sizes the last stage's table (earlier stages end with a table of ``--eval-rounds`` rounds).
The warm start is the first stage's. Stage k (from 0) seeds its games with ``--seed`` + k, so a later stage does
not deal the first stage's games again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class Stage:
    name: str
    until: float  # the stage ends at this fraction of --timesteps
    options: dict  # train.py options of this stage, over the recipe's


@dataclass(frozen=True)
class Recipe:
    options: dict  # train.py defaults for every stage
    stages: tuple[Stage, ...]


_WARM_START = {"warm_start": "heuristic", "warm_start_decisions": 400_000, "warm_start_epochs": 5}
# threads 0: PPO's update on every core (the rollout runs on one), docs/benchmarks.md
_PPO = {"threads": 0, "learning_rate": 3e-4, "n_steps": 64, "batch_size": 2048, "n_epochs": 4, "gamma": 0.99, "gae_lambda": 0.8,
        "net_arch": "256,256", "critic": "observation", "precision": "auto"}


def _champion(timesteps: int, first_stage: float, mixture: str, eval_every: int, eval_rounds: int) -> Recipe:
    """The champion schedule: a warm start, PPO against the heuristic at a constant step to ``first_stage`` of the
    run, then against the ``mixture`` of tables with the step annealed to 0 at the run's end."""
    return Recipe(
        options={**_WARM_START, **_PPO, "timesteps": timesteps, "eval_every": eval_every, "eval_rounds": eval_rounds,
                 "checkpoint_every": 1_000_000, "final_rounds": 20_000},
        stages=(Stage("against the heuristic", first_stage, {"opponent": "heuristic"}),
                Stage("annealed, heuristic and random-play", 1.0, {"opponent": mixture, "final_learning_rate": 0.0})),
    )


RECIPES = {
    "champion": {
        # ppo_2p: 9.5M steps against the heuristic at 3e-4, then 85% heuristic / 15% random-play tables, annealed
        # (58.8% against the heuristic at 54M steps; 56.5-57.0% at 28-32M). Here the annealing ends at the run's end:
        # from scratch, 30M steps made 58.7% in 59.9 minutes of a 2-core machine (bfloat16, spinning threads).
        2: _champion(30_000_000, 1 / 6, "heuristic=0.85,random-play=0.15", eval_every=1_000_000, eval_rounds=2000),
        # ppo_4p: 5M steps against the heuristic at 3e-4, then mixtures annealed (28.6% at 41M steps, 30.1% after
        # 120M in several stages); its last and best stage played 95% heuristic / 5% random-play tables. From
        # scratch, 34M steps made 29.4% against three heuristics in 108 minutes of a 2-core machine (float32).
        4: _champion(34_000_000, 1 / 8, "heuristic=0.95,random-play=0.05", eval_every=2_000_000, eval_rounds=4000),
    },
}


# --recipe universal: one agent for every table (agents/training/universal.py). Its train.py defaults; options given
# on the command line replace them.
UNIVERSAL_RECIPE = "universal"
UNIVERSAL_OPTIONS = {"tables": "2,3,4,5,6,8,10", "house_tables": "2,4", "timesteps": 34_000_000, "envs": 440, "threads": 0, "opponent": "heuristic", "learning_rate": 3e-4,
                     "final_learning_rate": 0.0, "warm_start": "heuristic", "warm_start_decisions": 1_400_000, "warm_start_epochs": 5,
                     "n_steps": 64, "batch_size": 4096, "n_epochs": 4, "gamma": 0.99, "gae_lambda": 0.8, "net_arch": "256,256", "precision": "auto",
                     "eval_every": 2_000_000, "eval_rounds": 1000, "checkpoint_every": 1_000_000, "final_rounds": 4000}


def recipe_for(name: str, num_players: int) -> Recipe:
    """The recipe ``name`` for games of ``num_players`` (3 and more seats take the 4-player schedule)."""
    if name not in RECIPES:
        raise ValueError(f"unknown recipe {name!r}: choose from {', '.join(RECIPES)}")
    by_players = RECIPES[name]
    return by_players[num_players] if num_players in by_players else by_players[max(by_players)]


# Options that belong to the first stage only (the later ones resume its checkpoint).
FIRST_STAGE_ONLY = ("warm_start", "warm_start_decisions", "warm_start_epochs", "overwrite")


def stage_options(recipe: Recipe, given: dict, done_steps: int = 0) -> list[tuple[Stage, dict]]:
    """Each stage still to run, with its train.py options (field names of agents.training.train.Args: values).

    ``given``: the options set on the command line (not ``recipe``); ``done_steps``: the steps the run's checkpoint
    already holds (0 for a new run), so a resumed recipe goes on with the stage it was in."""
    options = {**recipe.options, **given}
    total = options["timesteps"]
    stages = []
    for index, stage in enumerate(recipe.stages):
        last = index == len(recipe.stages) - 1
        chosen = {**recipe.options, **stage.options, **given}
        if "final_learning_rate" in given and "final_learning_rate" not in stage.options:
            del chosen["final_learning_rate"]  # the first stage keeps a constant step
        chosen["timesteps"] = total if last else max(1, round(stage.until * total))
        if not last:
            chosen["final_rounds"] = chosen["eval_rounds"]
        chosen["seed"] = options.get("seed", 0) + index
        if index > 0:
            for name in FIRST_STAGE_ONLY:
                chosen.pop(name, None)
        chosen["resume"] = index > 0 or bool(given.get("resume"))
        stages.append((stage, chosen))
    remaining = [(stage, chosen) for stage, chosen in stages if chosen["timesteps"] > done_steps]
    return remaining or stages[-1:]  # all done: the last stage evaluates and exports the checkpoint again


def command_line(options: dict, args_class) -> list[str]:
    """train.py arguments setting each of ``options`` (every one, so a resumed stage inherits none), in the order of
    ``args_class``'s fields; an option left at None is left out."""
    argv = []
    for field in dataclasses.fields(args_class):
        value, flag = options.get(field.name), "--" + field.name.replace("_", "-")
        if value is None or (field.name in ("resume", "overwrite") and not value):
            continue
        if isinstance(value, bool):
            argv.append(flag if value else f"--no-{flag[2:]}")
        else:
            argv += [flag, str(value)]
    return argv
