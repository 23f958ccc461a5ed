"""Turn your own SB3 MaskablePPO checkpoint (.zip) into an agent file (.safetensors) that agents.load reads.

    python -m agents.training.export runs/x/checkpoint.zip out.safetensors --players 2

WARNING: this loads CHECKPOINT with stable-baselines3, which UNPICKLES objects
from it: a crafted .zip runs code. Convert only checkpoints you made yourself
(e.g. train.py's). The .safetensors file it writes is safe to share: loading it
never runs code (agents.players.trained explains the format).

After writing, the agent is checked against the checkpoint: both play the
same observations from the engine (random legal play, --verify-steps
decisions) and must choose the same actions; a mismatch exits with status 1.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import zipfile

import numpy as np
from sb3_contrib import MaskablePPO

from hpuno_env import VectorEngine
from hpuno_env._reading import parse_json, read_json_file
from hpuno_env.options import check_num_players

from agents._cli import parse_rules
from hpuno_env._output import program_name
from agents.players.trained import TrainedAgent

from .agent_file import export


def engine_observations(num_players: int, steps: int, seed: int = 0, rules_options: dict | None = None, num_games: int = 64):
    """About ``steps`` (observation, mask) rows from the engine under random legal play, as two stacked arrays."""
    engine = VectorEngine(num_games=num_games, num_players=num_players, seed=seed, **(rules_options or {}))
    engine.reset()
    rng = np.random.default_rng(seed)
    observations, masks = [], []
    for _ in range(max(1, -(-steps // num_games))):
        observation, mask = engine.observe(), engine.legal_mask()
        observations.append(observation)
        masks.append(mask)
        engine.step((rng.random(mask.shape) * mask).argmax(axis=1))
    return np.concatenate(observations)[:steps], np.concatenate(masks)[:steps]


def disagreements(model, agent: TrainedAgent, observations: np.ndarray, masks: np.ndarray) -> int:
    """Rows where the SB3 model's deterministic predict (on transformed observations) and the agent's act differ."""
    scale = agent.network.obs_scale.cpu().numpy()
    shift = agent.network.obs_shift.cpu().numpy()
    inputs = observations.astype(np.float32) * scale + shift
    hidden = model.observation_space.shape[0] - inputs.shape[1]  # a hands critic's extra inputs (agents.training.critic): the actor never reads them
    if hidden > 0:
        inputs = np.concatenate([inputs, np.zeros((len(inputs), hidden), np.float32)], axis=1)
    expected, _ = model.predict(inputs, action_masks=masks, deterministic=True)
    return int((np.asarray(expected) != agent.act(observations, masks)).sum())


def _number_or_file(text: str):
    """A number, or a .npy file (read without pickle) / .json list of one value per observation feature."""
    try:
        return float(text)
    except ValueError:
        pass
    if text.endswith(".npy"):
        return np.load(text, allow_pickle=False)
    if text.endswith(".json"):
        try:
            return read_json_file(text, "observation transform")
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    raise argparse.ArgumentTypeError(f"expected a number, a .npy file or a .json list, got {text!r}")


def _json_object(text: str) -> dict:
    try:
        value = parse_json(text, "the JSON")
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object, e.g. '{\"uno_penalty\": 4}'")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=program_name("agents.training.export"), description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", help="your own SB3 MaskablePPO .zip (unpickled: trusted files only)")
    parser.add_argument("out", help="agent file to write, ending in .safetensors (written atomically)")
    parser.add_argument("--players", type=int, required=True, help="player count the checkpoint was trained for (required)")
    parser.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE",
                        help="a rules option it was trained under, repeatable, e.g. --rule uno_penalty=4 (default: the defaults)")
    parser.add_argument("--rules", metavar="JSON", help="the same rules options as one JSON object (an alias of --rule)")
    parser.add_argument(
        "--observation-scale", type=_number_or_file, default=None,
        help="what training multiplied the raw int8 observations by: a number, .npy or .json list (default: 1)",
    )
    parser.add_argument("--observation-shift", type=_number_or_file, default=None, help="what training then added (default: 0)")
    parser.add_argument("--command", default=None, help="the command(s) that trained the checkpoint, recorded in the metadata (default: none)")
    parser.add_argument("--evaluation", type=_json_object, default={}, help="an evaluation table to record, as JSON (default: {})")
    parser.add_argument("--verify-steps", type=int, default=2000, help="engine observations on which both must agree; 0 skips (default: 2000)")
    args = parser.parse_args(argv)
    if args.verify_steps < 0:
        parser.error(f"--verify-steps must be >= 0, got {args.verify_steps}")
    try:
        args.rules = parse_rules(args.rule, args.rules)
    except ValueError as error:
        parser.error(f"--rule: {error}")
    # Everything that can be checked is checked before the (slow, unpickling) load.
    try:
        check_num_players(args.players)
    except ValueError as error:
        parser.error(f"--players: {error}")
    if not args.out.endswith(".safetensors"):
        parser.error(f"out must end in .safetensors, got {args.out!r}")
    if not os.path.isfile(args.checkpoint):
        parser.error(f"no checkpoint file at {args.checkpoint!r}")
    if not zipfile.is_zipfile(args.checkpoint):
        parser.error(f"{args.checkpoint!r} is not an SB3 checkpoint (.zip made by model.save / train.py)")

    try:
        model = MaskablePPO.load(args.checkpoint, device="cpu")  # unpickles: the user's own file, as documented above
    except Exception as error:  # a zip that is not a MaskablePPO save: say so instead of SB3's traceback
        parser.error(f"cannot load {args.checkpoint!r} as a MaskablePPO checkpoint: {type(error).__name__}: {error}")
    # "command" is what trained the checkpoint (unknown unless given), not this conversion.
    training = {"command": args.command, "converted_from": args.checkpoint, "exported_with": shlex.join(["python", "-m", "agents.training.export", *sys.argv[1:]])}
    try:
        metadata = export(
            model, args.out, num_players=args.players, rules_options=args.rules, observation_scale=args.observation_scale,
            observation_shift=args.observation_shift, training=training, evaluation=args.evaluation,
        )
    except (TypeError, ValueError) as error:
        parser.error(str(error))
    network = metadata["network"]
    print(f"wrote {args.out}: {args.players} players, observation v{metadata['observation']['version']}, "
          f"MLP {network['hidden_sizes']} {network['activation']}, {metadata['training']['timesteps']} steps")
    if args.verify_steps:
        agent = TrainedAgent.load(args.out, args.players)
        observations, masks = engine_observations(args.players, args.verify_steps, rules_options=args.rules)
        wrong = disagreements(model, agent, observations, masks)
        print(f"checked against the checkpoint on {len(masks)} engine observations: {len(masks) - wrong} same actions, {wrong} different")
        if wrong:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
