"""``python -m core.worker.torch_probe``: torch / CUDA / SB3 facts as JSON, for ``rlpanel doctor``.

A separate process, so the CLI and the GUI never import torch themselves.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def probe() -> dict[str, Any]:
    import gymnasium
    import stable_baselines3
    import torch as th

    cuda = th.cuda.is_available()
    devices = []
    for i in range(th.cuda.device_count() if cuda else 0):
        props = th.cuda.get_device_properties(i)
        major, minor = props.major, props.minor
        devices.append({"index": i, "name": props.name, "memory_total_bytes": props.total_memory,
                        "compute_capability": f"{major}.{minor}", "tf32_supported": major >= 8})
    return {
        "torch": th.__version__,
        "torch_cuda_build": th.version.cuda,
        "cuda_available": cuda,
        "cudnn": th.backends.cudnn.version() if cuda else None,
        "devices": devices,
        "tf32_matmul_default": th.backends.cuda.matmul.allow_tf32,
        "torch_threads": th.get_num_threads(),
        "stable_baselines3": stable_baselines3.__version__,
        "gymnasium": gymnasium.__version__,
    }


if __name__ == "__main__":
    json.dump(probe(), sys.stdout)
