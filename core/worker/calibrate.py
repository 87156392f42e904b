"""``python -m core.worker.calibrate [--index N]``: the fixed costs of CUDA on this card, as JSON.

The self-calibration's probe (``rlpanel calibrate``, the System tab's Calibrate). A process of its
own, so the figures are one process's: NVML's per-process memory (or, where the driver lists no
figure per process, as WDDM on Windows, the card's used memory against its reading before CUDA
started) and torch's caching allocator, read after each first use:

  context   the CUDA context and the first kernels (one tiny tensor)
  matmul    the first fp32 matmul (cuBLAS and its workspace)
  mlp       a small MLP's forward, backward and Adam step (cuBLASLt, autograd's device thread)
  conv      a convolution's forward and backward (cuDNN)
  loop      a short training loop like SB3's (inference without gradients, then minibatch updates)

``core.estimate.calibration`` turns the steps into the estimate's constants; this module only measures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from typing import Any

MIB = 1 << 20


class _Nvml:
    """This process's memory on one GPU through NVML (``None`` wherever NVML cannot say).

    Every card's used memory is read before torch starts CUDA; ``attach`` then picks the card
    torch's device is (``core.worker.devices.run_gpu``: by UUID, else CUDA_VISIBLE_DEVICES)."""

    def __init__(self) -> None:
        self.facts: dict[str, Any] = {}
        self._before: list[int | None] = []
        self._handle: Any = None
        self.used_before: int | None = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml: Any = pynvml
            handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        except Exception as exc:  # no NVML: torch's figures only
            self.facts["nvml_error"] = str(exc)
            return
        self._handles = handles
        self._before = [self._used(h) for h in handles]

    def attach(self, cuda_device: str) -> None:
        if not self._before:
            return
        from core.worker.devices import run_gpu

        match = run_gpu(cuda_device)
        if match is None:
            return
        self._handle = self._handles[match.gpu]
        self.used_before = self._before[match.gpu]
        self.facts["nvml_index"] = match.gpu
        for key, call in (("uuid", "nvmlDeviceGetUUID"), ("name", "nvmlDeviceGetName"),
                          ("driver", "nvmlSystemGetDriverVersion")):
            try:
                value = getattr(self._nvml, call)(*(() if key == "driver" else (self._handle,)))
                self.facts[key] = value.decode() if isinstance(value, bytes) else str(value)
            except Exception:
                self.facts[key] = None

    def _used(self, handle: Any) -> int | None:
        try:
            return int(self._nvml.nvmlDeviceGetMemoryInfo(handle).used)
        except Exception:
            return None

    def card_used(self) -> int | None:
        return self._used(self._handle) if self._handle is not None else None

    def process(self) -> int | None:
        if self._handle is None:
            return None
        try:
            procs = self._nvml.nvmlDeviceGetComputeRunningProcesses(self._handle)
        except Exception:
            return None
        mine = [p.usedGpuMemory for p in procs if p.pid == os.getpid() and p.usedGpuMemory is not None]
        return int(sum(mine)) if mine else None


def _step(name: str, nvml: _Nvml, th: Any, device: Any) -> dict[str, Any]:
    th.cuda.synchronize(device)
    stats = th.cuda.memory_stats(device)
    used = nvml.card_used()
    return {
        "step": name,
        "process_bytes": nvml.process(),
        "card_delta_bytes": used - nvml.used_before if used is not None and nvml.used_before is not None else None,
        "reserved_bytes": int(th.cuda.memory_reserved(device)),
        "max_reserved_bytes": int(th.cuda.max_memory_reserved(device)),
        "allocated_bytes": int(th.cuda.memory_allocated(device)),
        "large_pool_bytes": int(stats.get("reserved_bytes.large_pool.current", 0)),
        "small_pool_bytes": int(stats.get("reserved_bytes.small_pool.current", 0)),
    }


def _training_loop(th: Any, device: Any, seconds: float) -> None:
    """SB3's shape of work: batched inference under no_grad, then minibatch updates with Adam."""
    net = th.nn.Sequential(th.nn.Linear(8, 64), th.nn.Tanh(), th.nn.Linear(64, 64), th.nn.Tanh(),
                           th.nn.Linear(64, 2)).to(device)
    opt = th.optim.Adam(net.parameters(), lr=3e-4)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with th.no_grad():
            for _ in range(16):
                net(th.randn(4, 8, device=device))
        for _ in range(4):
            mean = net(th.randn(64, 8, device=device))
            dist = th.distributions.Normal(mean, th.ones_like(mean))
            loss = -dist.log_prob(th.zeros_like(mean)).mean() + dist.entropy().mean()
            opt.zero_grad()
            loss.backward()
            th.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
            opt.step()


def _dist_version() -> str | None:
    """torch's version as pip installed it: what ``core.estimate.calibration`` keys a calibration by (a PyPI CUDA
    wheel says ``2.11.0`` there and ``2.11.0+cu130`` in ``torch.__version__``)."""
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def measure(index: int, loop_s: float = 2.0) -> dict[str, Any]:
    nvml = _Nvml()  # before torch touches CUDA: each card's reading without this process
    import torch as th

    if not th.cuda.is_available():
        return {"error": f"this torch ({th.__version__}) sees no CUDA device"}
    if not 0 <= index < th.cuda.device_count():
        return {"error": f"no CUDA device {index}: this torch sees {th.cuda.device_count()}"}
    device = th.device(f"cuda:{index}")
    steps = []
    th.zeros(1, device=device)
    nvml.attach(f"cuda:{index}")
    steps.append(_step("context", nvml, th, device))
    a = th.randn(256, 256, device=device)
    _ = a @ a
    steps.append(_step("matmul", nvml, th, device))
    lin = th.nn.Linear(64, 64).to(device)
    opt = th.optim.Adam(lin.parameters())
    th.tanh(lin(th.randn(64, 64, device=device))).sum().backward()
    opt.step()
    steps.append(_step("mlp", nvml, th, device))
    _training_loop(th, device, loop_s)
    steps.append(_step("loop", nvml, th, device))
    conv = th.nn.Conv2d(4, 32, 8, 4).to(device)
    conv(th.randn(8, 4, 84, 84, device=device)).sum().backward()
    steps.append(_step("conv", nvml, th, device))
    props = th.cuda.get_device_properties(device)
    return {
        "index": index, "name": nvml.facts.get("name") or props.name, "uuid": nvml.facts.get("uuid"),
        "driver": nvml.facts.get("driver"), "nvml_error": nvml.facts.get("nvml_error"),
        "torch": th.__version__, "torch_dist": _dist_version(), "cuda": th.version.cuda, "cudnn": th.backends.cudnn.version(),
        "os": platform.system(), "os_release": platform.release(),
        "module_loading": os.environ.get("CUDA_MODULE_LOADING") or "LAZY (torch's default)",
        "memory_total_bytes": int(props.total_memory), "compute_capability": f"{props.major}.{props.minor}",
        "steps": steps,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=int, default=0, help="the CUDA device (as torch numbers them)")
    parser.add_argument("--loop-seconds", type=float, default=2.0, help="seconds of the training loop step")
    args = parser.parse_args(argv)
    try:
        result = measure(args.index, args.loop_seconds)
    except Exception as exc:  # a driver error, out of memory: one line the caller shows
        result = {"error": f"{type(exc).__name__}: {exc}"}
    json.dump(result, sys.stdout)
    return 0 if "error" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
