"""The worker process and the children that import torch: the one place (with the agent tools) that loads
torch, stable-baselines3 and SBX's jax (an import-linter contract).

The worker: ``worker`` (the process: ``python -m``, started by the supervisor; an SBX run's XLA settings before jax
loads), ``session`` (one attempt), ``factory`` (env and model from the config; the train device), ``sbx_engine``
(the one module that imports jax and sbx), ``lean_vec_env`` (``LeanSubprocVecEnv``, its env processes in
``core.envproc``), ``env_replacement`` and ``restart_log`` (an env process replaced mid-run), ``callbacks``,
``cycle_clock`` (each update cycle split into collecting, training and the rest), ``checkpoints`` (the writer),
``best`` (``KeepBest``), ``stop_rules`` (the budget's stopping rules), ``health`` (NaN losses, collapse),
``watchdog`` (``StallWatch``), ``guarding`` (the GPU guard's pause), ``devices`` (the run's NVML GPU), ``baseline``,
``fit_record`` (the estimate kept with the run), ``gpu_reset`` (a driver reset told from other CUDA errors).
The children: ``probe`` (torch's facts), ``jax_probe``, ``measure`` and ``sbx_measure`` (a network's exact bytes),
``calibrate`` (the CUDA probe of self-calibration), ``throughput`` (one tune probe).

Not here: the run folder's format (``core.run``), launching (``core.launch``). docs/processes.md."""
