"""Issue 11, point 10: what ended an attempt, in words a user can act on (disk full, no memory)."""

from __future__ import annotations

import errno

import pytest


def test_a_full_disk_says_so_and_that_the_run_resumes(tmp_path):
    from core.worker.checkpoints import CheckpointError
    from core.worker.main import failure_reason  # torch: when run, not at collection
    reason = failure_reason(OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "metrics.jsonl")))
    assert reason.startswith("no space left on device") and "metrics.jsonl" in reason
    assert "resumes from its last checkpoint once there is space" in reason
    ckpt = CheckpointError(errno.ENOSPC, "no space left on device while writing checkpoint step_000000000512 (x.zip)")
    assert failure_reason(ckpt).startswith("no space left on device while writing checkpoint step_000000000512")


def test_out_of_memory_names_what_to_lower():
    from core.worker.main import failure_reason  # torch: when run, not at collection
    assert "out of memory (host RAM)" in failure_reason(MemoryError())
    assert "buffer_size" in failure_reason(MemoryError())

    class OutOfMemoryError(RuntimeError):  # torch.cuda.OutOfMemoryError, by name
        pass

    reason = failure_reason(OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert reason.startswith("out of GPU memory: CUDA out of memory") and "rlpanel estimate" in reason

    class JaxRuntimeError(RuntimeError):  # jax.errors.JaxRuntimeError (XlaRuntimeError before), by name: an SBX run's
        pass

    from core.worker.main import failure
    kind, reason = failure(JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 2147483648 bytes."))
    assert kind == "gpu_oom" and reason.startswith("out of GPU memory: RESOURCE_EXHAUSTED: Out of memory while trying")
    assert failure(JaxRuntimeError("INTERNAL: something else"))[0] == "error"


def test_other_errors_keep_their_type_and_message():
    from core.worker.main import failure_reason  # torch: when run, not at collection
    assert failure_reason(ValueError("bad thing")) == "ValueError: bad thing"



def test_an_env_process_error_is_its_first_line_without_the_env_processs_traceback():
    from core.worker.lean_vec_env import EnvProcessError
    from core.worker.main import failure_reason  # torch: when run, not at collection
    exc = EnvProcessError("env 0 (my_envs:Thing, pid 7) could not be made: ModuleNotFoundError: No module named 'my_envs'\n"
                          "the env process's traceback:\nTraceback (most recent call last):\n  File ...")
    assert failure_reason(exc) == ("EnvProcessError: env 0 (my_envs:Thing, pid 7) could not be made: ModuleNotFoundError: "
                                   "No module named 'my_envs'")


# issue 43: a GPU driver reset (Windows' TDR) is its own kind, resumable like a crash, and names the fix
TORCH_RESET = ("CUDA error: unspecified launch failure\nCUDA kernel errors might be asynchronously reported at some other "
               "API call, so the stacktrace below might be incorrect.\nFor debugging consider passing "
               "CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


@pytest.mark.parametrize("message", [TORCH_RESET, "CUDA error: the launch timed out and was terminated\nCUDA kernel "
                                                  "errors might be asynchronously reported",
                                     "CUDA driver error: unspecified launch failure"])
def test_a_driver_resets_cuda_errors_are_a_gpu_reset_that_names_tdrdelay_and_what_a_run_can_change(message):
    from core.worker.main import failure  # torch: when run, not at collection

    class AcceleratorError(RuntimeError):  # torch.AcceleratorError (2.8+), by name; a RuntimeError before
        pass

    for exc in (RuntimeError(message), AcceleratorError(message)):
        kind, reason = failure(exc)
        assert kind == "gpu_reset"
        first = message.splitlines()[0]
        assert reason.startswith(f"GPU driver reset: {first}. "), reason
        assert "\n" not in reason and "TORCH_USE_CUDA_DSA" not in reason, "the error's first line, not torch's advice"
        assert "Windows' watchdog (TDR) resets the driver when a GPU kernel runs past its limit (2 s by default)" in reason
        assert r"raise TdrDelay (DWORD seconds, e.g. 10, in HKLM\SYSTEM\CurrentControlSet\Control\GraphicsDrivers; " \
               "then restart Windows)" in reason
        assert "a smaller batch_size or network, fewer n_envs" in reason
        assert reason.endswith("it can resume from its last checkpoint")
        assert len(reason) < 450, "a notification keeps 600 characters: what follows (the planned resume) must fit"


def test_a_driver_reset_in_an_env_process_names_the_env():
    from core.worker.env_replacement import EnvProcessError, EnvsAborted
    from core.worker.main import failure  # torch: when run, not at collection
    # lean_vec_env's message: the env's label, the last line of its traceback, then the whole traceback (torch's
    # message is several lines: its last line is advice, the error is further up)
    traceback = ("Traceback (most recent call last):\n  File \"my_env.py\", line 9, in step\n    x = obs.cuda()\n"
                 f"RuntimeError: {TORCH_RESET}").strip()
    exc = EnvProcessError("env 3 (my_envs:GpuSim, pid 4242) failed during step: Compile with `TORCH_USE_CUDA_DSA` to "
                          f"enable device-side assertions.\nthe env process's traceback:\n{traceback}")
    kind, reason = failure(exc)
    assert kind == "gpu_reset"
    assert reason.startswith("GPU driver reset in env 3 (my_envs:GpuSim, pid 4242): CUDA error: unspecified launch "
                             "failure. "), reason
    assert "TdrDelay" in reason
    kind, reason = failure(EnvsAborted("every env process was ended: CUDA error: unspecified launch failure"))
    assert kind == "gpu_reset" and reason.startswith("GPU driver reset in an env process: CUDA error"), reason


@pytest.mark.parametrize("message", ["CUDA error: an illegal memory access was encountered",
                                     "CUDA error: uncorrectable ECC error encountered",
                                     "CUDA error: device-side assert triggered"])
def test_other_cuda_errors_stay_cuda_errors(message):
    from core.worker.env_replacement import EnvProcessError
    from core.worker.main import failure  # torch: when run, not at collection
    assert failure(RuntimeError(message)) == ("cuda", f"RuntimeError: {message}")
    kind, reason = failure(EnvProcessError(f"env 0 (x:Y, pid 7) failed during step: RuntimeError: {message}\n..."))
    assert (kind, reason) == ("env", f"EnvProcessError: env 0 (x:Y, pid 7) failed during step: RuntimeError: {message}")
