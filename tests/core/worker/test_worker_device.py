"""The worker's device, decided once from the estimate's plan (core.estimate.device.train_device) and checked against where
torch really put the model."""

from __future__ import annotations

import pytest

from core.config.errors import ConfigError
from core.config.validate import validate_config
from core.estimate.device import train_device as planned_device


def _cfg(device: str):
    return validate_config({"algo": "PPO", "env": {"id": "CartPole-v1"}, "runtime": {"device": device},
                            "ppo": {"n_steps": 64, "batch_size": 32}}).config


@pytest.mark.parametrize("requested", ["auto", "cpu"])
def test_the_worker_trains_where_the_estimate_plans_from_the_same_torch(requested):
    from core.worker.factory import worker_device
    from core.worker.torch_probe import probe

    cfg = _cfg(requested)
    plan, _ = planned_device(cfg, None, probe())  # the facts the estimate's probe gives, from this very torch
    device = worker_device(cfg)
    assert device.train == device.torch == plan


def test_cuda_this_torch_lacks_is_refused_naming_the_field_as_the_estimate_does():
    import torch as th

    from core.worker.factory import worker_device

    if th.cuda.is_available():
        pytest.skip("this torch has CUDA: nothing to refuse")
    with pytest.raises(ConfigError) as caught:
        worker_device(_cfg("cuda"))
    [issue] = caught.value.issues
    assert issue.path == "runtime.device" and "has no CUDA" in issue.message and "auto or cpu" in issue.message


def test_a_model_elsewhere_than_planned_is_said():
    from core.worker.factory import WorkerDevice, build_model, build_vec_env, placement_note

    cfg = _cfg("cpu")
    env, _ = build_vec_env(cfg)
    try:
        model = build_model(cfg, env, "cpu")
        assert placement_note(WorkerDevice("cpu", "cpu"), model) is None
        note = placement_note(WorkerDevice("cuda:0", "cuda:0"), model)
        assert note == "planned to train on cuda:0, but the model is on cpu: the run trains there"
    finally:
        env.close()
