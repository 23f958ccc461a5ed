"""Train a Harry Potter UNO player with MaskablePPO, evaluate it, export it as a safe agent file.

    python train.py                                  # 2 players: clone the heuristic, then PPO against random (a few minutes)
    python train.py --players 4 --opponent league --timesteps 3000000
    python train.py --opponent heuristic             # clone the heuristic first (the default), then PPO against it
    python train.py --warm-start none                # PPO from random weights
    python train.py --opponent self                  # self-play: opponents use the live weights
    python train.py --opponent heuristic=3,random-play=1 # a mixture: each game's opponents drawn by these weights
    python train.py --final-learning-rate 0           # anneal the learning rate linearly to 0 by --timesteps
    python train.py --out runs/ppo --resume          # continue from runs/ppo/checkpoint.zip
    python train.py --out runs/ppo --resume --critic hands   # continue with a critic that also sees the others' hands
    python train.py --out runs/ppo --overwrite       # start runs/ppo over (a new run where one is, is refused)
    python train.py --recipe champion --players 2    # a strong agent from scratch, in stages (agents/training/recipes.py)
    python train.py --device cuda --threads 0        # the network on the GPU; or PPO's update on every CPU core
    python train.py --precision auto                 # hidden layers in bfloat16 where the CPU or GPU has it natively
    python train.py --help                           # every option and its default

Reads top to bottom: options (the ``Args`` dataclass), the output folder and
config.json, the environment and its opponents, the model (new or resumed;
a new one warm-started by behaviour cloning unless told not to, agents/training/imitation.py;
with --critic hands its critic also reads the other seats' hidden hands,
agents/training/critic.py),
training (progress bar, logs, periodic evaluation, atomic checkpoints; Ctrl-C
saves one and prints how to resume), then the final evaluation table, which
includes the shipped champions, and the exported agent.

Writes into --out:
  checkpoint.zip     SB3 checkpoint for --resume; loading it unpickles, so resume only your own runs
  checkpoint.json    that checkpoint's step count, wall-clock seconds and league snapshots
  agent.safetensors  the trained agent: agents.load(path, num_players) reads it without running code
  config.json        every option, the rules options, package versions, the seed and the command
  losses.csv         one row per PPO iteration: losses, rollout (env / policy) and update seconds, steps/s
  evaluations.csv    the learning curve: win rates against heuristic and random-play by steps and wall-clock
                     (every --eval-every steps), then the final table's row for this run
  tensorboard/       the same scalars: tensorboard --logdir OUT/tensorboard
  league/            frozen snapshots of the learner (--opponent league)
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import platform
import re
import shlex
import signal
import sys
import time
import zipfile
from dataclasses import dataclass

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import configure
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import VecEnvWrapper, VecMonitor
from tqdm import tqdm

import hpuno_env
from agents import players
from agents._cli import dataclass_parser, given_options, inherit_options, layer_sizes, option, rules_from_options, rules_problem
from agents.evaluation.rounds import win_rate
from agents.players.trained import TrainedAgent, shipped_for
from agents.training.agent_file import export, live_agent
from agents.training.critic import HandsCriticPolicy, actor_inputs, needs_widening, widened
from agents.training.imitation import warm_start
from agents.training.league import League, Mixture, check_weights
from agents.training.precision import training_precision, use_precision
from agents.training.recipes import RECIPES, command_line, recipe_for, stage_options
from hpuno_env import HPUnoVecEnv
from hpuno_env._checks import SEED_LIMIT
from hpuno_env._reading import parse_json, read_json_file
from hpuno_env.encoding import OBSERVATION_VERSION, observation_scale, observation_size
from hpuno_env.options import check_num_players

FIXED_OPPONENTS = ("random", "random-play", "heuristic")  # names for agents.load
OPPONENT_CHOICES = (*FIXED_OPPONENTS, "self", "league")
CURVE_OPPONENTS = ("heuristic", "random-play")  # the learning curve's fixed yardsticks
CRITICS = ("observation", "hands")  # --critic
DEVICES = ("auto", "cpu", "cuda")  # --device


@dataclass
class Args:
    # ---- the game and the run
    players: int = option(2, "seats per game (2..10)")
    recipe: str = option("none", "champion: train a strong agent from scratch in one command, in stages (agents/training/recipes.py: "
                                 "a warm start, PPO against the heuristic, then annealed against a mixture); the options given "
                                 "replace the recipe's (docs/training.md). none: this command's options only")
    timesteps: int = option(300_000, "learner decisions to train for in all, rounded up to whole rollouts; a resumed run counts its checkpoint's")
    envs: int = option(128, "games stepped together in one engine (the learner plays one seat of each)")
    opponent: str = option("random", "who plays the other seats: random, random-play, heuristic, self (the live weights, "
                                     "sampling), league (agents/training/league.py: snapshots of the learner, heuristic, random-play "
                                     "and the live weights, drawn per game and seat), a saved agent file's path, or a mixture "
                                     "NAME=WEIGHT,NAME=WEIGHT of those players and files (each game's opponents all drawn from "
                                     "one of them with probability proportional to its weight: agents.training.league.Mixture)")
    rule: tuple[str, ...] = option((), "a rules option NAME=VALUE, repeatable, e.g. --rule uno_penalty=4 --rule wd4_bluffing=false "
                                       "(the syntax of the tournament and agents.play; docs/rules.md, \"The options\")")
    rules: str = option("{}", 'the same rules options as one JSON object (an alias of --rule), e.g. \'{"uno_penalty": 4}\'')
    out: str = option("runs/ppo", "output folder: checkpoint, agent, config.json, logs")
    resume: bool = option(False, "continue from OUT/checkpoint.zip (an error if there is none). Every option not given "
                                  "is the run's own (OUT/config.json; --progress excepted): give --timesteps to train "
                                  "on; the network cannot change (except --critic observation -> hands); the opponent, "
                                  "rules, --envs, learning rate, schedule, --n-steps, --batch-size, --n-epochs, --gamma, "
                                  "--gae-lambda, --clip-range and --ent-coef can")
    overwrite: bool = option(False, "start a new run in an OUT that already holds one: the files train.py wrote there (checkpoint, "
                                    "config, logs, agent, league snapshots, TensorBoard events) are deleted first, nothing "
                                    "else. Without it, a new run there is refused")
    seed: int = option(0, "seeds the games, the opponents, the network and the evaluations")
    # ---- warm start (a fresh run only; agents/training/imitation.py)
    warm_start: str = option("heuristic", "before PPO, fit the new network to this player's decisions (behaviour cloning: the "
                                          "actor by cross-entropy, the critic to the round results); none: start from random "
                                          "weights, which in a short run learns to put off losing by drawing and wins almost "
                                          "nothing. Not done on --resume (the checkpoint holds the weights), nor, unless given, "
                                          "with --critic hands (it fits a critic of observations only)")
    warm_start_decisions: int = option(400_000, "decisions of the --warm-start player (playing every seat) to fit")
    warm_start_epochs: int = option(5, "passes over those decisions (Adam, lr 1e-3, minibatch 1024)")
    # ---- PPO
    learning_rate: float = option(3e-4, "Adam step size (at step 0, if --final-learning-rate anneals it)")
    final_learning_rate: float | None = option(None, "anneal the step size linearly from --learning-rate at step 0 to this "
                                                     "at --timesteps (none: constant). The rate is a function of the step "
                                                     "count, so a run resumed at step s starts at the schedule's value at s")
    n_steps: int = option(64, "decisions per game slot in each rollout (a rollout is n_steps * envs learner steps)")
    batch_size: int = option(2048, "minibatch size of the update (capped at n_steps * envs)")
    n_epochs: int = option(4, "passes over each rollout in the update")
    gamma: float = option(0.99, "discount per learner decision")
    gae_lambda: float = option(0.8, "GAE lambda")
    clip_range: float = option(0.2, "PPO clip range")
    ent_coef: float = option(0.01, "entropy bonus")
    net_arch: str = option("256,256", "hidden layer sizes of the policy and value networks, comma-separated")
    critic: str = option("observation", "what the critic reads: observation (the seat's own, as the actor) or hands (also the "
                                        "other seats' hidden hands: agents/training/critic.py; the actor, and so the agent, still plays "
                                        "from its observation alone). A resumed observation run can switch to hands")
    scale_observations: bool = option(True, "multiply observations by hpuno_env.encoding.observation_scale (each entry to about [0, 1])")
    threads: int = option(1, "torch threads in PPO's update and the warm start's fit (0: one per core this process may use); "
                             "the rollout and the evaluations always use one (their batches are small, and the engine is "
                             "single-threaded). Measured in docs/benchmarks.md; a resumed run takes this command's")
    device: str = option("auto", "where the network learns and, in the rollout, acts: auto (cuda when torch.cuda.is_available(), "
                                 "else cpu), cpu or cuda (an error without a CUDA device). The agent file is the same either "
                                 "way (CPU float32 tensors); a resumed run takes this command's, not the run's")
    precision: str = option("float32", "the arithmetic of the hidden layers' products in training (agents/training/precision.py): float32; "
                                       "bfloat16 (mixed precision: float32 weights, optimiser and outputs; about twice as fast "
                                       "where the CPU has AVX-512 BF16 or AMX, or on a recent GPU, and much slower elsewhere); "
                                       "auto (bfloat16 where the device has it natively, else float32). The agent file is "
                                       "float32 either way; a resumed run takes this command's")
    # ---- checkpoints and evaluation
    checkpoint_every: int = option(50_000, "learner steps between atomic checkpoints")
    eval_every: int = option(100_000, "learner steps between evaluations against heuristic and random-play (0: only at the end)")
    eval_rounds: int = option(400, "rounds per opponent in each periodic evaluation (one fixed set of rounds, seats rotated)")
    final_rounds: int = option(2000, "rounds per cell of the final evaluation table")
    hold_out: str = option("heuristic-v0", "a rule-based player kept out of training (out of the league even if it is a member) "
                                           "and reported in the final table: play the agent never trained against (none: no such column)")
    # ---- league (--opponent league)
    league_rounds: int = option(200, "rounds per member when the league measures the learner for a snapshot")
    league_margin: float = option(0.05, "a snapshot is added when the learner wins at least a fair share plus this "
                                        "against the league's strongest frozen member")
    progress: bool = option(True, "show a progress bar (steps, steps/s, ETA, latest evaluation)")


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, every option checked; a bad one exits with a message naming it."""
    parser = dataclass_parser(Args, __doc__)
    args = Args(**vars(parser.parse_args(argv)))
    given = given_options(Args, argv)
    if args.resume:
        problem = resume_options(args, given)
        if problem:
            parser.error(problem)
    if "warm_start" not in given and (args.resume or args.critic == "hands"):
        args.warm_start = "none"  # the default warm start is for fresh runs of a critic of observations
    problem = check_args(args)
    if problem:
        parser.error(problem)
    return args


# What a checkpoint fixes: the network (and the game it reads).
FIXED_BY_CHECKPOINT = ("players", "net_arch", "scale_observations")
# The update's shape, targets and penalties, which a resume may change: they are handed to the loaded model, which
# builds its rollout buffer afresh for them.
UPDATE_SETTINGS = ("n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "clip_range", "ent_coef")


def resume_options(args: Args, given: set[str]) -> str | None:
    """--resume: every option not on the command line is the run's own (OUT/config.json), so a resumed run
    trains as before unless told otherwise; a setting the checkpoint fixes cannot be changed. Returns a problem or None."""
    earlier = run_config(args.out).get("options")
    if not isinstance(earlier, dict):
        return None  # no readable config.json (a checkpoint from elsewhere): the command line as given
    if "critic" in given and args.critic == "observation" and earlier.get("critic") == "hands":
        return f"--critic observation: the checkpoint in {args.out} has a hands critic, which a resumed run keeps"
    # --progress, --device, --threads and --precision are about this terminal and machine, not the run
    return inherit_options(args, earlier, given, FIXED_BY_CHECKPOINT, {"resume", "overwrite", "out", "progress", "device", "threads", "precision"}, args.out)


def resumed_update_settings(args: Args, argv: list[str], earlier_config: dict) -> dict:
    """The UPDATE_SETTINGS a resumed model takes: those given now or recorded in the run's earlier config.json. A
    checkpoint from elsewhere (no config.json) keeps its own unless told, rather than taking the defaults."""
    earlier = earlier_config.get("options")
    known = given_options(Args, argv) | (set(earlier) if isinstance(earlier, dict) else set())
    return {name: getattr(args, name) for name in UPDATE_SETTINGS if name in known}


def check_args(args: Args) -> str | None:
    """What is wrong with the options, or None."""
    positive = ("timesteps", "envs", "n_steps", "batch_size", "n_epochs", "checkpoint_every", "eval_rounds",
                "final_rounds", "league_rounds", "warm_start_decisions", "warm_start_epochs")
    for name in positive:
        if getattr(args, name) < 1:
            return f"--{name.replace('_', '-')} must be a positive integer, got {getattr(args, name)}"
    for spec in dataclasses.fields(Args):  # nan and inf pass every comparison below, or fail none
        value = getattr(args, spec.name)
        if isinstance(value, float) and not math.isfinite(value):
            return f"--{spec.name.replace('_', '-')} must be a finite number, got {value}"
    for name in ("eval_every", "threads"):
        if getattr(args, name) < 0:
            return f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}"
    if not 0 <= args.seed < SEED_LIMIT:  # numpy's (and so SB3's) seeding takes seeds below 2**32
        return f"--seed must be in [0, 2**32), got {args.seed}"
    try:
        check_num_players(args.players)
    except ValueError:
        return f"--players must be in [2, 10], got {args.players}"
    for name in ("learning_rate", "gamma", "gae_lambda", "clip_range"):
        if not 0 < getattr(args, name) <= 1:
            return f"--{name.replace('_', '-')} must be in (0, 1], got {getattr(args, name)}"
    if args.final_learning_rate is not None and not 0 <= args.final_learning_rate <= 1:
        return f"--final-learning-rate must be in [0, 1], got {args.final_learning_rate}"
    if not 0 <= args.league_margin < 1:
        return f"--league-margin must be in [0, 1), got {args.league_margin}"
    if args.ent_coef < 0:
        return f"--ent-coef must be >= 0, got {args.ent_coef}"
    try:
        layer_sizes(args.net_arch)
    except ValueError as error:
        return f"--net-arch {error}"
    problem = rules_problem(args.rule, args.rules)
    if problem:
        return problem
    try:
        mixture = opponent_mixture(args.opponent)
    except ValueError as error:
        return f"--opponent {args.opponent}: {error}"
    if mixture is None and args.opponent not in OPPONENT_CHOICES and args.opponent not in players.available() and not os.path.isfile(args.opponent):
        return (f"--opponent must be a player {players.available()}, self, league, an agent file "
                f"or a mixture like heuristic=3,random-play=1, got {args.opponent!r}")
    if args.recipe != "none" and args.recipe not in RECIPES:
        return f"--recipe must be none or one of {', '.join(RECIPES)}, got {args.recipe!r}"
    if args.device not in DEVICES:
        return f"--device must be one of {', '.join(DEVICES)}, got {args.device!r}"
    if args.device == "cuda" and not torch.cuda.is_available():
        return f"--device cuda: no CUDA device here (torch.cuda.is_available() is False with torch {torch.__version__}); use --device cpu or auto"
    try:
        training_precision(args.precision, training_device(args.device))  # the check's one home: agents/training/precision.py
    except ValueError as error:
        return str(error)
    if args.critic not in CRITICS:
        return f"--critic must be one of {', '.join(CRITICS)}, got {args.critic!r}"
    if args.critic == "hands" and args.warm_start != "none" and not args.resume:
        return ("--warm-start fits a critic of observations only: warm-start with --critic observation, "
                "then --resume with --critic hands")
    if args.warm_start != "none" and args.warm_start not in players.available() and not os.path.isfile(args.warm_start):
        return f"--warm-start must be none, a player {players.available()} or an agent file, got {args.warm_start!r}"
    if args.hold_out != "none" and args.hold_out not in players.BUILT_IN:
        return f"--hold-out must be a rule-based player {sorted(players.BUILT_IN)} or none, got {args.hold_out!r}"
    if args.hold_out == args.opponent or args.hold_out in (mixture or {}):
        where = "in the --opponent mixture" if mixture else "also the --opponent"
        return f"--hold-out {args.hold_out} is {where}: hold out another player, or none"
    if args.hold_out != "none" and args.hold_out == args.warm_start:
        return f"--hold-out {args.hold_out} is also the --warm-start teacher: hold out another player, or none"
    for flag, name in (*(("--opponent", name) for name in (mixture or {args.opponent: 1})), ("--warm-start", args.warm_start)):
        if name not in ("self", "league", "none"):
            try:  # loaded now, before anything is written, so a 4-player agent or a corrupt file is refused here
                players.load(name, num_players=args.players)
            except ValueError as error:
                return f"{flag} {name}: {error}"
    checkpoint = os.path.join(args.out, "checkpoint.zip")
    if args.resume and args.overwrite:
        return "--resume and --overwrite contradict each other: continue the run in --out, or start it over"
    if args.resume and not os.path.isfile(checkpoint):
        return f"--resume: no checkpoint at {checkpoint} (train without --resume to start a new run there)"
    if args.resume:  # checked before anything is rewritten
        try:
            checkpoint_state(args.out)
        except ValueError as error:
            return f"--resume: {error}"
        problem = logs_problem(args.out)
        if problem:
            return f"--resume: {problem}"
    earlier_run = [] if args.resume or args.overwrite else run_files(args.out)
    if earlier_run:
        what = checkpoint if os.path.isfile(checkpoint) else f"{args.out} ({', '.join(os.path.relpath(path, args.out) for path in earlier_run[:3])})"
        return (f"{what} already holds a run: pass --resume to continue it, --overwrite to start over "
                f"(replacing it), or choose another --out")
    return None


def opponent_mixture(opponent: str) -> dict | None:
    """--opponent NAME=WEIGHT,... as {name: weight}; None for a single opponent (no '=')."""
    if "=" not in opponent:
        return None
    weights = {}
    for part in opponent.split(","):
        name, _, weight = part.partition("=")
        name = name.strip()
        if name in ("self", "league"):
            raise ValueError(f"a mixture holds fixed players and agent files, not {name!r}")
        if name not in players.available() and not os.path.isfile(name):
            raise ValueError(f"{name!r} is neither a player {players.available()} nor an agent file")
        if name in weights:
            raise ValueError(f"{name!r} appears twice")
        try:
            weights[name] = float(weight)
        except ValueError:
            raise ValueError(f"the weight of {name!r} must be a number, got {weight!r}") from None
    check_weights(weights)
    return weights


def training_device(name: str) -> str:
    """--device as a torch device: auto is cuda when there is one, else cpu."""
    return ("cuda" if torch.cuda.is_available() else "cpu") if name == "auto" else name


def update_threads(threads: int) -> int:
    """--threads as a count: 0 is one per core this process may run on."""
    if threads:
        return threads
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def learning_rate(args: Args):
    """The step size: a constant, or a linear schedule over the run's --timesteps (SB3's progress_remaining)."""
    if args.final_learning_rate is None:
        return args.learning_rate
    return LinearSchedule(args.learning_rate, args.final_learning_rate, end_fraction=1.0)


RUN_FILES = ("checkpoint.zip", "checkpoint.json", "agent.safetensors", "config.json", "losses.csv", "evaluations.csv")
# What write_atomically leaves if the process is killed mid-write (never a valid file: removed at the next start).
TEMPORARY = re.compile(r"(checkpoint|config|losses|evaluations)\.tmp\.(zip|json|csv)")


def stale_temporaries(out: str) -> list[str]:
    try:
        names = sorted(os.listdir(out))
    except OSError:
        return []
    return [os.path.join(out, name) for name in names if TEMPORARY.fullmatch(name) and os.path.isfile(os.path.join(out, name))]


def run_files(out: str) -> list[str]:
    """The files a run of train.py wrote into ``out``: RUN_FILES, half-written temporaries, league snapshots,
    TensorBoard event files."""
    found = [os.path.join(out, name) for name in RUN_FILES if os.path.isfile(os.path.join(out, name))]
    found += stale_temporaries(out)
    for folder, pattern in (("league", re.compile(r"snapshot-\d+\.safetensors")), ("tensorboard", re.compile(r"events\.out\.tfevents\..*"))):
        try:
            names = sorted(os.listdir(os.path.join(out, folder)))
        except OSError:
            continue
        found += [os.path.join(out, folder, name) for name in names if pattern.fullmatch(name) and os.path.isfile(os.path.join(out, folder, name))]
    return found


def write_atomically(path: str, write) -> None:
    """``write(temporary_path)``, then rename over ``path``: a crash never leaves half a file at path."""
    root, extension = os.path.splitext(path)
    temporary = f"{root}.tmp{extension}"  # same folder, so os.replace is atomic; SB3 wants the .zip suffix
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def write_json(path: str, document: dict) -> None:
    def write(temporary):
        with open(temporary, "w") as file:
            json.dump(document, file, indent=2, default=str)
            file.write("\n")

    write_atomically(path, write)


CHECKPOINT_STATE = "hpuno_checkpoint.json"  # inside checkpoint.zip: its step count, wall seconds and league snapshots


def checkpoint_state(out: str) -> dict:
    """The state saved with OUT/checkpoint.zip, read from inside the zip (written into it before the one atomic
    rename, so the two never disagree), or for an older checkpoint from OUT/checkpoint.json; {} if neither has one.
    ValueError names the file and field of a corrupt one."""
    checkpoint, path = os.path.join(out, "checkpoint.zip"), os.path.join(out, "checkpoint.json")
    try:
        with zipfile.ZipFile(checkpoint) as archive:
            if CHECKPOINT_STATE in archive.namelist():
                if archive.getinfo(CHECKPOINT_STATE).file_size > 2**20:
                    raise ValueError(f"{checkpoint}: its {CHECKPOINT_STATE} is larger than a checkpoint's state can be")
                state, source = parse_json(archive.read(CHECKPOINT_STATE), f"{checkpoint} ({CHECKPOINT_STATE})"), checkpoint
            elif os.path.exists(path):
                state, source = read_json_file(path, "checkpoint state"), path
            else:
                return {}
    except (OSError, zipfile.BadZipFile) as error:
        raise ValueError(f"cannot read the checkpoint {checkpoint}: {error}") from None
    fields = {"timesteps": int, "wall_seconds": (int, float), "league_snapshots": list, "snapshots_added": int}
    if not isinstance(state, dict):
        raise ValueError(f"{source}: the checkpoint state must be a JSON object")
    for name, kind in fields.items():
        if name in state and (not isinstance(state[name], kind) or isinstance(state[name], bool)):
            raise ValueError(f"{source}: checkpoint state field {name!r} is {state[name]!r:.60}, not a {getattr(kind, '__name__', 'number')}")
    if not all(isinstance(name, str) and re.fullmatch(r"[A-Za-z0-9_.-]+", name) for name in state.get("league_snapshots", [])):
        raise ValueError(f"{source}: checkpoint state field 'league_snapshots' must list snapshot names")
    return state


def csv_problem(path: str, columns: list[str]) -> str | None:
    """Why a resumed run cannot append to the CSV log at path (another header), or None."""
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        return None
    with open(path, newline="") as file:
        header = next(csv.reader(file), [])
    if header != columns:
        return f"{path} has columns {header[:12]}, not {columns} (written by another train.py?): move it away to resume"
    return None


def logs_problem(out: str) -> str | None:
    return (csv_problem(os.path.join(out, "losses.csv"), LOSS_COLUMNS)
            or csv_problem(os.path.join(out, "evaluations.csv"), EVALUATION_COLUMNS))


def cut_logs(out: str, timesteps: int) -> None:
    """Drop the CSV logs' rows past the checkpoint's step count: steps trained after it (a run killed later) were
    lost with it, and their rows would make the step column go backwards once the resumed run logs them again."""
    for name in ("losses.csv", "evaluations.csv"):
        path = os.path.join(out, name)
        if not os.path.isfile(path):
            continue
        with open(path, newline="") as file:
            rows = list(csv.reader(file))
        kept = rows[:1] + [row for row in rows[1:] if row and _steps(row[0]) <= timesteps]
        if len(kept) < len(rows):
            def write(temporary, kept=kept):
                with open(temporary, "w", newline="") as file:
                    csv.writer(file).writerows(kept)

            write_atomically(path, write)


def _steps(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.inf  # a damaged row: dropped


class CsvLog:
    """Rows appended to a CSV file with fixed columns (a resumed run appends to its own file; a new run starts it over)."""

    def __init__(self, path: str, columns: list[str], append: bool):
        self.path, self.columns = path, columns
        if append and os.path.isfile(path) and os.path.getsize(path) > 0:
            problem = csv_problem(path, columns)  # also checked before the run starts (check_args)
            if problem:
                raise SystemExit(problem)
        else:
            with open(path, "w", newline="") as file:
                csv.writer(file).writerow(columns)

    def write(self, row: dict) -> None:
        with open(self.path, "a", newline="") as file:
            csv.writer(file).writerow([_csv_value(row.get(column)) for column in self.columns])


def _csv_value(value):
    if value is None:
        return ""
    return f"{value:.6g}" if isinstance(value, float) else value


class TimedVecEnv(VecEnvWrapper):
    """Adds up the seconds spent stepping the games (engine and opponents): the env share of a rollout."""

    def __init__(self, venv):
        super().__init__(venv)
        self.seconds = 0.0

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        started = time.perf_counter()
        result = self.venv.step_wait()
        self.seconds += time.perf_counter() - started
        return result


# What SB3's PPO update records as train/<name>, logged per iteration.
UPDATE_COLUMNS = ["loss", "policy_gradient_loss", "value_loss", "entropy_loss", "approx_kl", "clip_fraction", "explained_variance", "learning_rate"]
LOSS_COLUMNS = [
    "timesteps", "wall_seconds", "rollout_seconds", "env_seconds", "update_seconds", "steps_per_second",
    "train_win_rate", "ep_rew_mean", "ep_len_mean", *UPDATE_COLUMNS,
]
EVALUATION_COLUMNS = ["timesteps", "wall_seconds", "opponent", "win_rate", "low", "high", "rounds", "truncated", "mean_points"]


class Training(BaseCallback):
    """Everything that happens while MaskablePPO learns: progress bar, timing split, logs,
    periodic evaluation (and league snapshots), atomic checkpoints, stopping on Ctrl-C."""

    def __init__(self, args: Args, learner: TrainedAgent, curve_opponents: dict, league: League | None, timed_env: TimedVecEnv,
                 save_checkpoint, make_snapshot, wall_offset: float, rules: dict, evaluate_at_start: bool = False):
        super().__init__()
        self.args, self.learner, self.curve_opponents, self.league = args, learner, curve_opponents, league
        self.timed_env, self.save_checkpoint, self.make_snapshot, self.rules = timed_env, save_checkpoint, make_snapshot, rules
        self.losses = CsvLog(os.path.join(args.out, "losses.csv"), LOSS_COLUMNS, append=args.resume)
        self.evaluations = CsvLog(os.path.join(args.out, "evaluations.csv"), EVALUATION_COLUMNS, append=args.resume)
        self.started = time.perf_counter()
        self.wall_offset = wall_offset  # seconds the run had taken before PPO in this process (a resume, a warm start)
        self.evaluate_at_start = evaluate_at_start  # the learning curve's point at step 0 (after a warm start)
        self.stop_requested = False
        self.latest_evaluation: dict = {}
        # seconds spent in this process: rollouts (of which stepping the games), updates, evaluations
        self.rollout_seconds = self.env_seconds = self.update_seconds = self.eval_seconds = 0.0
        self.steps_trained = 0
        self.update_threads = update_threads(args.threads)
        self._phase, self._phase_started, self._env_at_start, self._eval_at_start, self._steps_at_start = None, 0.0, 0.0, 0.0, 0
        self._rollout, self._env = 0.0, 0.0

    def wall_seconds(self) -> float:
        return self.wall_offset + time.perf_counter() - self.started

    # ---- Ctrl-C: the first asks to stop after this step (checkpoint saved by main), a second aborts
    def request_stop(self, signum, frame) -> None:
        self.stop_requested = True
        signal.signal(signal.SIGINT, signal.default_int_handler)
        tqdm.write("\nCtrl-C: stopping after this step and saving a checkpoint (Ctrl-C again aborts without saving)")

    def _on_training_start(self) -> None:
        torch.set_num_threads(1)  # rollouts and evaluations; the update gets --threads (_on_rollout_end)
        self.next_checkpoint = self.num_timesteps + self.args.checkpoint_every
        every = self.args.eval_every
        self.next_evaluation = (self.num_timesteps // every + 1) * every if every else None
        # SB3 trains whole rollouts: the run ends at the first multiple of a rollout past --timesteps
        rollout = self.model.n_steps * self.training_env.num_envs
        end = self.num_timesteps + math.ceil(max(0, self.args.timesteps - self.num_timesteps) / rollout) * rollout
        self.bar = tqdm(total=end, initial=self.num_timesteps, unit="step", unit_scale=True, dynamic_ncols=True,
                        smoothing=0.05, disable=not self.args.progress, desc="training")
        if self.evaluate_at_start:
            self.evaluate()

    # ---- timing: a PPO iteration is a rollout (env + policy) then an update
    def _on_rollout_start(self) -> None:
        torch.set_num_threads(1)
        now = time.perf_counter()
        if self._phase == "update":
            self._end_iteration(now)
        self._phase, self._phase_started = "rollout", now
        self._env_at_start, self._eval_at_start, self._steps_at_start = self.timed_env.seconds, self.eval_seconds, self.num_timesteps

    def _on_rollout_end(self) -> None:
        now = time.perf_counter()
        self._rollout = now - self._phase_started - (self.eval_seconds - self._eval_at_start)
        self._env = self.timed_env.seconds - self._env_at_start
        self._phase, self._phase_started = "update", now
        torch.set_num_threads(self.update_threads)  # SB3's train() follows this callback

    def _end_iteration(self, now: float) -> None:
        """The update that just finished closes an iteration: add up its seconds and log its row."""
        update = now - self._phase_started
        steps = self.num_timesteps - self._steps_at_start
        self.rollout_seconds += self._rollout
        self.env_seconds += self._env
        self.update_seconds += update
        self.steps_trained += steps
        values = self.logger.name_to_value  # the update's losses, not yet dumped
        episodes = list(self.model.ep_info_buffer)
        row = {
            "timesteps": self.num_timesteps, "wall_seconds": self.wall_seconds(), "rollout_seconds": self._rollout,
            "env_seconds": self._env, "update_seconds": update, "steps_per_second": steps / max(self._rollout + update, 1e-9),
            "train_win_rate": float(np.mean([e["r"] > 0 for e in episodes])) if episodes else None,
            "ep_rew_mean": float(np.mean([e["r"] for e in episodes])) if episodes else None,
            "ep_len_mean": float(np.mean([e["l"] for e in episodes])) if episodes else None,
        }
        for column in UPDATE_COLUMNS:
            row[column] = values.get(f"train/{column}")
        self.losses.write(row)
        for key in ("rollout_seconds", "env_seconds", "update_seconds", "steps_per_second"):
            self.logger.record(f"time/{key}", row[key])
        if row["train_win_rate"] is not None:
            self.logger.record("rollout/train_win_rate", row["train_win_rate"])

    def _on_training_end(self) -> None:
        now = time.perf_counter()
        if self._phase == "update":  # learn() ended after an update
            self._end_iteration(now)
        elif self._phase == "rollout":  # stopped mid-rollout (Ctrl-C): count what was played
            self.rollout_seconds += now - self._phase_started - (self.eval_seconds - self._eval_at_start)
            self.env_seconds += self.timed_env.seconds - self._env_at_start
            self.steps_trained += self.num_timesteps - self._steps_at_start
        self._phase = None
        self.bar.close()

    # ---- every vector step
    def _on_step(self) -> bool:
        self.bar.update(self.training_env.num_envs)
        if self.next_evaluation is not None and self.num_timesteps >= self.next_evaluation:
            self.next_evaluation += self.args.eval_every
            self.evaluate()
        if self.num_timesteps >= self.next_checkpoint:
            self.next_checkpoint = self.num_timesteps + self.args.checkpoint_every
            self.save_checkpoint(self.wall_seconds())
        return not self.stop_requested

    def evaluate(self) -> None:
        """The learning curve's point (and, in a league, a snapshot if the learner has earned one)."""
        started = time.perf_counter()
        for name, opponent in self.curve_opponents.items():
            result = win_rate(self.learner, opponent, self.args.players, rounds=self.args.eval_rounds, seed=self.args.seed + 1000, **self.rules)
            self.latest_evaluation[name] = result["win_rate"]
            self.evaluations.write({"timesteps": self.num_timesteps, "wall_seconds": self.wall_seconds(), "opponent": name, **result})
            self.logger.record(f"eval/win_rate_{name}", result["win_rate"])
        if self.league is not None:
            verdict = self.league.consider_snapshot(self.learner, self.make_snapshot, rounds=self.args.league_rounds,
                                                    seed=self.args.seed + 2000, margin=self.args.league_margin, **self.rules)
            self.logger.record("league/snapshots", self.league.snapshots_added)
            if verdict["added"]:
                tqdm.write(f"league: {verdict['added']} added at {self.num_timesteps} steps (beat {verdict['strongest']} "
                           f"{verdict['results'][verdict['strongest']]['win_rate']:.1%})")
        self.bar.set_postfix_str("  ".join(f"{name} {rate:.0%}" for name, rate in self.latest_evaluation.items()))
        self.eval_seconds += time.perf_counter() - started


def evaluation_table(players: dict, opponents: dict, num_players: int, rounds: int, seed: int, rules: dict) -> dict:
    """{player: {opponent: win_rate result}}: each player in a rotating seat, the opponent in all the others."""
    return {
        row: {column: win_rate(player, opponent, num_players, rounds=rounds, seed=seed, **rules) for column, opponent in opponents.items()}
        for row, player in players.items()
    }


def format_table(table: dict, num_players: int) -> str:
    columns = list(next(iter(table.values())))
    width = max(len(row) for row in table) + 2
    lines = [f"{'':{width}s}" + "".join(f"{'vs ' + column:>22s}" for column in columns)]
    for row, results in table.items():
        cells = "".join(f"{r['win_rate']:7.1%} [{r['low']:5.1%}-{r['high']:5.1%}]".rjust(22) for r in results.values())
        lines.append(f"{row:{width}s}{cells}")
    lines.append(f"(win rate [95% interval]; a fair share is {1 / num_players:.0%})")
    return "\n".join(lines)


def run_config(out: str) -> dict:
    """A run's config.json as written by train.py, or {} if there is none or it cannot be read."""
    try:
        with open(os.path.join(out, "config.json")) as file:
            config = json.load(file)
    except (OSError, ValueError):
        return {}
    return config if isinstance(config, dict) else {}


def earlier_commands(config: dict) -> list[str]:
    """The commands that made a run's checkpoint so far, from its config ([] if it names none)."""
    return list(config.get("commands", [config["command"]] if "command" in config else []))


def resume_command(argv: list[str]) -> str:
    return shlex.join(["python", "train.py", *[a for a in argv if a not in ("--resume", "--no-resume")], "--resume"])


def run_recipe(args: Args, argv: list[str]) -> int:
    """--recipe: its stages, one train.py run each (the first fresh, the others resuming it), in this process."""
    recipe = recipe_for(args.recipe, args.players)
    given = {name: getattr(dataclass_parser(Args, None).parse_args(argv), name)  # as typed, before --resume fills in the rest
             for name in given_options(Args, argv) - {"recipe"}}
    given["players"] = args.players  # a resumed recipe's is its run's
    done = checkpoint_state(args.out).get("timesteps", 0) if args.resume else 0  # checked by parse_args
    stages = stage_options(recipe, given, done)
    started = time.time()
    for stage, options in stages:
        number = recipe.stages.index(stage) + 1
        stage_argv = command_line(options, Args)
        print(f"recipe {args.recipe}, stage {number} of {len(recipe.stages)} ({stage.name}): {shlex.join(['python', 'train.py', *stage_argv])}",
              flush=True)
        status = main(stage_argv, recipe={"name": args.recipe, "command": shlex.join(["python", "train.py", *argv]),
                                          "stage": number, "stages": [s.name for s in recipe.stages], "started": started})
        if status != 0:
            if status == 130:
                print(f"to go on with the recipe: {resume_command(argv)}", flush=True)
            return status
    print(f"recipe {args.recipe}: {len(stages)} stage(s) in {(time.time() - started) / 60:.1f} minutes of wall-clock", flush=True)
    return 0


def main(argv: list[str] | None = None, *, recipe: dict | None = None) -> int:
    """train.py; ``recipe``: the --recipe stage this run is (recorded in config.json and the agent file), if any."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.recipe != "none":
        return run_recipe(args, argv)
    threads = update_threads(args.threads)
    torch.set_num_threads(threads)  # the warm start's fit; the rollouts and evaluations switch to one (Training)
    device = training_device(args.device)
    precision = training_precision(args.precision, device)
    rules = rules_from_options(args.rule, args.rules)
    scale = observation_scale(args.players) if args.scale_observations else None

    # ---- output folder and config.json
    if args.overwrite:
        for path in run_files(args.out):  # only what train.py wrote: a user's own files there stay
            os.remove(path)
    try:
        os.makedirs(os.path.join(args.out, "league") if args.opponent == "league" else args.out, exist_ok=True)
    except OSError as error:  # e.g. under /proc, read-only, or --out names a file
        print(f"error: cannot create the output folder --out {args.out}: {error}", file=sys.stderr)
        return 2
    checkpoint_path = os.path.join(args.out, "checkpoint.zip")
    state_path = os.path.join(args.out, "checkpoint.json")
    for path in stale_temporaries(args.out):  # left by a process killed mid-write
        os.remove(path)
    state = checkpoint_state(args.out) if args.resume else {}  # checked by parse_args
    from importlib.metadata import version

    import stable_baselines3

    config = {
        "options": dataclasses.asdict(args), "rules_options": rules, "seed": args.seed, "command": shlex.join(["python", "train.py", *argv]),
        "commands": [shlex.join(["python", "train.py", *argv])],  # every command that made this checkpoint, oldest first
        "versions": {"hpuno-env": hpuno_env.__version__, "sb3-contrib": version("sb3-contrib"),
                     "stable-baselines3": stable_baselines3.__version__, "torch": torch.__version__, "numpy": np.__version__,
                     "python": platform.python_version()},
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "device": device, "precision": precision, "update_threads": threads,
        **({"recipe": recipe} if recipe else {}),
    }

    # ---- environment: the learner takes a random seat each round; opponents play inside the batch
    game_env = HPUnoVecEnv(num_envs=args.envs, num_players=args.players, learner_seat="random", seed=args.seed,
                           scale_observations=args.scale_observations, critic_sees_hands=args.critic == "hands", **rules)
    timed_env = TimedVecEnv(game_env)
    env = VecMonitor(timed_env)

    # ---- model: resume from the checkpoint, or start fresh
    if args.resume:
        earlier_config = run_config(args.out)  # this command writes its own config.json only after the model is loaded
        try:
            # the update's settings from the options (the run's own unless given now; SB3 rebuilds its schedules and
            # its rollout buffer, sized for this run's --envs, which may differ from the checkpoint's)
            model = MaskablePPO.load(checkpoint_path, device=device, learning_rate=learning_rate(args), n_envs=args.envs,
                                     **resumed_update_settings(args, argv, earlier_config))
            if needs_widening(model, env):  # observation fields added since it was made, or the hands for its critic
                old_observation, had_hands_critic = actor_inputs(model), isinstance(model.policy, HandsCriticPolicy)
                model = widened(model, env, learning_rate(args))
                if old_observation < actor_inputs(model):
                    print(f"the checkpoint read {old_observation}-entry observations; it goes on with today's layout "
                          f"(version {OBSERVATION_VERSION}, {actor_inputs(model)} entries), zero weights on the new fields")
                if not had_hands_critic and isinstance(model.policy, HandsCriticPolicy):
                    print("the critic now reads the other seats' hands too (actor and critic weights carried over)")
            else:
                model.set_env(env)  # checks the spaces: ValueError if they differ
        except ValueError as error:  # e.g. observation spaces differ (a checkpoint without config.json)
            first_line = str(error).splitlines()[0][:300]
            print(f"error: cannot resume {checkpoint_path} with these options: {first_line}", file=sys.stderr)
            return 2
        config["resumed_from_timesteps"] = model.num_timesteps
        config["commands"] = earlier_commands(earlier_config) + config["commands"]
        print(f"resumed from {checkpoint_path} at {model.num_timesteps} steps (opponent {args.opponent}; learning rate now "
              f"{model.lr_schedule(max(0.0, 1 - model.num_timesteps / args.timesteps)):.3g})")
        if model.num_timesteps >= args.timesteps:
            print(f"nothing to train: the checkpoint is at {model.num_timesteps} steps and --timesteps is {args.timesteps} "
                  f"(give a larger --timesteps to train on); evaluating and exporting it")
        if args.warm_start != "none":
            print(f"--warm-start {args.warm_start} ignored: the checkpoint holds the weights")
            config["options"]["warm_start"] = "none"  # config.json records what this command did
    else:
        hands_critic = args.critic == "hands"
        model = MaskablePPO(
            HandsCriticPolicy if hands_critic else "MlpPolicy", env, n_steps=args.n_steps,
            batch_size=min(args.batch_size, args.n_steps * args.envs), n_epochs=args.n_epochs,
            learning_rate=learning_rate(args), gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range,
            ent_coef=args.ent_coef, policy_kwargs={"net_arch": layer_sizes(args.net_arch),
                                                   **({"actor_inputs": observation_size(args.players)} if hands_critic else {})},
            seed=args.seed, device=device, verbose=0,
        )
    use_precision(model.policy, precision)  # before the warm start, which fits the same layers
    warm_start_seconds = 0.0
    if args.warm_start != "none" and not args.resume:
        started = time.perf_counter()
        try:
            print(f"warm start: fitting {args.warm_start}'s decisions ({args.warm_start_decisions}, {args.warm_start_epochs} epochs)", flush=True)
            report = warm_start(model, players.load(args.warm_start, num_players=args.players, seed=args.seed + 11), args.players,
                                decisions=args.warm_start_decisions, epochs=args.warm_start_epochs,
                                scale_observations=args.scale_observations, seed=args.seed + 12, **rules)
        except KeyboardInterrupt:  # nothing is trained or written yet: say so, without a traceback
            print(f"\ninterrupted during the warm start ({time.perf_counter() - started:.0f} s in): nothing was trained "
                  f"or saved in {args.out}; run the command again to start over", file=sys.stderr, flush=True)
            return 130
        warm_start_seconds = time.perf_counter() - started
        config["warm_start"] = {"teacher": args.warm_start, "seconds": warm_start_seconds, **report}
        print(f"warm start: agrees with {args.warm_start} on {report['agreement']:.1%} of {report['held_out_decisions']} decisions "
              f"of other games ({warm_start_seconds:.0f} s)", flush=True)
    model.set_logger(configure(os.path.join(args.out, "tensorboard"), ["tensorboard"]))
    write_json(os.path.join(args.out, "config.json"), config)

    # ---- opponents
    def learner_agent(deterministic: bool, seed: int | None = None) -> TrainedAgent:
        return live_agent(model, args.players, deterministic, seed=seed, observation_scale=scale)

    held_out = None if args.hold_out == "none" else args.hold_out
    mixture = opponent_mixture(args.opponent)
    league = None
    if args.opponent == "league":
        league = League(args.players, latest=learner_agent(False, args.seed + 1), held_out=held_out, seed=args.seed + 1)
        for name in state.get("league_snapshots", []):
            league.add_snapshot(TrainedAgent.load(os.path.join(args.out, "league", name + ".safetensors"), args.players, deterministic=False), name)
        league.snapshots_added = state.get("snapshots_added", 0)
        league.install(game_env)
    elif mixture is not None:
        Mixture(mixture, args.players, seed=args.seed + 1).install(game_env)
    elif args.opponent == "self":
        game_env.set_opponent(learner_agent(False, args.seed + 1))
    else:
        game_env.set_opponent(players.load(args.opponent, num_players=args.players, seed=args.seed + 1))

    def make_snapshot(name: str) -> TrainedAgent:
        path = os.path.join(args.out, "league", name + ".safetensors")
        export(model, path, num_players=args.players, rules_options=rules, observation_scale=scale, training={"league_snapshot": name})
        return TrainedAgent.load(path, args.players, seed=args.seed + model.num_timesteps, deterministic=False)

    def save_checkpoint(wall_seconds: float) -> None:
        snapshots = [m.name for m in league.members if m.group == "snapshots"] if league else []
        checkpoint = {"timesteps": model.num_timesteps, "wall_seconds": wall_seconds, "league_snapshots": snapshots,
                      "snapshots_added": league.snapshots_added if league else 0}

        def write(temporary: str) -> None:  # the state goes inside the zip: one rename replaces both together
            model.save(temporary)
            with zipfile.ZipFile(temporary, "a") as archive:
                archive.writestr(CHECKPOINT_STATE, json.dumps(checkpoint))

        write_atomically(checkpoint_path, write)
        write_json(state_path, checkpoint)  # a readable copy; --resume reads the one inside checkpoint.zip

    # ---- train: progress bar, logs, evaluations, checkpoints; Ctrl-C stops after the current step
    curve_opponents = {name: players.load(name, num_players=args.players, seed=args.seed + 7) for name in CURVE_OPPONENTS}
    if args.resume:
        cut_logs(args.out, model.num_timesteps)
    training = Training(args, learner_agent(True), curve_opponents, league, timed_env, save_checkpoint, make_snapshot,
                        wall_offset=state.get("wall_seconds", 0.0) + warm_start_seconds, rules=rules,
                        evaluate_at_start=warm_start_seconds > 0)
    signal.signal(signal.SIGINT, training.request_stop)
    remaining = max(0, args.timesteps - model.num_timesteps)
    print(f"training {remaining} steps: {args.players} players, {args.envs} games, opponent {args.opponent}, "
          f"critic {args.critic}, output {args.out}", flush=True)
    model.learn(remaining, callback=training, reset_num_timesteps=not args.resume, log_interval=1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    torch.set_num_threads(1)  # the final table
    save_checkpoint(training.wall_seconds())
    if training.stop_requested:
        print(f"interrupted at {model.num_timesteps} steps; checkpoint saved to {checkpoint_path}\n"
              f"resume with: {resume_command(argv)}", flush=True)
        return 130

    # ---- speed: learner steps per second end to end, split between rollout (env / policy) and update
    busy = training.rollout_seconds + training.update_seconds
    timing = {
        "steps": training.steps_trained, "rollout_seconds": training.rollout_seconds, "env_seconds": training.env_seconds,
        "update_seconds": training.update_seconds, "evaluation_seconds": training.eval_seconds,
        "steps_per_second": training.steps_trained / busy if busy else None,
        "warm_start_seconds": warm_start_seconds, "wall_seconds": training.wall_seconds(),
    }
    print(f"trained {model.num_timesteps} steps; saved {checkpoint_path}")
    if busy:
        print(f"learner steps/s: {timing['steps_per_second']:,.0f} end to end ({training.steps_trained} steps in {busy:.1f} s: "
              f"rollout {training.rollout_seconds / busy:.0%} [games {training.env_seconds / busy:.0%}, policy "
              f"{(training.rollout_seconds - training.env_seconds) / busy:.0%}], update {training.update_seconds / busy:.0%}; "
              f"evaluations took {training.eval_seconds:.1f} s more)")
        model.logger.record("time/learner_steps_per_second", timing["steps_per_second"])
        model.logger.dump(model.num_timesteps)

    # ---- the final table: this agent, the shipped champions and the heuristic, against the fixed players
    rows = {"this run": learner_agent(True)}
    for name in shipped_for(args.players, rules):  # the champions made for these games
        rows[name] = players.load(name, num_players=args.players, seed=args.seed, rules_options=rules)
    rows["heuristic"] = players.load("heuristic", num_players=args.players, seed=args.seed + 3)
    columns = [*FIXED_OPPONENTS, *([held_out] if held_out and held_out not in FIXED_OPPONENTS else [])]
    opponents = {name: players.load(name, num_players=args.players, seed=args.seed + 7) for name in columns}
    table = evaluation_table(rows, opponents, args.players, args.final_rounds, args.seed + 3000, rules)
    print(f"\nwin rate over {args.final_rounds} rounds per cell, {args.players} players, seats rotated"
          + (f" ({held_out} was held out of training)" if held_out else "") + ":")
    print(format_table(table, args.players))
    for column, result in table["this run"].items():  # the curve's last point (its only one with --eval-every 0)
        training.evaluations.write({"timesteps": model.num_timesteps, "wall_seconds": training.wall_seconds(), "opponent": column, **result})

    # ---- the agent: weights and JSON metadata, loadable without running code
    if recipe:  # the recipe's wall-clock so far, its warm start, stages and evaluations included
        config["recipe"]["wall_seconds"] = time.time() - recipe["started"]
    agent_path = os.path.join(args.out, "agent.safetensors")
    summary = {row: {column: {k: r[k] for k in ("win_rate", "low", "high", "rounds")} for column, r in cells.items()} for row, cells in table.items()}
    export(model, agent_path, num_players=args.players, rules_options=rules, observation_scale=scale,
           training={"command": config["command"], "commands": config["commands"], "config": config, "timing": timing}, evaluation={"rounds": args.final_rounds, "table": summary["this run"]})
    print(f"\nagent: {agent_path}  (agents.load({agent_path!r}, num_players={args.players}))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
