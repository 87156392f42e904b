"""Will this run fit? The estimate of a run's GPU and host memory before launch, and the fix when it does not.

``estimate`` (the entry) = ``compute`` (the terms, from ``families/``, ``networks``, ``buffers`` and a GPU profile
from ``gpus``) + ``suggest`` (the fix), giving a ``result.FitEstimate``. ``calibration`` (the card's measured
constants), ``measured`` (the user's own network measured in a worker child, cached), ``disk`` (checkpoint sizes:
the free-space check before a launch), ``device`` (which device a worker launched here trains on, without torch;
the torch threads it resolves), ``jax_device`` and ``xla`` (the same for an SBX run: JAX's devices, XLA's pool),
``library_probe`` (torch's or jax's facts asked once in a child, kept per interpreter and version).

Not here: the machine's report (``core.machine``), live readings (``core.telemetry``). The detail: docs/estimate.md."""
