"""Train Harry Potter UNO by self-play with Ray RLlib's PPO (action masking), on a laptop or a Ray cluster.

    pip install -e ".[rllib]"
    python train_rllib.py                                     # local Ray, 2 env runners, 2 players (runs/rllib)
    python train_rllib.py --league 3 --out runs/rllib_league  # a learner against 3 frozen snapshots of itself
    python train_rllib.py --iterations 200 --resume           # continue runs/rllib to 200 iterations in all
    python train_rllib.py --help                              # every option and its default

On a running Ray cluster (``ray start`` on every machine: docs/training.md), add
``--address auto`` and as many runners as it has CPUs to spare, e.g.
``--runners 98 --games-per-runner 128``.

Reads top to bottom: options (the ``Args`` dataclass), Ray (local, or the
cluster at ``--address``), the PPO config (``agents.training.rllib_learner.ppo_config``:
``--runners`` env runner processes, each stepping ``--games-per-runner`` games in
one engine, one shared policy at every seat or ``--league`` frozen snapshots
against the learner), the training loop (one line per iteration: env steps,
steps/s, mean round length, losses), then the trained policy's win rates,
played greedily against the random and heuristic players.

The RLlib checkpoint is ``OUT/checkpoint`` (``Algorithm.from_checkpoint(path)``
restores it), written every ``--checkpoint-every`` iterations, at the end, and
on Ctrl-C, each time atomically (a new folder beside it, then swapped in), with
``progress.json`` inside: the iterations, env steps and training seconds done
(summed over resumes) and the options. ``--resume``
continues it up to ``--iterations`` in all, with the run's own options unless
given anew (those that shape the network cannot change).

Bounds: the options are checked before Ray, torch or the rules kernel load, and
a bad one is refused with one line (exit status 2). Besides the ranges, a run
may ask for at most MAX_RUNNERS runners, MAX_LEARNERS learners, a league of
MAX_LEAGUE snapshots, MAX_TRAIN_BATCH env steps an iteration, train.py's bounds
on games in one engine (``--games-per-runner``), on an evaluation's rounds and
on the network (``--hidden``, as ``--net-arch``), and ``--threads`` up to the
cores this process may use. A local run (no ``--address``) may not ask for more
CPUs (runners, and learners without GPUs) than this machine has, nor, once Ray
has started, than Ray found: RLlib would wait for them for ever. On a cluster,
nodes may join: the run says what it waits for.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import json
import math
import os
import shutil
import sys
import threading
import time
from dataclasses import dataclass

from agents._cli import (
    dataclass_parser, error_lines, exit_with_error, given_options, inherit_options, layer_sizes, option, rules_from_options, rules_problem,
)
from agents.training.options import MAX_ENGINE_GAMES, MAX_EVALUATION_ROUNDS, network_problem, threads_problem
from hpuno_env._checks import SEED_LIMIT
from hpuno_env._output import folder_problem
from hpuno_env.options import check_num_players

RAY_MISSING = 'train_rllib.py needs Ray RLlib, which is not installed: pip install -e ".[rllib]"'
# Bounds (module docstring, "Bounds"); the games per runner and the evaluation's rounds are train.py's.
MAX_RUNNERS = 4096  # env runner processes: one CPU each, so a cluster of 4,096 CPUs
MAX_LEARNERS = 256  # learner processes
MAX_LEAGUE = 64  # frozen snapshots, each a network in the learner and in every runner
MAX_TRAIN_BATCH = 4_194_304  # env steps sampled per iteration, held in memory for the update


@dataclass
class Args:
    # ---- the game and the run
    players: int = option(2, "seats per game (2..10)")
    iterations: int = option(20, "PPO iterations (each samples --train-batch env steps, then updates)")
    rule: tuple[str, ...] = option((), "a rules option NAME=VALUE, repeatable, e.g. --rule uno_penalty=4 (the syntax of "
                                       "train.py, the tournament and agents.play)")
    rules: str = option("{}", 'the same rules options as one JSON object (an alias of --rule), e.g. \'{"uno_penalty": 4}\'')
    seed: int = option(0, "seeds the games and the networks")
    out: str = option("runs/rllib", "folder for the run (its RLlib checkpoint is OUT/checkpoint)")
    resume: bool = option(False, "continue the checkpoint in --out (an error if there is none); every option not given "
                                 "is the run's own, and those that shape the networks cannot change")
    overwrite: bool = option(False, "start a new run in an --out that holds a checkpoint: it is deleted first (without "
                                    "this, such a run is refused)")
    checkpoint_every: int = option(10, "iterations between checkpoints (0: only at the end and on Ctrl-C)")
    # ---- Ray
    address: str = option("", 'Ray cluster to join ("auto": the one this machine belongs to); empty: start Ray locally')
    runners: int = option(2, "env runner processes, one CPU each (0: sample in this process)")
    games_per_runner: int = option(64, "games each runner steps together (one engine call per step)")
    batched: bool = option(True, "each runner's games in one engine (HPUnoEnvRunner); --no-batched: RLlib's "
                                 "SyncVectorMultiAgentEnv over one-game copies")
    # ---- self-play
    league: int = option(0, "0: one policy plays every seat; K > 0: a learner against K frozen snapshots of itself")
    snapshot_every: int = option(5, "with --league: iterations between refreshing the oldest snapshot with the learner")
    # ---- PPO
    train_batch: int = option(8192, "env steps (decisions) sampled per iteration, over all runners")
    minibatch: int = option(1024, "minibatch size of the update")
    epochs: int = option(4, "passes over each batch in the update")
    lr: float = option(3e-4, "Adam step size")
    entropy_coeff: float = option(0.01, "entropy bonus")
    gamma: float = option(0.99, "discount per decision (train.py's --gamma)")
    gae_lambda: float = option(0.8, "GAE lambda (train.py's --gae-lambda)")
    clip_range: float = option(0.2, "PPO clip range (train.py's --clip-range)")
    hidden: str = option("256,256", "hidden layer sizes of the policy and value networks, comma-separated")
    scale_observations: bool = option(True, "multiply observations by hpuno_env.encoding.observation_scale (each entry to about [0, 1])")
    threads: int = option(1, "torch threads of the learner in this process (runners get one each from Ray)")
    learners: int = option(0, "learner processes, each updating on its share of every batch (RLlib's num_learners; "
                              "one CPU each, or --learner-gpus); 0: the learner runs in this process")
    learner_gpus: float = option(0.0, "GPUs per learner (RLlib's num_gpus_per_learner; 0: CPU)")
    # ---- evaluation
    eval_rounds: int = option(1000, "rounds against each of random and heuristic at the end (0: none)")


CHECKPOINT = "checkpoint"  # OUT/CHECKPOINT: the RLlib checkpoint
PROGRESS = "progress.json"  # inside it: {"iterations", "env_steps", "seconds": done so far, "options": the run's Args}
FIXED_BY_CHECKPOINT = ("players", "league", "hidden", "scale_observations")  # the networks a checkpoint holds


def checkpoint_to_resume(out: str) -> str | None:
    """OUT/checkpoint, or the previous one if a crash came between the two renames of ``save_checkpoint``."""
    for path in (os.path.join(out, CHECKPOINT), os.path.join(out, CHECKPOINT + ".old")):
        if os.path.isfile(os.path.join(path, PROGRESS)):
            return path
    return None


def read_progress(checkpoint: str) -> dict:
    with open(os.path.join(checkpoint, PROGRESS)) as file:
        return json.load(file)


def save_checkpoint(algo, args: Args, done: dict) -> str:
    """Write OUT/checkpoint atomically: the new one is written beside it, then swapped in, so a crash
    at any moment leaves a whole checkpoint (the old or the new) for --resume."""
    final = os.path.join(os.path.abspath(args.out), CHECKPOINT)
    new, old = final + ".new", final + ".old"
    shutil.rmtree(new, ignore_errors=True)
    algo.save_to_path(new)
    with open(os.path.join(new, PROGRESS), "w") as file:
        json.dump({**done, "options": dataclasses.asdict(args)}, file, indent=2)
    shutil.rmtree(old, ignore_errors=True)
    if os.path.exists(final):
        os.replace(final, old)
    os.replace(new, final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def resume_options(args: Args, given: set[str]) -> str | None:
    """--resume: every option not given is the run's own; one that shapes the networks cannot change."""
    checkpoint = checkpoint_to_resume(args.out)
    if checkpoint is None:
        return f"--resume: no checkpoint in {os.path.join(args.out, CHECKPOINT)} (train without --resume to start one)"
    return inherit_options(args, read_progress(checkpoint)["options"], given, FIXED_BY_CHECKPOINT,
                           {"resume", "overwrite", "out", "address"}, args.out)


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line; a bad value exits (status 2) with a line naming it, before Ray, torch or the rules
    kernel load (only --hidden's size check loads torch and the kernel, to count the network's parameters)."""
    parser = dataclass_parser(Args, __doc__)
    ray_installed = importlib.util.find_spec("ray") is not None
    if not ray_installed:
        parser.epilog = RAY_MISSING
    args = Args(**vars(parser.parse_args(argv)))
    if not ray_installed:
        parser.exit(2, f"error: {RAY_MISSING}\n")
    problem = resume_options(args, given_options(Args, sys.argv[1:] if argv is None else argv)) if args.resume else None
    problem = (problem or _numbers_problem(args) or _resources_problem(args) or _folder_problem(args)
               or rules_problem(args.rule, args.rules) or _network_problem(args))
    if problem:
        exit_with_error(parser, problem)
    return args


def _numbers_problem(args: Args) -> str | None:
    """Counts, rates and the seed out of range."""
    for spec in dataclasses.fields(Args):  # nan and inf pass the range checks below, or fail none
        value = getattr(args, spec.name)
        if isinstance(value, float) and not math.isfinite(value):
            return f"--{spec.name.replace('_', '-')} must be a finite number, got {value}"
    if not 0 <= args.seed < SEED_LIMIT:
        return f"--seed must be in [0, 2**32), got {args.seed}"
    for name in ("iterations", "games_per_runner", "train_batch", "minibatch", "epochs", "snapshot_every"):
        if getattr(args, name) < 1:
            return f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}"
    for name in ("runners", "league", "eval_rounds", "checkpoint_every", "learners", "learner_gpus"):
        if getattr(args, name) < 0:
            return f"--{name.replace('_', '-')} must be at least 0, got {getattr(args, name)}"
    try:
        check_num_players(args.players)
    except ValueError:
        return f"--players must be in [2, 10], got {args.players}"
    if not 0 < args.lr <= 1:
        return f"--lr must be in (0, 1], got {args.lr}"
    if args.entropy_coeff < 0:
        return f"--entropy-coeff must be >= 0, got {args.entropy_coeff}"
    for name in ("gamma", "gae_lambda", "clip_range"):  # as train.py checks them
        if not 0 < getattr(args, name) <= 1:
            return f"--{name.replace('_', '-')} must be in (0, 1], got {getattr(args, name)}"
    return None


def _resources_problem(args: Args) -> str | None:
    """What a run may ask for (module docstring, "Bounds"): refused at once, instead of a start that waits for CPUs
    that never come or allocates without end."""
    for name, largest in (("runners", MAX_RUNNERS), ("learners", MAX_LEARNERS), ("league", MAX_LEAGUE),
                          ("games_per_runner", MAX_ENGINE_GAMES), ("train_batch", MAX_TRAIN_BATCH),
                          ("eval_rounds", MAX_EVALUATION_ROUNDS)):
        if getattr(args, name) > largest:
            return f"--{name.replace('_', '-')} must be at most {largest:,}, got {getattr(args, name):,}"
    if args.minibatch > args.train_batch:
        return f"--minibatch must be at most --train-batch ({args.train_batch}), got {args.minibatch}"
    problem = threads_problem(args.threads, "--threads")
    if problem:
        return problem
    cpus = os.cpu_count() or 1  # the most a Ray started here can have
    needed = args.runners + (args.learners if not args.learner_gpus else 0)
    if not args.address and needed > cpus:
        return (f"--runners {args.runners} and --learners {args.learners} need {needed} CPUs and this machine has {cpus}: "
                f"a local Ray would wait for them for ever (give fewer, or --address to join a cluster)")
    return None


def _folder_problem(args: Args) -> str | None:
    """--out: usable, and a new run there does not replace a checkpoint unless told to."""
    if args.resume and args.overwrite:
        return "--resume and --overwrite contradict each other: continue the run in --out, or start it over"
    if not args.resume and not args.overwrite and checkpoint_to_resume(args.out):  # a new run would replace it
        return (f"--out {args.out} already holds a checkpoint: --resume continues it, --overwrite starts over "
                f"(deleting it), or give another --out")
    problem = folder_problem(args.out)
    return f"--out: {problem}" if problem else None  # found now, not after the iterations


def _network_problem(args: Args) -> str | None:
    """--hidden: layer sizes, within train.py's bound on networks (agents.training.options.network_problem)."""
    try:
        sizes = layer_sizes(args.hidden)
    except ValueError as error:
        return f"--hidden {error}"
    return network_problem(sizes, args.players, "--hidden")


@contextlib.contextmanager
def phase(what: str):
    """Say what a long wait of the start is, then how long it took."""
    print(f"{what} ...", flush=True)
    started = time.perf_counter()
    yield
    print(f"  done in {time.perf_counter() - started:.0f} s", flush=True)


def start_ray(args: Args, ray) -> bool | None:
    """Start Ray here, or join the cluster at --address, unless this process already runs one (a notebook's): whether
    this command started it (and so stops it at the end), or None, having said why, when there is no cluster to join."""
    if ray.is_initialized():
        return False
    where = f"joining the Ray cluster at {args.address}" if args.address else "starting Ray on this machine"
    with phase(f"{where} (5-60 s)"):
        try:
            ray.init(address=args.address or None, include_dashboard=False)
        except ConnectionError as error:
            problem = (f"--address {args.address}: no Ray cluster to join ({str(error).splitlines()[0][:200]})\n"
                       "start one with `ray start --head` (docs/training.md), or leave --address out to start Ray here")
            print(error_lines("train_rllib.py", problem), end="", file=sys.stderr)
            return None
    return True


def report_resources(args: Args, ray) -> str | None:
    """Say what Ray has and where the learners go. A problem where a local Ray lacks the CPUs or GPUs the runners and
    learners need (RLlib would wait for them without a time limit), else None; on a cluster, a warning that the start
    waits until nodes with the rest join."""
    resources = ray.cluster_resources()
    cpus, gpus = resources.get("CPU", 0), resources.get("GPU", 0)
    learner_cpus = args.learners if not args.learner_gpus else 0  # a GPU learner takes no CPU of its own in RLlib
    print(f"Ray: {cpus:.0f} CPUs" + (f", {gpus:.0f} GPUs" if gpus else "") + f"; {args.runners} runners x {args.games_per_runner} games; "
          + (f"{args.learners} learner process" + ("es" if args.learners > 1 else "") if args.learners
             else "the learner in this process")
          + (f" on {args.learner_gpus:g} GPU(s) each" if args.learner_gpus else ""))
    lacking = []
    if args.runners + learner_cpus > cpus:
        lacking.append(f"--runners {args.runners} and --learners {args.learners} need {args.runners + learner_cpus} CPUs "
                       f"and Ray has {cpus:.0f}")
    if args.learner_gpus * max(args.learners, 1) > gpus:
        lacking.append(f"--learner-gpus {args.learner_gpus:g} needs {args.learner_gpus * max(args.learners, 1):g} GPUs "
                       f"and Ray has {gpus:.0f}")
    if lacking and not args.address:
        return "; ".join(lacking) + ": a local Ray would wait for them for ever (give fewer, or --address to join a cluster)"
    for line in lacking:
        print(f"warning: {line}: the start waits until nodes with the rest join (give fewer to start now)", flush=True)
    return None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import ray  # the options are checked: now Ray, torch and the rules kernel
    import torch

    from agents.training.rllib_learner import LEARNER_POLICY, SHARED_POLICY, RLModulePolicy, ppo_config

    torch.set_num_threads(args.threads)
    rules = rules_from_options(args.rule, args.rules)
    hidden = layer_sizes(args.hidden)
    checkpoint = checkpoint_to_resume(args.out) if args.resume else None
    # what the run has done so far; a checkpoint from before env steps and seconds were kept counts them from here
    done = {"iterations": 0, "env_steps": 0, "seconds": 0.0}
    if checkpoint:
        done.update({key: value for key, value in read_progress(checkpoint).items() if key in done})
    if args.overwrite:
        for suffix in ("", ".new", ".old"):
            shutil.rmtree(os.path.join(args.out, CHECKPOINT + suffix), ignore_errors=True)
    # Bad rules or a bad player count fail here, before Ray starts (ppo_config builds one env). A resumed run's
    # games are seeded anew from the iterations done: it does not deal its first games again.
    config = ppo_config(
        args.players, runners=args.runners, games_per_runner=args.games_per_runner, batched=args.batched,
        league=args.league, snapshot_every=args.snapshot_every, train_batch=args.train_batch, minibatch=args.minibatch,
        epochs=args.epochs, lr=args.lr, entropy_coeff=args.entropy_coeff, gamma=args.gamma, gae_lambda=args.gae_lambda,
        clip_range=args.clip_range, hidden=hidden,
        scale_observations=args.scale_observations, learners=args.learners, learner_gpus=args.learner_gpus,
        seed=args.seed + done["iterations"], **rules,
    )
    # A local run's runners are not restarted when they fail (the run stops; its checkpoint stays): restarts are for
    # clusters, where a node can go away, and a restartable runner makes Ray log an error-level line at every start
    # (RLlib always passes runners their config through the object store).
    config.fault_tolerance(restart_failed_env_runners=bool(args.address))
    # The learner's seeding (RLlib calls torch.use_deterministic_algorithms) imports torch's compiler, about 2 s on
    # 2 cores: imported in a thread, it loads while this process waits for Ray's processes to start.
    threading.Thread(target=importlib.import_module, args=("torch._inductor.config",), daemon=True).start()
    started_ray = start_ray(args, ray)
    if started_ray is None:
        return 2
    problem = report_resources(args, ray)
    if problem:
        print(error_lines("train_rllib.py", problem), end="", file=sys.stderr)
        if started_ray:
            ray.shutdown()
        return 2
    with phase(f"starting PPO's learner and {args.runners} env runners (each loads the rules kernel: 3-20 s, "
               f"30-120 s the first time, when they compile it)"):
        algo = config.build_algo()
    if args.runners:
        nodes = runner_nodes(algo, ray)
        print(f"env runners on {len(set(nodes))} node(s): " + ", ".join(
            f"{node} ({nodes.count(node)})" for node in sorted(set(nodes))), flush=True)
    trained = LEARNER_POLICY if args.league else SHARED_POLICY
    if checkpoint:
        algo.restore_from_path(os.path.abspath(checkpoint))
        print(f"resumed from {checkpoint} at iteration {done['iterations']} ({done['env_steps']} env steps)"
              + ("; nothing to train (give a larger --iterations)" if done["iterations"] >= args.iterations else ""))

    print(f"training: iterations {done['iterations'] + 1} to {args.iterations}, each sampling about "
          f"{args.train_batch} env steps, then PPO's update; a line per iteration", flush=True)
    try:  # the algorithm and a Ray this script started are stopped however the run ends
        try:
            done = train(algo, args, done, trained)
        except KeyboardInterrupt:
            path = save_checkpoint(algo, args, done)
            print(f"\ninterrupted after iteration {done['iterations']}: checkpoint {path}\n"
                  f"resume with: python train_rllib.py --out {args.out} --resume")
            return 130
        print(f"checkpoint: {save_checkpoint(algo, args, done)}")
        if args.eval_rounds:
            evaluate(RLModulePolicy(algo.get_module(trained), args.players, scale_observations=args.scale_observations),
                     args, rules)
        return 0
    finally:
        algo.stop()
        if started_ray:
            ray.shutdown()


def train(algo, args: Args, done: dict, trained: str) -> dict:
    """PPO iterations up to --iterations, a line each, checkpoints every --checkpoint-every; returns what is done
    (kept up to date in ``done`` itself, so that Ctrl-C saves the last whole iteration)."""
    for iteration in range(done["iterations"] + 1, args.iterations + 1):
        start = time.perf_counter()
        result = algo.train()
        seconds = time.perf_counter() - start
        sampled = result["env_runners"].get("num_env_steps_sampled", 0)
        done.update({"iterations": iteration, "env_steps": done["env_steps"] + int(sampled),
                     "seconds": round(done["seconds"] + seconds, 3)})
        length = result["env_runners"].get("episode_len_mean", float("nan"))
        losses = result["learners"][trained]
        timers = result.get("timers", {})
        print(f"iter {iteration:4d}  env steps {sampled:7.0f}  {sampled / seconds:8.0f} steps/s  "
              f"(sample {timers.get('env_runner_sampling_timer', float('nan')):5.1f} s, "
              f"learn {timers.get('learner_update_timer', float('nan')):5.1f} s)  "
              f"round length {length:7.1f}  policy loss {losses['policy_loss']:+.4f}  "
              f"value loss {losses['vf_loss']:.4f}  entropy {losses['entropy']:.3f}"
              + (f"  refreshed {result['league_refreshed']}" if "league_refreshed" in result else ""), flush=True)
        if args.checkpoint_every and iteration % args.checkpoint_every == 0 and iteration < args.iterations:
            save_checkpoint(algo, args, done)
    return done


def runner_nodes(algo, ray) -> list[str]:
    """The Ray node id of each remote env runner, in runner order (healthy runners only)."""
    return algo.env_runner_group.foreach_env_runner(lambda runner: ray.get_runtime_context().get_node_id(),
                                                    local_env_runner=False)


def evaluate(policy, args: Args, rules: dict) -> None:
    """Win rates of the trained policy, played greedily, against the random and heuristic players."""
    import agents
    from agents.evaluation.rounds import win_rate

    for name in ("random", "heuristic"):
        opponent = agents.load(name, num_players=args.players, seed=args.seed)
        rates = win_rate(policy, opponent, num_players=args.players, rounds=args.eval_rounds, seed=args.seed, **rules)
        print(f"win rate against {name:9s}: {rates['win_rate']:.3f} [{rates['low']:.3f}, {rates['high']:.3f}] "
              f"(fair share {1 / args.players:.3f}, {args.eval_rounds} rounds)")


if __name__ == "__main__":
    sys.exit(main())
