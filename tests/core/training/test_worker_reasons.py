"""Issue 11, point 10: what ended an attempt, in words a user can act on (disk full, no memory)."""

from __future__ import annotations

import errno


def test_a_full_disk_says_so_and_that_the_run_resumes(tmp_path):
    from core.training.checkpoints import CheckpointError
    from core.training.worker import failure_reason  # torch: when run, not at collection
    reason = failure_reason(OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "metrics.jsonl")))
    assert reason.startswith("no space left on device") and "metrics.jsonl" in reason
    assert "resumes from its last checkpoint once there is space" in reason
    ckpt = CheckpointError(errno.ENOSPC, "no space left on device while writing checkpoint step_000000000512 (x.zip)")
    assert failure_reason(ckpt).startswith("no space left on device while writing checkpoint step_000000000512")


def test_out_of_memory_names_what_to_lower():
    from core.training.worker import failure_reason  # torch: when run, not at collection
    assert "out of memory (host RAM)" in failure_reason(MemoryError())
    assert "buffer_size" in failure_reason(MemoryError())

    class OutOfMemoryError(RuntimeError):  # torch.cuda.OutOfMemoryError, by name
        pass

    reason = failure_reason(OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert reason.startswith("out of GPU memory: CUDA out of memory") and "rlpanel estimate" in reason


def test_other_errors_keep_their_type_and_message():
    from core.training.worker import failure_reason  # torch: when run, not at collection
    assert failure_reason(ValueError("bad thing")) == "ValueError: bad thing"



def test_an_env_process_error_is_its_first_line_without_the_env_processs_traceback():
    from core.training.lean_vec_env import EnvProcessError
    from core.training.worker import failure_reason  # torch: when run, not at collection
    exc = EnvProcessError("env 0 (my_envs:Thing, pid 7) could not be made: ModuleNotFoundError: No module named 'my_envs'\n"
                          "the env process's traceback:\nTraceback (most recent call last):\n  File ...")
    assert failure_reason(exc) == ("EnvProcessError: env 0 (my_envs:Thing, pid 7) could not be made: ModuleNotFoundError: "
                                   "No module named 'my_envs'")
