"""Which figure a run's own GPU memory is: the measure named beside it in telemetry and summary.json.

- ``nvml_process``: NVML's per-process figure (Linux, and Windows cards in TCC mode): the whole
  process, CUDA context included.
- ``wddm_counter``: Windows' counter "GPU Process Memory ... Dedicated Usage" (``core.telemetry.wddm``),
  read where NVML lists the process without a figure (Windows' default driver model, WDDM): the
  whole process too, as Windows counts it.
- ``torch_reserved``: torch's ``memory_reserved()``, where neither has a figure: the allocator's
  memory only, without the ~740 MiB of CUDA context measured outside it (H100/H200, 2026-11-28).

The estimate models the whole process, so only the first two compare with it
(``core.run.card_history``). Telemetry and summaries written before the measures had names say
"nvml" or "torch"; ``gpu_measure`` reads both spellings.
"""

from __future__ import annotations

from typing import Any

NVML_PROCESS = "nvml_process"
WDDM_COUNTER = "wddm_counter"
TORCH_RESERVED = "torch_reserved"
MEASURES = (NVML_PROCESS, WDDM_COUNTER, TORCH_RESERVED)
WHOLE_PROCESS = frozenset({NVML_PROCESS, WDDM_COUNTER})  # what the estimate models: CUDA context included
_OLD_NAMES = {"nvml": NVML_PROCESS, "torch": TORCH_RESERVED}  # process_memory_source before the measures had names

# the measure in a few words (a plot's legend, ~200 px on a laptop) and in full (``rlpanel runs ID``, tooltips)
SHORT_WORDS = {NVML_PROCESS: "NVML", WDDM_COUNTER: "WDDM counter",
               TORCH_RESERVED: "torch reserved, no CUDA context"}
WORDS = {NVML_PROCESS: "its own processes, NVML's per-process figure",
         WDDM_COUNTER: "its own processes, Windows' GPU Process Memory counter (Task Manager's dedicated GPU memory): "
                       "NVML has no per-process figure under WDDM",
         TORCH_RESERVED: "torch's reserved memory: the CUDA context (~0.7 GiB) not included, "
                         "no per-process figure from NVML or Windows"}


def gpu_measure(value: Any) -> str | None:
    """The measure a telemetry line's ``process_memory_source`` or a summary's field names; None: unknown."""
    if not isinstance(value, str):
        return None
    return value if value in MEASURES else _OLD_NAMES.get(value)
