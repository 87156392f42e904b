"""Telemetry: what the GPUs and the host read, recorded and read back. Knows files, not run folders: the
caller names the file.

``nvml`` (``GpuSampler``, ``GpuSample``: every NVML call through one wrapper, "not available" as a value), ``wddm``
(the run's GPU memory on Windows: the "GPU Process Memory" counter), ``gpu_measure`` (nvml_process | wddm_counter |
torch_reserved), ``host`` (``HostSampler``; ``own_memory``: a process tree's memory), ``recorder`` (the worker's
recording thread: telemetry.jsonl), ``thinning``, ``summary`` (what is read back), ``thresholds`` (readings near a
limit: the one rule), ``guard`` (``GpuGuard``: too hot -> paused, memory >= 95 % -> warning), ``throttle`` (NVML's
clock event reasons), ``energy`` (kWh), ``devices`` (which NVML GPU a CUDA device is).

Not here: the doctor's report (``core.machine``). The detail: docs/telemetry.md."""
