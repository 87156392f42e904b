"""Torch threads "auto": one on small machines and on a GPU, else the cores the env processes leave free."""

from __future__ import annotations

from core.util.threads import MAX_AUTO, auto_torch_threads, resolved_torch_threads, torch_threads, usable_cores


def test_auto_does_not_fight_the_env_processes():
    assert auto_torch_threads(cores=2, env_processes=0, gpu=False) == 1  # the busy 2-core laptop: 97 -> 1,990 steps/s
    assert auto_torch_threads(cores=16, env_processes=4, gpu=True) == 1  # the CPU only feeds the GPU
    assert auto_torch_threads(cores=8, env_processes=4, gpu=False) == 4
    assert auto_torch_threads(cores=8, env_processes=16, gpu=False) == 1
    assert auto_torch_threads(cores=64, env_processes=0, gpu=False) == MAX_AUTO


def test_a_configured_count_is_kept_and_auto_counts_only_subprocess_envs():
    assert resolved_torch_threads(3, n_envs=8, subproc=True, device="cpu", cores=2) == 3
    assert resolved_torch_threads(None, n_envs=4, subproc=True, device="cpu", cores=8) == 4
    assert resolved_torch_threads(None, n_envs=4, subproc=False, device="cpu", cores=8) == 8
    assert resolved_torch_threads(None, n_envs=1, subproc=False, device="cuda:0", cores=8) == 1
    assert 1 <= usable_cores()


def test_the_count_is_said_with_why_as_the_form_and_estimate_show_it():
    assert torch_threads(None, n_envs=4, subproc=True, device="cpu", cores=2).text() == \
        "auto: 1 thread here (2 cores, 4 subprocess envs)"
    assert torch_threads(None, n_envs=4, subproc=False, device="cpu", cores=6).text() == "auto: 6 threads here (6 cores)"
    assert torch_threads(None, n_envs=2, subproc=True, device="cpu", cores=32).text() == \
        "auto: 8 threads here (32 cores, 2 subprocess envs, at most 8)"
    assert torch_threads(None, n_envs=8, subproc=True, device="cuda:0", cores=32).text() == \
        "auto: 1 thread here (training on a GPU)"
    configured = torch_threads(3, n_envs=8, subproc=True, device="cpu", cores=2)
    assert configured.text() == "3 threads (set)" and not configured.auto and configured.count == 3
