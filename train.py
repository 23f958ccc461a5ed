"""Train a Harry Potter UNO player with MaskablePPO, then show how it plays.

    python train.py                              # 2 players, against the random player
    python train.py --players 4 --opponent heuristic --timesteps 2000000
    python train.py --opponent self              # self-play: opponents use the live weights
    python train.py --out runs/ppo --resume      # continue from runs/ppo/checkpoint.zip

Reads top to bottom: arguments, environment, model (new or resumed), training
with atomic checkpoints, evaluation against the random and heuristic players.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecMonitor

import agents
from agents.evaluate import win_rate
from agents.trained import TrainedAgent
from hpuno_env import HPUnoVecEnv

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--players", type=int, default=2)
parser.add_argument("--timesteps", type=int, default=300_000, help="learner decisions to train for")
parser.add_argument("--envs", type=int, default=128, help="games in the batch")
parser.add_argument("--opponent", default="random", help="random, heuristic, self, or a saved agent's path")
parser.add_argument("--out", default="runs/ppo", help="folder for checkpoint.zip and agent.zip")
parser.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.zip")
parser.add_argument("--checkpoint-every", type=int, default=50_000)
parser.add_argument("--eval-rounds", type=int, default=2000)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
torch.set_num_threads(1)
os.makedirs(args.out, exist_ok=True)
checkpoint_path = os.path.join(args.out, "checkpoint.zip")


def save_atomically(model, path: str) -> None:
    """Write to a temporary file, then rename: a crash never leaves half a file at path."""
    temporary = path + ".tmp.zip"
    model.save(temporary)
    os.replace(temporary, path)


class Checkpoint(BaseCallback):
    def __init__(self, every: int):
        super().__init__()
        self.every, self.last = every, 0

    def _on_step(self) -> bool:
        if self.num_timesteps - self.last >= self.every:
            self.last = self.num_timesteps
            save_atomically(self.model, checkpoint_path)
        return True


# ---- environment: the learner takes a random seat each round; opponents play inside the batch
opponent = None if args.opponent == "self" else agents.load(args.opponent, num_players=args.players, seed=args.seed + 1)
env = VecMonitor(HPUnoVecEnv(num_envs=args.envs, num_players=args.players, learner_seat="random", opponent=opponent, seed=args.seed))

# ---- model: resume from the checkpoint, or start fresh
if args.resume and os.path.exists(checkpoint_path):
    model = MaskablePPO.load(checkpoint_path, env=env, device="cpu")
    print(f"resumed from {checkpoint_path} at {model.num_timesteps} steps")
else:
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=64, batch_size=min(2048, 64 * args.envs), n_epochs=4, learning_rate=3e-4, gamma=0.995,
        ent_coef=0.01, policy_kwargs={"net_arch": [256, 256]}, seed=args.seed, device="cpu", verbose=0,
    )
if args.opponent == "self":
    env.venv.set_opponent(TrainedAgent(model, args.players, deterministic=False))

# ---- train, with atomic checkpoints
started = time.time()
remaining = max(0, args.timesteps - model.num_timesteps)
model.learn(remaining, callback=Checkpoint(args.checkpoint_every), reset_num_timesteps=not args.resume, progress_bar=False)
save_atomically(model, checkpoint_path)
agent_path = os.path.join(args.out, "agent.zip")
save_atomically(model, agent_path)
print(f"trained {model.num_timesteps} steps in {time.time() - started:.0f} s; saved {agent_path}")

# ---- how it plays
trained = TrainedAgent(model, args.players)
print(f"\nwin rate over {args.eval_rounds} rounds, {args.players} players (a fair share is {1 / args.players:.0%}):")
for name in ("random", "heuristic"):
    against = agents.load(name, num_players=args.players, seed=args.seed + 7)
    result = win_rate(trained, against, args.players, rounds=args.eval_rounds, seed=args.seed + 100)
    baseline = win_rate(agents.load("heuristic", args.players, seed=3), against, args.players, rounds=args.eval_rounds, seed=args.seed + 100)
    print(f"  vs {name:9s}: trained {result['win_rate']:.1%}   (heuristic player: {baseline['win_rate']:.1%})")
