"""A GPU driver reset (Windows' TDR) told apart from other CUDA errors (issue 43): the run's failure kind
``gpu_reset`` and a reason that names the fix.

A GPU kernel that runs past Windows' watchdog limit (``TdrDelay``, 2 s by default) makes Windows reset the display
driver ("Display driver stopped responding and has recovered"); the process's CUDA work is lost and torch raises one
of the errors below. Nothing in the run's config is wrong and its checkpoint is whole, so a resume may well run: the
failure is resumable like a crash (``core.launch.auto_resume``), unlike a failure that would repeat.

The messages are CUDA's own (``cudaGetErrorString``), which torch puts after "CUDA error: " (c10/cuda's
``C10_CUDA_CHECK``; ``torch.AcceleratorError`` since 2.8, a ``RuntimeError`` before), on the first line of a
multi-line message:

- ``cudaErrorLaunchTimeout`` (702): "the launch timed out and was terminated": the watchdog ended the kernel
  (CUDA Runtime API, "Data types": "the device kernel took too long to execute ... only if timeouts are enabled").
- ``cudaErrorLaunchFailure`` (719): "unspecified launch failure": what torch reports on Windows after a TDR
  (pytorch/pytorch#39872, #27837: fixed by raising ``TdrDelay``).

Not a reset: "an illegal memory access was encountered" (``cudaErrorIllegalAddress``: a kernel's own bug, which a
resume would repeat) and every other CUDA error: those stay kind ``cuda``.
"""

from __future__ import annotations

import re

KIND = "gpu_reset"
LABEL = "GPU driver reset"
RESET_MESSAGES = ("unspecified launch failure", "the launch timed out and was terminated")
TDR_KEY = r"HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers"
_ENV_LABEL = re.compile(r"^(env \d+ \([^)]*\))")  # core.worker.lean_vec_env's label of an env process


def reset_line(text: str) -> str | None:
    """The line of ``text`` (an error's message, an env process's traceback) that says the driver reset, from
    "CUDA error" on when it says so; None when no line does."""
    for line in text.splitlines():
        lowered = line.lower()
        if any(m in lowered for m in RESET_MESSAGES):
            start = lowered.find("cuda error")
            return line[start if start >= 0 else 0:].strip()[:200]
    return None


def reset_reason(line: str, env_message: str | None = None) -> str:
    """What happened and the fix, for a reset seen as ``line`` (``reset_line``'s); ``env_message``: the
    ``EnvProcessError``'s message when an env process (one that uses CUDA) raised it."""
    where = ""
    if env_message is not None:
        label = _ENV_LABEL.match(env_message.strip())
        where = f" in {label.group(1)}" if label else " in an env process"
    return (f"{LABEL}{where}: {line}. Windows' watchdog (TDR) resets the driver when a GPU kernel runs past its limit "
            f"(2 s by default). Fix: raise TdrDelay (DWORD seconds, e.g. 10, in {TDR_KEY}; then restart Windows) or "
            "give each GPU call less work (a smaller batch_size or network, fewer n_envs); it can resume from its last "
            "checkpoint")
