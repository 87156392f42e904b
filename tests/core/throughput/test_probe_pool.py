"""Probe processes are reused: the candidates that share a device, vec env and torch threads go to one child;
a timed-out or cancelled candidate ends that child's whole tree and the next candidate starts a new one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import psutil
import pytest

from core.config.validate import validate_config
from core.throughput.probe import ProbePool
from tests.conftest import REPO

pytestmark = pytest.mark.training

SMALL = {"algo": "PPO", "env": {"id": "CartPole-v1"}, "ppo": {"n_steps": 64, "n_epochs": 2},
         "runtime": {"device": "cpu", "torch_threads": 1}}


def small(**runtime):
    return validate_config({**SMALL, "runtime": {**SMALL["runtime"], **runtime}}).config


def serving_children() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True) if "--serve" in _cmdline(p)]


def _cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except psutil.Error:
        return []


def _descendants(proc: psutil.Process) -> list[psutil.Process]:
    try:
        return proc.children(recursive=True)
    except psutil.Error:
        return []


def _gone(proc: psutil.Process) -> bool:
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


class TreeWatch:
    """Every process in a probe child's tree while the block runs (the child, its forkserver and env processes).

    Only the trees of serving children: anything else this test process runs (a session's Ray head under the
    same xdist worker) is not the pool's to end."""

    def __init__(self) -> None:
        self.seen: dict[int, psutil.Process] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            for child in serving_children():
                for proc in [child, *_descendants(child)]:
                    self.seen.setdefault(proc.pid, proc)

    def __enter__(self) -> TreeWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def test_candidates_of_one_process_key_share_one_child_and_each_gets_its_own_figures():
    with ProbePool() as pool:
        results = {n: pool.probe(small(n_envs=n), 0.5) for n in (1, 2, 4)}
        assert pool.starts == 1 and len(serving_children()) == 1
        assert [r.started_process for r in results.values()] == [True, False, False]
        for n, result in results.items():
            assert result.error is None and result.steps_per_s and result.steps_per_s > 0, result
            assert result.cycles and result.steps == result.cycles * 64 * n  # whole rollouts of this candidate's n_envs
            assert result.host_bytes and result.host_bytes > 50 << 20
        other = pool.probe(small(torch_threads=2), 0.5)  # a thread count is read when torch loads: a child of its own
        assert other.started_process and other.steps_per_s and pool.starts == 2
        assert len(serving_children()) == 2
    assert serving_children() == []  # close() ended both


def test_a_timed_out_candidate_ends_its_childs_tree_and_the_next_candidate_starts_a_new_child():
    with ProbePool() as pool:
        first = pool.probe(small(n_envs=2, vec_env="subproc"), 0.5)
        assert first.steps_per_s and first.started_process
        with TreeWatch() as watch:  # the reused child, its forkserver and the env processes it starts
            hung = pool.probe(small(n_envs=2, vec_env="subproc"), 600, timeout_s=6)
        assert hung.error is not None and hung.error.startswith("timed out"), hung
        assert not hung.started_process  # it went to the running child
        assert len(watch.seen) >= 3 and all(_gone(p) for p in watch.seen.values()), [
            (p.pid, _cmdline(p)) for p in watch.seen.values() if not _gone(p)]
        after = pool.probe(small(n_envs=2, vec_env="subproc"), 0.5)
        assert after.error is None and after.steps_per_s and after.started_process and pool.starts == 2


def test_cancel_ends_the_running_candidates_tree_and_the_pool_goes_on():
    cancel = threading.Event()
    with ProbePool() as pool:
        timer = threading.Timer(3.0, cancel.set)
        timer.start()
        with TreeWatch() as watch:
            cancelled = pool.probe(small(n_envs=2, vec_env="subproc"), 600, cancel=cancel)
        timer.cancel()
        assert cancelled.error is not None and cancelled.error.startswith("cancelled"), cancelled
        assert watch.seen and all(_gone(p) for p in watch.seen.values())
        assert serving_children() == []
        after = pool.probe(small(), 0.5)
        assert after.steps_per_s and after.started_process and pool.starts == 2


def test_a_serving_child_answers_on_stdout_alone_and_refuses_a_candidate_that_needs_a_fresh_process(tmp_path):
    requests = []
    for i, threads in enumerate((1, 2)):
        cfg = small(torch_threads=threads)
        (tmp_path / f"c{i}.yaml").write_text(cfg.to_yaml(), encoding="utf-8")
        requests.append({"config": str(tmp_path / f"c{i}.yaml"), "out": str(tmp_path / f"r{i}.json"), "seconds": 0.3})
    stdin = "".join(json.dumps(r) + "\n" for r in requests)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "core.worker.throughput_probe", "--serve"], input=stdin, capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [{"done": r["out"]} for r in requests]
    first = json.loads((tmp_path / "r0.json").read_text())
    second = json.loads((tmp_path / "r1.json").read_text())
    assert first["steps_per_s"] > 0 and "error" not in first
    assert "needs a fresh one" in second["error"] and "'torch_threads': 2" in second["error"]
