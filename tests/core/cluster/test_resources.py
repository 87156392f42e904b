"""What a run asks a Ray cluster for: CPUs from its env processes, a GPU share from the estimate, memory."""

from __future__ import annotations

import pytest

from core.cluster.resources import JobResources, job_resources
from core.config.validate import validate_config

GIB = 2**30


def config(**runtime):
    return validate_config({"algo": "PPO", "env": {"id": "CartPole-v1"}, "runtime": runtime}).config


def estimate(gpu_bytes=GIB, capacity=8 * GIB, on_gpu=True, host=3 * GIB, device="cuda:0"):
    return {"on_gpu": on_gpu, "gpu_bytes": gpu_bytes, "capacity_bytes": capacity, "host_bytes": host,
            "train_device": device}


@pytest.mark.parametrize(("runtime", "cpus"), [
    ({"n_envs": 8, "vec_env": "subproc"}, 9),  # one per env process, plus the learner
    ({"n_envs": 8, "vec_env": "subproc-sb3"}, 9),
    ({"n_envs": 8, "vec_env": "dummy"}, 1),  # a dummy vec env steps its envs in the learner's thread
    ({"n_envs": 1, "vec_env": "dummy"}, 1),
])
def test_cpus_come_from_the_env_processes(runtime, cpus):
    assert job_resources(config(**runtime), estimate()).num_cpus == cpus


def test_the_gpu_share_is_the_estimate_over_the_target_gpu_rounded_up():
    cfg = config(n_envs=4, vec_env="subproc")
    assert job_resources(cfg, estimate(gpu_bytes=2 * GIB, capacity=8 * GIB)).num_gpus == 0.25
    assert job_resources(cfg, estimate(gpu_bytes=int(2.01 * GIB), capacity=8 * GIB)).num_gpus == 0.26
    assert job_resources(cfg, estimate(gpu_bytes=1, capacity=8 * GIB)).num_gpus == 0.01  # never 0 on a GPU
    assert job_resources(cfg, estimate(gpu_bytes=20 * GIB, capacity=8 * GIB)).num_gpus == 1.0  # never more than one


def test_a_cpu_run_asks_for_no_gpu_and_its_host_memory():
    cfg = config(n_envs=2, vec_env="subproc")
    res = job_resources(cfg, estimate(on_gpu=False, device="cpu", host=5 * GIB))
    assert (res.num_cpus, res.num_gpus, res.memory_bytes) == (3, 0.0, 5 * GIB)
    assert job_resources(cfg, estimate(on_gpu=True, device="cpu")).num_gpus == 0.0  # a CPU torch trains on the CPU
    assert res.describe() == "3 CPU, 5,120 MiB"


def test_without_an_estimate_a_run_asks_for_its_cpus_only():
    cfg = config(n_envs=4, vec_env="subproc")
    for est in (None, {}, {"error": "the env could not be made here"}):
        res = job_resources(cfg, est)
        assert (res.num_cpus, res.num_gpus, res.memory_bytes) == (5, 0.0, 0)


def test_a_run_asks_for_no_more_cpus_than_the_largest_node_has():
    asked = JobResources(9.0, 0.25, 2**30)
    cut, why = asked.fit_node(4.0)
    assert cut == JobResources(4.0, 0.25, 2**30)
    assert why.startswith("asks for 4 CPUs, not 9") and "largest node has 4" in why
    assert asked.fit_node(16.0) == (asked, None) and asked.fit_node(None) == (asked, None)  # fits, or no answer
