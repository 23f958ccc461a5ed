"""train.py's options: the ``Args`` dataclass (one field per command-line option, its help text beside it), what
--resume takes from the run's config.json, and the check of every option before anything is written.

``parse_args`` (agents.training.train) reads a command line into ``Args`` with these; the values that follow from
the options (the torch device, the update's thread count, the learning-rate schedule ``StepSize``, an opponent
mixture's weights) are computed here too, so each has one home. ``training_options`` slices checked ``Args`` into
small frozen dataclasses (``TrainingOptions``: run, PPO, warm start, opponents, evaluation), the only form in which
the options travel into the run.

The checks come in two steps: ``argument_problem`` needs nothing heavier than numpy, so a mistyped count, rules
option, player name or folder is refused in about half a second; ``loaded_problem`` then loads what the rest needs
(torch, the players and their files, the rules kernel), still before anything is written. This module imports
those only inside the functions that use them.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from agents._cli import given_options, inherit_options, layer_sizes, option, rules_problem
from agents.training.recipes import RECIPES, UNIVERSAL_RECIPE, recipe_for
from agents.training.run_folder import checkpoint_state, lock_problem, logs_problem, run_config, run_files
from hpuno_env._checks import SEED_LIMIT, check_finite, check_int, check_positive_int
from hpuno_env.cards import NUM_ACTIONS
from hpuno_env.options import check_num_players

FIXED_OPPONENTS = ("random", "random-play", "heuristic")  # names for agents.load
OPPONENT_CHOICES = (*FIXED_OPPONENTS, "self", "league")
CURVE_OPPONENTS = ("heuristic", "random-play")  # the learning curve's fixed yardsticks
CRITICS = ("observation", "hands")  # --critic
# A run seeds its parts with --seed plus offsets (the opponents +1, the warm start +11 and +13, the evaluations
# +1000 and +2000); the largest is the final table's, +3000. Every one must be a seed the engines take (< 2**32).
LARGEST_SEED_OFFSET = 3000
MAX_SEED = SEED_LIMIT - 1 - LARGEST_SEED_OFFSET
DEVICES = ("auto", "cpu", "cuda")  # --device
# Rounds in one evaluation at most (--eval-rounds, --final-rounds, --league-rounds; train_rllib.py's --eval-rounds):
# a million rounds is hours of play per opponent, and its per-round results a few hundred MB. More would fail, or
# run for days, after all the training.
MAX_EVALUATION_ROUNDS = 1_000_000
# Games stepped together in one engine at most (--envs; train_rllib.py's --games-per-runner): about 15 kB of game state
# each at 10 players, 240 MB for this many, before the observations and the rollout that grow with them.
MAX_ENGINE_GAMES = 16_384


@dataclass
class Args:
    # ---- the game and the run
    players: int = option(2, "seats per game (2..10)")
    recipe: str = option("none", "universal: one agent for every table (--tables). champion: train a strong agent from scratch in one command, in stages (agents/training/recipes.py: "
                                 "a warm start, PPO against the heuristic, then annealed against a mixture); the options given "
                                 "replace the recipe's (docs/training.md). none: this command's options only")
    tables: str = option("", "train one agent for every table: player counts separated by commas, e.g. 2,3,6, each a table of "
                             "--envs / (tables) games in the universal observation (agents/training/universal.py; "
                             "--recipe universal sets 2,3,4,5,6,8,10). Empty: one table of --players")
    house_tables: str = option("", "with --tables: also two tables of each of these player counts with every house rule on, "
                                   "one on each deck (hpuno_env.options.ALL_HOUSE_RULES; --recipe universal sets 2,4)")
    timesteps: int = option(300_000, "learner decisions to train for in all, rounded up to whole rollouts; a resumed run counts its checkpoint's")
    envs: int = option(128, "games stepped together in one engine (the learner plays one seat of each)")
    opponent: str = option("random", "who plays the other seats: random, random-play, heuristic, self (the live weights, "
                                     "sampling), league (agents/training/league.py: snapshots of the learner, heuristic, random-play "
                                     "and the live weights, drawn per game and seat), a saved agent file's path, or a mixture "
                                     "NAME=WEIGHT,NAME=WEIGHT of those players and files (each game's opponents all drawn from "
                                     "one of them with probability proportional to its weight: agents.training.league.Mixture). A universal "
                                     "run takes heuristic (its default) or league (agents/training/league.py: specialist_league)")
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
                                          "weights, with draw and keep made unlikely so that the untrained network plays a "
                                          "card when it can (the default run then wins a third of its rounds against the "
                                          "heuristic, and with the warm start a half: docs/training.md). Not done on --resume (the checkpoint holds the weights), nor, unless given, "
                                          "with --critic hands (it fits a critic of observations only)")
    warm_start_decisions: int = option(400_000, "decisions of the --warm-start player (playing every seat) to fit")
    warm_start_epochs: int = option(5, "passes over those decisions (Adam, lr 1e-3, minibatch 1024)")
    teachers: str = option("", "a universal run: TABLE=AGENT,... (e.g. 2=ppo_2p,4=ppo_4p): before PPO, fit the network to "
                               "these agents' decisions at those tables and, at the others, to the --warm-start player's (a new "
                               "run) or to its own greedy choices (--resume): --warm-start-decisions shared equally among "
                               "the tables. This command's only: a later --resume does not fit again")
    table_weights: str = option("", "a universal run: TABLE=WEIGHT,... (e.g. 8=3,10=3): --envs games shared among the tables "
                                    "in proportion to these weights, 1 for a table not named (empty: an equal share each)")
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


# What a checkpoint fixes: the network (and the game it reads).
FIXED_BY_CHECKPOINT = ("players", "net_arch", "scale_observations")
# The update's shape, targets and penalties, which a resume may change: they are handed to the loaded model, which
# builds its rollout buffer afresh for them.
UPDATE_SETTINGS = ("n_steps", "batch_size", "n_epochs", "gamma", "gae_lambda", "clip_range", "ent_coef")
# Options about this terminal and machine, not the run: a resumed run takes this command's, never the run's.
THIS_COMMAND = {"resume", "overwrite", "out", "progress", "device", "threads", "precision", "teachers"}
POSITIVE = ("timesteps", "envs", "n_steps", "batch_size", "n_epochs", "checkpoint_every", "eval_rounds",
            "final_rounds", "league_rounds", "warm_start_decisions", "warm_start_epochs")


def resume_options(args: Args, given: set[str]) -> str | None:
    """--resume: every option not on the command line is the run's own (OUT/config.json), so a resumed run
    trains as before unless told otherwise; a setting the checkpoint fixes cannot be changed. Returns a problem or None."""
    earlier = run_config(args.out).get("options")
    if not isinstance(earlier, dict):
        return None  # no readable config.json (a checkpoint from elsewhere): the command line as given
    if "critic" in given and args.critic == "observation" and earlier.get("critic") == "hands":
        return f"--critic observation: the checkpoint in {args.out} has a hands critic, which a resumed run keeps"
    return inherit_options(args, earlier, given, FIXED_BY_CHECKPOINT, THIS_COMMAND, args.out)


def resumed_update_settings(ppo: PPOOptions, given: frozenset, earlier_config: dict) -> dict:
    """The UPDATE_SETTINGS a resumed model takes: those ``given`` now or recorded in the run's earlier config.json. A
    checkpoint from elsewhere (no config.json) keeps its own unless told, rather than taking the defaults."""
    earlier = earlier_config.get("options")
    known = given | (set(earlier) if isinstance(earlier, dict) else set())
    return {name: value for name, value in ppo.update_settings().items() if name in known}


def check_args(args: Args) -> str | None:
    """What is wrong with the options (the first problem found), or None: ``argument_problem``, then
    ``loaded_problem``."""
    return argument_problem(args) or loaded_problem(args)


def argument_problem(args: Args) -> str | None:
    """The checks that need no network, player, kernel or torch (module docstring), or None."""
    for check in (_numbers_problem, _choices_problem, _names_problem, _folder_problem):
        problem = check(args)
        if problem:
            return problem
    return None


def loaded_problem(args: Args) -> str | None:
    """The checks that load torch, the players or the rules kernel: the network's size, the device and precision,
    the opponents and the warm-start teacher (each loaded for these games). None when all is well."""
    for check in (_network_problem, _device_problem, _loading_problem):
        problem = check(args)
        if problem:
            return problem
    return None


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _numbers_problem(args: Args) -> str | None:
    """Counts, seeds, rates and the layer sizes' form out of range (hpuno_env._checks: the messages of every other tool)."""
    try:
        for name in POSITIVE:
            check_positive_int(getattr(args, name), _flag(name))
        for spec in dataclasses.fields(Args):  # nan and inf pass every comparison below, or fail none
            value = getattr(args, spec.name)
            if isinstance(value, float):
                check_finite(value, _flag(spec.name))
        for name in ("eval_rounds", "final_rounds", "league_rounds"):
            check_int(getattr(args, name), _flag(name), high=MAX_EVALUATION_ROUNDS)
        check_int(args.envs, "--envs", high=MAX_ENGINE_GAMES)
        check_int(args.eval_every, "--eval-every", low=0)
    except ValueError as error:
        return str(error)
    problem = threads_problem(args.threads, "--threads", "0: one per core")
    if problem:
        return problem
    try:
        check_int(args.seed, "--seed", low=0, high=MAX_SEED)
    except ValueError as error:
        return f"{error} (the run seeds its parts with up to --seed + {LARGEST_SEED_OFFSET}, and seeds are below 2**32)"
    try:
        check_num_players(args.players)
    except ValueError:
        return f"--players must be in [2, 10], got {args.players}"
    try:
        for name in ("learning_rate", "gamma", "gae_lambda", "clip_range"):
            check_finite(getattr(args, name), _flag(name), low=0, high=1, low_open=True)
        if args.final_learning_rate is not None:
            check_finite(args.final_learning_rate, "--final-learning-rate", low=0, high=1)
    except ValueError as error:
        return str(error)
    if not 0 <= args.league_margin < 1:
        return f"--league-margin must be in [0, 1), got {args.league_margin}"
    if args.ent_coef < 0:
        return f"--ent-coef must be >= 0, got {args.ent_coef}"
    try:
        layer_sizes(args.net_arch)
    except ValueError as error:
        return f"--net-arch {error}"
    return None


def _network_problem(args: Args) -> str | None:
    return network_problem(layer_sizes(args.net_arch), args.players, "--net-arch")


def network_problem(sizes: list[int], num_players: int, flag: str) -> str | None:
    """Why hidden layers of ``sizes`` (the option ``flag``) make a network that an agent file cannot hold
    (agents.load would refuse the exported agent, after all the training), or None: the loader's bounds on layers,
    layer size and the actor's parameters."""
    from agents.players.trained import MAX_HIDDEN_LAYERS, MAX_LAYER_SIZE, MAX_PARAMETERS
    from hpuno_env.encoding import observation_size

    if len(sizes) > MAX_HIDDEN_LAYERS or max(sizes) > MAX_LAYER_SIZE:
        return (f"{flag} must be at most {MAX_HIDDEN_LAYERS} hidden layers of at most {MAX_LAYER_SIZE} units "
                f"(what an agent file may hold), got {','.join(map(str, sizes))}")
    width = observation_size(num_players)
    parameters = 2 * width  # the agent's observation scale and shift
    for size in (*sizes, NUM_ACTIONS):
        parameters += (width + 1) * size
        width = size
    if parameters > MAX_PARAMETERS:
        return (f"{flag} {','.join(map(str, sizes))} makes an actor of {parameters:,} parameters for {num_players} "
                f"players; an agent file holds at most {MAX_PARAMETERS:,}")
    return None


def _choices_problem(args: Args) -> str | None:
    """Rules, recipe, device, critic and the universal run's options: each one of its choices."""
    problem = rules_problem(args.rule, args.rules)
    if problem:
        return problem
    if args.house_tables and not (args.tables or args.recipe == "universal"):
        return "--house-tables adds tables to a universal run: give --tables too (or --recipe universal)"
    if args.teachers and not (args.tables or args.recipe == "universal"):
        return "--teachers names teachers of a universal run's tables: give --tables too (or --recipe universal)"
    if args.table_weights and not (args.tables or args.recipe == "universal"):
        return "--table-weights weighs a universal run's tables: give --tables too (or --recipe universal)"
    if args.recipe != "none" and args.recipe not in (*RECIPES, UNIVERSAL_RECIPE):
        return f"--recipe must be none or one of {', '.join((*RECIPES, UNIVERSAL_RECIPE))}, got {args.recipe!r}"
    if args.recipe not in ("none", UNIVERSAL_RECIPE):
        largest = MAX_SEED - (len(recipe_for(args.recipe, args.players).stages) - 1)
        if args.seed > largest:  # stage k runs with --seed + k
            return f"--seed must be at most {largest} with --recipe {args.recipe} (its stage k runs with --seed + k), got {args.seed}"
    if args.device not in DEVICES:
        return f"--device must be one of {', '.join(DEVICES)}, got {args.device!r}"
    if args.critic not in CRITICS:
        return f"--critic must be one of {', '.join(CRITICS)}, got {args.critic!r}"
    if args.critic == "hands" and args.warm_start != "none" and not args.resume:
        return ("--warm-start fits a critic of observations only: warm-start with --critic observation, "
                "then --resume with --critic hands")
    return None


def _device_problem(args: Args) -> str | None:
    """--device cuda without a CUDA device, or a --precision this device cannot run."""
    import torch

    from agents.training.precision import training_precision

    if args.device == "cuda" and not torch.cuda.is_available():
        return f"--device cuda: no CUDA device here (torch.cuda.is_available() is False with torch {torch.__version__}); use --device cpu or auto"
    try:
        training_precision(args.precision, training_device(args.device))  # the check's one home: agents/training/precision.py
    except ValueError as error:
        return str(error)
    return None


def _names_problem(args: Args) -> str | None:
    """The opponent, the warm-start teacher and the held-out player: known names or files, and distinct."""
    from agents import players  # its names and files, not yet its players

    try:
        mixture = opponent_mixture(args.opponent)
    except ValueError as error:
        return f"--opponent {args.opponent}: {error}"
    if mixture is None and args.opponent not in OPPONENT_CHOICES and args.opponent not in players.available() and not os.path.isfile(args.opponent):
        return (f"--opponent must be a player {players.available()}, self, league, an agent file "
                f"or a mixture like heuristic=3,random-play=1, got {args.opponent!r}")
    if args.warm_start != "none" and args.warm_start not in players.available() and not os.path.isfile(args.warm_start):
        return f"--warm-start must be none, a player {players.available()} or an agent file, got {args.warm_start!r}"
    if args.hold_out != "none" and args.hold_out not in players.BUILT_IN:
        return f"--hold-out must be a rule-based player {sorted(players.BUILT_IN)} or none, got {args.hold_out!r}"
    if args.hold_out == args.opponent or args.hold_out in (mixture or {}):
        where = "in the --opponent mixture" if mixture else "also the --opponent"
        return f"--hold-out {args.hold_out} is {where}: hold out another player, or none"
    if args.hold_out != "none" and args.hold_out == args.warm_start:
        return f"--hold-out {args.hold_out} is also the --warm-start teacher: hold out another player, or none"
    return None


def _loading_problem(args: Args) -> str | None:
    """The opponents and the warm-start teacher, each loaded for these games (names checked by _names_problem)."""
    from agents import players

    for flag, name in (*(("--opponent", name) for name in (opponent_mixture(args.opponent) or {args.opponent: 1})),
                       ("--warm-start", args.warm_start)):
        if name not in ("self", "league", "none"):
            try:  # loaded now, before anything is written, so a 4-player agent or a corrupt file is refused here
                players.load(name, num_players=args.players)
            except ValueError as error:
                return f"{flag} {name}: {error}"
    return None


def _folder_problem(args: Args) -> str | None:
    """--out: a checkpoint to resume (readable, its logs ours), or no earlier run unless --overwrite."""
    checkpoint = os.path.join(args.out, "checkpoint.zip")
    problem = lock_problem(args.out)  # first: the files another run is writing say nothing about this one
    if problem:
        return problem
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
        return (f"{what} already holds a run\n"
                f"pass --resume to continue it, --overwrite to start over (replacing it), or choose another --out")
    return None


def opponent_mixture(opponent: str) -> dict | None:
    """--opponent NAME=WEIGHT,... as {name: weight}; None for a single opponent (no '=')."""
    if "=" not in opponent:
        return None
    from agents import players
    from agents.training.league import check_weights

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
    import torch

    return ("cuda" if torch.cuda.is_available() else "cpu") if name == "auto" else name


def usable_cpus() -> int:
    """The CPU cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def threads_problem(threads: int, flag: str, zero: str | None = None) -> str | None:
    """Why ``threads`` (the option ``flag``) is not a thread count for this machine, or None: at most one per usable
    core (more only contend for them; a huge count would try to start that many threads). ``zero``: what 0 means,
    if it is allowed."""
    cores = usable_cpus()
    try:
        check_int(threads, flag, low=0 if zero else 1, high=cores)
    except ValueError as error:
        return f"{error} (one thread per core this process may use{'; ' + zero if zero else ''})"
    return None


def update_threads(threads: int) -> int:
    """--threads as a count: 0 is one per core this process may run on."""
    return threads or usable_cpus()


def learning_rate(ppo: PPOOptions):
    """The step size: a constant, or ``StepSize`` over the run's --timesteps (SB3's progress_remaining)."""
    if ppo.final_learning_rate is None:
        return ppo.learning_rate
    return StepSize(ppo.learning_rate, ppo.final_learning_rate, ppo.anneal_from)


class StepSize:
    """The step as a function of SB3's progress_remaining (1 - steps / --timesteps): ``start`` for the first
    ``anneal_from`` of the run, then linear to ``final`` at its end, and ``final`` past it. SB3 sets it before
    every update."""

    def __init__(self, start: float, final: float, anneal_from: float = 0.0):
        self.start, self.final, self.anneal_from = start, final, anneal_from

    def __call__(self, progress_remaining: float) -> float:
        done = ((1 - progress_remaining) - self.anneal_from) / (1 - self.anneal_from)
        if done > 1:
            return self.final
        return self.start + max(0.0, done) * (self.final - self.start)


# ---- the options in slices: what each part of a run reads, built from Args in one place (training_options)

@dataclass(frozen=True)
class RunOptions:
    """The run itself: its folder and seed, the games of one table (``players``, ``envs``), its length and
    checkpoints, the machine's settings, and the command line as typed (``given``) and recorded (``recorded``)."""

    out: str
    seed: int
    players: int
    envs: int
    timesteps: int
    resume: bool
    checkpoint_every: int
    rules: dict
    device: str
    threads: int
    precision: str
    progress: bool
    given: frozenset
    recorded: dict  # every option, as config.json records them


@dataclass(frozen=True)
class PPOOptions:
    """The network and PPO's update; ``anneal_from``: the share of the run before the step anneals (StepSize)."""

    learning_rate: float
    final_learning_rate: float | None
    n_steps: int
    batch_size: int
    n_epochs: int
    gamma: float
    gae_lambda: float
    clip_range: float
    ent_coef: float
    net_arch: str
    critic: str
    scale_observations: bool
    anneal_from: float = 0.0

    def update_settings(self) -> dict:
        """UPDATE_SETTINGS by name: what a resumed model may take."""
        return {name: getattr(self, name) for name in UPDATE_SETTINGS}


@dataclass(frozen=True)
class WarmStartOptions:
    """The fit before PPO: the --warm-start player, its decisions and passes, and a universal run's --teachers."""

    teacher: str
    decisions: int
    epochs: int
    teachers: str


@dataclass(frozen=True)
class OpponentOptions:
    """Who plays the other seats, the player held out of training, and the league's snapshot rule."""

    opponent: str
    hold_out: str
    league_rounds: int
    league_margin: float


@dataclass(frozen=True)
class EvaluationOptions:
    """The learning curve's points (every ``every`` steps, ``rounds`` rounds) and the final evaluation's rounds."""

    every: int
    rounds: int
    final_rounds: int


@dataclass(frozen=True)
class TrainingOptions:
    """A checked command's options in slices, each handed only to the parts that read it."""

    run: RunOptions
    ppo: PPOOptions
    warm_start: WarmStartOptions
    opponents: OpponentOptions
    evaluation: EvaluationOptions


def training_options(args: Args, argv: list[str], anneal_from: float = 0.0) -> TrainingOptions:
    """The slices of checked ``args`` (``argv``: the command line they came from, for what was typed)."""
    from agents._cli import rules_from_options

    run = RunOptions(out=args.out, seed=args.seed, players=args.players, envs=args.envs, timesteps=args.timesteps,
                     resume=args.resume, checkpoint_every=args.checkpoint_every, rules=rules_from_options(args.rule, args.rules),
                     device=args.device, threads=args.threads, precision=args.precision, progress=args.progress,
                     given=frozenset(given_options(Args, argv)), recorded=dataclasses.asdict(args))
    ppo = PPOOptions(**{field.name: getattr(args, field.name) for field in dataclasses.fields(PPOOptions)
                        if field.name != "anneal_from"}, anneal_from=anneal_from)
    return TrainingOptions(
        run=run, ppo=ppo,
        warm_start=WarmStartOptions(args.warm_start, args.warm_start_decisions, args.warm_start_epochs, args.teachers),
        opponents=OpponentOptions(args.opponent, args.hold_out, args.league_rounds, args.league_margin),
        evaluation=EvaluationOptions(args.eval_every, args.eval_rounds, args.final_rounds))
