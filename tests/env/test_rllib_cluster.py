"""train_rllib.py on a real two-node Ray cluster on this machine: a head and a second node, each its own raylet
with one CPU, so its two env runners must run one on each node; checkpoint and resume over the cluster, and a
runner process killed mid-run is restarted while training goes on.

The nodes are ``ray.cluster_utils.Cluster`` nodes (real GCS and raylet processes, own ports, own temp folder),
stopped by the test itself: ``ray stop`` would stop every Ray on the machine."""

import faulthandler
import json
import os
import shutil
import signal
import sys
import tempfile
import time

import pytest
import ray
from ray.cluster_utils import Cluster

from test_rllib import load_train_rllib

TINY = ["--runners", "2", "--games-per-runner", "4", "--train-batch", "128", "--minibatch", "64", "--epochs", "1",
        "--hidden", "16", "--eval-rounds", "0", "--rules", '{"voluntary_draw": false, "max_turns": 200}']
WATCHDOG_S = 420  # a hung cluster ends the test process with every thread's traceback instead of hanging the suite


@pytest.fixture
def two_nodes():
    if ray.is_initialized():
        pytest.skip("this process already runs a Ray of its own")
    # Ray's socket paths live under the temp folder and must stay short (unix sockets: 107 characters).
    temp_dir = tempfile.mkdtemp(prefix="hpray", dir="/tmp")
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "temp_dir": temp_dir,
                                                            "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes(timeout=60)
        yield cluster
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()
        faulthandler.cancel_dump_traceback_later()
        shutil.rmtree(temp_dir, ignore_errors=True)


def _runners(algo) -> list[tuple[int, str]]:
    """(pid, node id) of each healthy remote env runner."""
    return algo.env_runner_group.foreach_env_runner(
        lambda runner: (os.getpid(), ray.get_runtime_context().get_node_id()), local_env_runner=False)


def test_train_rllib_on_two_nodes_checkpoints_resumes_and_survives_a_killed_runner(two_nodes, tmp_path, monkeypatch,
                                                                                   capsys):
    from ray.rllib.algorithms.ppo import PPO

    script = load_train_rllib()
    out, address = str(tmp_path / "run"), two_nodes.address
    node_ids = {node.node_id for node in two_nodes.list_all_nodes()}
    assert len(node_ids) == 2
    started = time.perf_counter()
    assert script.main(["--address", address, "--iterations", "2", "--out", out, *TINY]) == 0
    printed = capsys.readouterr().out
    assert f"joining the Ray cluster at {address}" in printed and "Ray: 2 CPUs; 2 runners x 4 games" in printed
    assert "env runners on 2 node(s): " in printed and all(f"{node} (1)" in printed for node in node_ids)
    assert "iter    2" in printed and not ray.is_initialized()  # the Ray it joined is left, not stopped

    real_train, seen = PPO.train, {"after": []}

    def train_killing_a_runner(self):
        if "before" not in seen:  # the first iteration of the resumed run: a runner dies just before it samples
            seen["before"] = _runners(self)
            os.kill(seen["before"][0][0], signal.SIGKILL)
        elif len(seen["after"][-1]) == 2:  # the runner is back (Ray restarted its process): stop as Ctrl-C does
            raise KeyboardInterrupt
        else:  # give the new process time to start (it imports torch and RLlib) without a flood of tiny iterations
            time.sleep(1)
        result = real_train(self)
        seen["after"].append(_runners(self))
        return result

    monkeypatch.setattr(PPO, "train", train_killing_a_runner)
    assert script.main(["--address", address, "--iterations", "60", "--out", out, "--resume"]) == 130
    printed = capsys.readouterr().out
    assert "resumed from" in printed and "at iteration 2" in printed and "iter    3" in printed
    before, after = seen["before"], seen["after"]
    assert len(after[0]) == 1 and len(after[-1]) == 2  # trained on with one runner, then with both again
    assert before[0][0] not in {pid for pid, _ in after[-1]}, "the killed runner was not replaced"
    assert {node for _, node in after[-1]} == node_ids  # the restarted runner took the CPU its node freed
    progress = json.loads((tmp_path / "run" / "checkpoint" / "progress.json").read_text())
    iterations = progress["iterations"]
    assert iterations == 2 + len(after) and progress["env_steps"] >= iterations * 128

    monkeypatch.setattr(PPO, "train", real_train)
    assert script.main(["--address", address, "--iterations", str(iterations + 1), "--out", out, "--resume"]) == 0
    printed = capsys.readouterr().out
    assert f"at iteration {iterations}" in printed and f"iter {iterations + 1:4d}" in printed
    print(f"two-node test: {time.perf_counter() - started:.0f} s of training runs", file=sys.stderr)
