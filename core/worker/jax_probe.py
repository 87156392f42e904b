"""``python -m core.worker.jax_probe``: the facts of the jax an SBX run would train with, as JSON.

The estimate's device rule for SBX configs (``core.estimate.jax_device``) asks this in a child process, as it asks
``core.worker.torch_probe`` for torch's: jax loads in seconds and the window never imports it. Preallocation is off
first, so asking takes no GPU memory.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def probe() -> dict[str, Any]:
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax

    try:
        gpus = list(jax.devices("gpu"))
    except RuntimeError:  # "Unknown backend gpu": a CPU-only jaxlib
        gpus = []
    return {"jax": jax.__version__, "backend": jax.default_backend(), "cuda_available": bool(gpus),
            "devices": [{"index": i, "name": getattr(d, "device_kind", str(d))} for i, d in enumerate(gpus)]}


if __name__ == "__main__":
    json.dump(probe(), sys.stdout)
