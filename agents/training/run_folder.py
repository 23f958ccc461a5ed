"""A training run's folder (``--out``): the files train.py writes there, written atomically, and read back on --resume.

The checkpoint (``checkpoint.zip``, with its state inside: step count, wall-clock seconds, league snapshots),
``config.json``, the CSV logs (``LOGS``: ``losses.csv``, ``evaluations.csv`` or, at a mixture of tables,
``table_evaluations.csv``), the league's snapshots (OUT/league/) and which of these a new run, ``--overwrite``
or ``--resume`` finds, removes or continues; and ``train.lock``, held by the run that is writing there, so that a
second train.py on the same folder is refused instead of mixing its files with the first's.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shlex
import zipfile

from hpuno_env import _output as output
from hpuno_env._output import program_name
from hpuno_env._reading import parse_json, read_json_file

RUN_FILES = ("checkpoint.zip", "checkpoint.json", "agent.safetensors", "config.json", "losses.csv", "evaluations.csv",
             "table_evaluations.csv")
# What write_through_temporary leaves if the process is killed mid-write (never a valid file: removed at the next start).
TEMPORARY = re.compile(r"(checkpoint|config|losses|evaluations|table_evaluations)\.tmp\.(zip|json|csv)")
CHECKPOINT_STATE = "hpuno_checkpoint.json"  # inside checkpoint.zip: its step count, wall seconds and league snapshots

# What SB3's PPO update records as train/<name>, logged per iteration.
UPDATE_COLUMNS = ["loss", "policy_gradient_loss", "value_loss", "entropy_loss", "approx_kl", "clip_fraction", "explained_variance", "learning_rate"]
LOSS_COLUMNS = [
    "timesteps", "wall_seconds", "rollout_seconds", "env_seconds", "update_seconds", "steps_per_second",
    "train_win_rate", "ep_rew_mean", "ep_len_mean", *UPDATE_COLUMNS,
]
EVALUATION_COLUMNS = ["timesteps", "wall_seconds", "opponent", "win_rate", "low", "high", "rounds", "truncated", "mean_points"]
# The learning curve of a run at a mixture of tables (table_evaluations.csv): a row a table, against the heuristic,
# with the learner's win rate in training since the evaluation before.
TABLE_EVALUATION_COLUMNS = ["timesteps", "wall_seconds", "table", "players", "opponent", "win_rate", "low", "high", "rounds",
                            "training_win_rate", "training_episodes"]
# Each CSV log of a run: its columns.
LOGS = {"losses.csv": LOSS_COLUMNS, "evaluations.csv": EVALUATION_COLUMNS, "table_evaluations.csv": TABLE_EVALUATION_COLUMNS}


LOCK_FILE = "train.lock"  # held (flock) by the run writing into the folder; the OS lets go of it when that process ends


def prepare_folder(out: str, overwrite: bool, league: bool, lock: FolderLock) -> str | None:
    """Make ``out`` ready for a run: the folder (and its league/ with ``league``) created, ``lock`` taken (so no other
    run writes there meanwhile), then with ``overwrite`` the files an earlier run wrote there removed, and half-written
    temporaries removed. Returns why it cannot be, or None."""
    try:
        os.makedirs(os.path.join(out, "league") if league else out, exist_ok=True)
    except OSError as error:  # e.g. under /proc, read-only, or --out names a file
        return f"cannot create the output folder --out {out}: {error}"
    problem = lock.acquire()
    if problem:
        return problem
    if overwrite:
        for path in run_files(out):  # only what train.py wrote: a user's own files there stay
            os.remove(path)
    for path in stale_temporaries(out):  # left by a process killed mid-write
        os.remove(path)
    return None


class FolderLock(output.FolderLock):
    """OUT/train.lock (``hpuno_env._output.FolderLock``), held by the run writing into the folder."""

    def __init__(self, out: str):
        super().__init__(out, LOCK_FILE)


def lock_problem(out: str) -> str | None:
    """Why a run cannot start in ``out`` now (a running train.py holds its lock), or None; creates and changes nothing."""
    return output.lock_problem(out, LOCK_FILE)


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


def write_through_temporary(path: str, write) -> None:
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

    write_through_temporary(path, write)


def snapshot_path(out: str, name: str) -> str:
    """Where a run's league snapshot NAME is: OUT/league/NAME.safetensors."""
    return os.path.join(out, "league", name + ".safetensors")


def save_checkpoint(out: str, model, league, wall_seconds: float) -> None:
    """OUT/checkpoint.zip (the model, with the run's state inside) and its readable copy of the state, checkpoint.json."""
    snapshots = [m.name for m in league.members if m.group == "snapshots"] if league else []
    checkpoint = {"timesteps": model.num_timesteps, "wall_seconds": wall_seconds, "league_snapshots": snapshots,
                  "snapshots_added": league.snapshots_added if league else 0}

    def write(temporary: str) -> None:  # the state goes inside the zip: one rename replaces both together
        model.save(temporary)
        with zipfile.ZipFile(temporary, "a") as archive:
            archive.writestr(CHECKPOINT_STATE, json.dumps(checkpoint))

    write_through_temporary(os.path.join(out, "checkpoint.zip"), write)
    write_json(os.path.join(out, "checkpoint.json"), checkpoint)  # --resume reads the one inside checkpoint.zip


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
    return next(filter(None, (csv_problem(os.path.join(out, name), columns) for name, columns in LOGS.items())), None)


def cut_logs(out: str, timesteps: int) -> None:
    """Drop the CSV logs' rows past the checkpoint's step count: steps trained after it (a run killed later) were
    lost with it, and their rows would make the step column go backwards once the resumed run logs them again."""
    for name in LOGS:
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

            write_through_temporary(path, write)


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


def command_name() -> str:
    """What this command calls itself: train.py, hpuno-train or python -m agents.training.train."""
    return program_name("agents.training.train", "hpuno-train")


def resume_command(argv: list[str]) -> str:
    """The command line that continues a run started with argv."""
    return shlex.join(["python", "train.py", *[a for a in argv if a not in ("--resume", "--no-resume")], "--resume"])
