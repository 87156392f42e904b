"""CPU or GPU? The user's config is probed on every device here first; a device it cannot run on is one row that
says why (never "fits: yes"); a target GPU that is not this machine is named as not what was tuned for."""

from __future__ import annotations

import pytest

from core.config.validate import validate_config
from core.throughput.devices import machine_line, usable_devices, user_device
from core.throughput.preset import description
from core.throughput.probe import ProbePool
from core.throughput.search import TuneOptions, Tuner
from core.throughput.table import CANNOT_RUN, COLUMNS, cells, format_row

SMALL = {"algo": "PPO", "env": {"id": "CartPole-v1"}, "ppo": {"n_steps": 64, "n_epochs": 2},
         "runtime": {"device": "cpu", "torch_threads": 1}}
CPU_TORCH = {"torch": "2.13.0+cpu", "cuda_available": False, "devices": []}
# a CUDA device torch on this machine does not have: cuda:7 fails on a CPU-only torch and on a machine with fewer GPUs
IMAGINARY_CUDA = {"torch": "2.13.0", "cuda_available": True,
                  "devices": [{"index": 7, "name": "Imaginary GPU", "memory_total_bytes": 8 << 30}]}


def small(target_gpu="auto", **runtime):
    return validate_config({**SMALL, "runtime": {**SMALL["runtime"], **runtime}, "target_gpu": target_gpu}).config


def test_usable_devices_are_the_cpu_and_each_cuda_device_torch_has():
    assert usable_devices(CPU_TORCH) == ["cpu"]
    assert usable_devices({"error": "torch could not be imported"}) == ["cpu"]
    assert usable_devices(IMAGINARY_CUDA) == ["cpu", "cuda:7"]


def test_the_users_device_as_this_machine_reads_it():
    assert user_device(small(device="auto"), CPU_TORCH, ["cpu"]) == ("cpu", None)
    assert user_device(small(device="cuda"), CPU_TORCH, ["cpu"]) == (
        "cuda", "torch 2.13.0+cpu has no CUDA (a CUDA build of torch would tune the GPU too)")
    device, why = user_device(small(device="cuda:1"), IMAGINARY_CUDA, ["cpu", "cuda:7"])
    assert device == "cuda:1" and why == "cuda:1 is not a device this torch sees here (it sees cpu, cuda:7)"
    assert user_device(small(device="cuda:7"), IMAGINARY_CUDA, ["cpu", "cuda:7"]) == ("cuda:7", None)


def test_the_machine_line_names_this_machines_devices_and_a_target_that_is_not_here():
    line = machine_line(small(target_gpu="RTX 4060 Laptop"), CPU_TORCH, ["cpu"])
    assert line == ("tuned for this machine (cpu; torch 2.13.0+cpu has no CUDA), not the target GPU RTX 4060 Laptop "
                    "the config plans memory for")
    assert machine_line(small(), IMAGINARY_CUDA, ["cpu", "cuda:7"]) == "tuned for this machine (cpu, cuda:7 Imaginary GPU)"
    assert "torch could not be asked: no torch" in machine_line(small(), {"error": "no torch"}, ["cpu"])


class RecordingPool(ProbePool):
    def __init__(self) -> None:
        super().__init__()
        self.devices: list[str] = []

    def probe(self, cfg, seconds, timeout_s=None, cancel=None):
        self.devices.append(cfg.runtime.device)
        return super().probe(cfg, seconds, timeout_s, cancel)


def _tune_until(cfg, facts, rows_wanted):
    """A real tune that is cancelled once ``rows_wanted`` rows came (a generous budget: no row is left out for time)."""
    pool, lines = RecordingPool(), []
    tuner: Tuner

    def on_row(i, row):
        lines.append(("row", i))
        if i + 1 >= rows_wanted:
            tuner.cancel()

    tuner = Tuner(cfg, TuneOptions(budget_s=600, probe_s=1, facts=facts, engines=["sb3"]), on_row=on_row,
                  on_machine=lambda line: lines.append(("machine", line)), prober=pool)
    return tuner.run(), pool, lines


@pytest.mark.training
def test_a_cuda_device_that_cannot_run_here_is_one_row_and_the_search_follows_the_cpu():
    result, pool, _ = _tune_until(small(device="cuda:7"), IMAGINARY_CUDA, rows_wanted=3)
    first = result.rows[0]
    assert first.settings["runtime.device"] == "cuda:7"  # the user's own device first
    assert first.note.startswith(CANNOT_RUN) and first.steps_per_s is None and first.fits is None, first
    assert cells(first)[COLUMNS.index("fits")] == "-" and " yes " not in format_row(1, first)
    assert result.rows[1].settings["runtime.device"] == "cpu" and result.rows[1].fits is True
    assert result.rows[1].steps_per_s and result.baseline == 1  # "x your config" compares with the CPU row
    assert [r.settings["runtime.device"] for r in result.rows].count("cuda:7") == 1
    assert pool.devices.count("cuda:7") == 1 and pool.devices[1:] == ["cpu"] * (len(pool.devices) - 1)
    assert result.picked is not None and result.picked.settings["runtime.device"] == "cpu"
    assert result.machine == "tuned for this machine (cpu, cuda:7 Imaginary GPU)"


@pytest.mark.training
def test_a_preset_for_a_gpu_that_is_not_here_is_tuned_for_this_machine_and_says_so():
    cfg = small(target_gpu="RTX 4060 Laptop", device="cuda")
    result, pool, lines = _tune_until(cfg, CPU_TORCH, rows_wanted=2)
    expected = ("tuned for this machine (cpu; torch 2.13.0+cpu has no CUDA), not the target GPU RTX 4060 Laptop "
                "the config plans memory for")
    assert lines[0] == ("machine", expected) and result.machine == expected  # said before the first row
    first = result.rows[0]
    assert first.note == f"{CANNOT_RUN}: torch 2.13.0+cpu has no CUDA (a CUDA build of torch would tune the GPU too)"
    assert first.fits is None and first.settings["runtime.device"] == "cuda"
    assert "cuda" not in pool.devices and pool.devices  # never probed on a device torch does not have
    assert result.rows[1].settings["runtime.device"] == "cpu" and result.rows[1].steps_per_s
    assert "Tuned for this machine (cpu; torch 2.13.0+cpu has no CUDA), not the target GPU RTX 4060 Laptop" in (
        description(cfg, result))
