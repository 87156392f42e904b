"""The fit estimate of a run for the card it really trains on, kept with the run.

The worker writes it into ``status.json`` (``estimate_gpu``) once it knows its GPU;
``core.run.summary`` puts it beside the measured peak in ``summary.json``
(``estimate_gpu_bytes``, ``peak_process_gpu_memory_bytes``), and ``core.run.card_history``
reads the last runs of a card back for the fit bar and the estimate's correction.
"""

from __future__ import annotations

from pathlib import Path

from core.config.errors import ConfigError
from core.config.schema import RunConfig
from core.config.spaces import EnvSpaces
from core.estimate.estimate import estimate
from core.estimate.gpus import detected_profiles
from core.run.status import write_status


def record_estimate(run_dir: Path, cfg: RunConfig, spaces: EnvSpaces, nvml_index: int) -> int | None:
    """Estimate ``cfg`` for NVML GPU ``nvml_index`` and write it into the status; the bytes, or None."""
    profile = next((p for p in detected_profiles() if p.index == nvml_index), None)
    if profile is None:
        return None
    try:
        result = estimate(cfg, spaces, profile, suggest=False, here=[profile])
    except (ConfigError, ValueError, KeyError, TypeError):  # advice only: never a reason to stop a run
        return None
    if not result.on_gpu:
        return None
    write_status(run_dir, estimate_gpu={"bytes": result.gpu_bytes, "source": profile.source, "uuid": profile.uuid,
                                        "gpu": profile.name, "engine": cfg.runtime.engine})
    return result.gpu_bytes
