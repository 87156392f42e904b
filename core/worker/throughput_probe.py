"""``python -m core.worker.throughput_probe``: the throughput probes of ``rlpanel tune``.

A probe is a real, short training of a config in this process (its envs as the config says:
subprocess envs are children of this one), measured over whole update cycles (one collection
plus its update, so the figure counts the gradient work a setting brings with it). The warm-up is
left out: starting the process, importing torch, making the envs and the model, cycles that end in
the first ``--warmup-s`` of learning and, off-policy, the random play before ``learning_starts``.
Writes ``{steps_per_s, steps, seconds, host_peak_bytes, gpu_peak_bytes, device, cycles, learn_s, collect_s, train_s}``
(collect_s, train_s: of ``seconds``, the time collecting and the time between a rollout's end and the next start)
(or ``{error}``) to OUT atomically, and the figures so far after every measured cycle.

``CONFIG OUT --seconds N`` probes one config. ``--serve`` probes one candidate per stdin line
(``{"config", "out", "seconds", "warmup_s"}``) and answers ``{"done": OUT}`` on stdout after each:
importing torch and SB3 and starting the process (~8 s of a ~14 s probe on a loaded machine) is
paid once for all the candidates that share the settings a process is started with
(``ProbeProcess``). Anything else this process prints goes to stderr, so stdout carries only answers.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

from core.config.algorithms.off_policy import OffPolicyParams
from core.config.engines import check_engine
from core.config.schema import RunConfig
from core.config.validate import validate_config
from core.estimate.device import worker_threads
from core.estimate.xla import set_jax_env
from core.telemetry.host import HostMemoryReader
from core.util.files import write_json_atomic
from core.util.procs import process_tree
from core.util.yaml_reader import read_yaml_mapping
from core.worker.main import set_thread_env

PROBE_LEARNING_STARTS = 1000  # a probe measures the steady state: long random play first is not what it is after
NEVER_ENDS = 10**12            # the probe stops itself; the budget must not end it first
WRITE_EVERY_S = 2.0            # the figures so far, for a probe its timeout ends


class PeakMemory:
    """The largest host memory of this process tree (the worker and its env processes, each counted by its own
    memory: ``core.telemetry.host.own_memory``), sampled on a thread as often as its cost allows
    (``HostMemoryReader``: reading 33 processes' own memory takes tens of ms of CPU a probe would lose)."""

    def __init__(self, period_s: float = 0.1):
        self.peak = 0
        self._reader = HostMemoryReader(min_period_s=period_s)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="tune-memory", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def sample(self) -> None:
        memory = self._reader.read(process_tree(os.getpid()), time.monotonic())
        if memory is not None:
            self.peak = max(self.peak, memory.memory_bytes)

    def _loop(self) -> None:
        while not self._stop.wait(self._reader.period_s):
            self.sample()

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sample()
        return self.peak


def probe_config(cfg: RunConfig) -> RunConfig:
    """The config as probed: a budget that never ends first, short random play, no checkpoints or evaluation."""
    raw = cfg.model_dump(mode="json")
    raw["budget"].update(total_timesteps=NEVER_ENDS, eval_every=0, checkpoint_every=NEVER_ENDS)
    section = cfg.spec.section if cfg.spec else None
    if section and "learning_starts" in raw.get(section, {}):
        raw[section]["learning_starts"] = min(int(raw[section]["learning_starts"]), PROBE_LEARNING_STARTS)
    return validate_config(raw).config


def measure(cfg: RunConfig, seconds: float, warmup_s: float, out: Path | None = None) -> dict[str, Any]:
    """Train ``cfg`` until about ``seconds`` of whole cycles after the warm-up are measured (at least one); the figures.

    With ``out``, the figures so far are written there after every measured cycle: a probe ended
    by its timeout still says what it measured.
    """
    import torch as th

    from core.worker.factory import build_model, build_vec_env, worker_device, wrap_normalize
    from core.worker.session import apply_runtime_flags

    cfg = probe_config(cfg)
    learning_starts = cfg.params.learning_starts if isinstance(cfg.params, OffPolicyParams) else 0
    # SBX compiles its policy and its update in the first cycle that uses them (seconds: a 1-step SAC cycle measured
    # ~0 steps/s with it), which a long run pays once: that cycle is warm-up too
    compiling = 1 if cfg.runtime.engine == "sbx" else 0

    memory = PeakMemory()
    memory.start()
    device = worker_device(cfg)  # decided once, as the worker does
    apply_runtime_flags(cfg, device)
    if th.cuda.is_initialized():  # a serving process: the peak of the candidates before is not this one's
        th.cuda.reset_peak_memory_stats()
    env, _ = build_vec_env(cfg)
    env = wrap_normalize(cfg, env)
    try:
        model = build_model(cfg, env, device.torch)
        clock = probe_clock(seconds, warmup_s, learning_starts, compiling, out, memory)
        model.learn(total_timesteps=NEVER_ENDS, callback=clock)
        learn_s = time.perf_counter() - clock.t0  # the rest of the probe's time is its set-up: the tuner budgets both
    finally:
        env.close()
    host = memory.stop()
    trained_on = device.train  # JAX's device for an SBX probe, torch's for SB3
    sbx = cfg.runtime.engine == "sbx"
    gpu = (jax_gpu_peak_bytes() if sbx else int(th.cuda.max_memory_reserved())) if trained_on.startswith("cuda") else 0
    if clock.start is None or clock.last is None:
        return {"error": "no whole update cycle finished after the warm-up", "host_peak_bytes": host, "learn_s": learn_s}
    return {**figures(clock.start, clock.last, clock.cycles, host), "gpu_peak_bytes": gpu, "device": trained_on,
            "learn_s": learn_s, "torch_threads": th.get_num_threads(), "collect_s": clock.collect_s, "train_s": clock.train_s}


def probe_clock(seconds: float, warmup_s: float, learning_starts: int, compiling: int, out: Path | None,
                memory: PeakMemory) -> Any:
    """The probe's callback: marks (time, steps) at every cycle start past the warm-up and stops at the cycle start
    nearest to ``seconds`` measured (``compiling``: the first cycles, SBX's, that are warm-up too)."""
    from stable_baselines3.common.callbacks import BaseCallback

    class ProbeClock(BaseCallback):
        """Marks (time, steps) at every cycle start; stops at the cycle start nearest to ``seconds`` measured."""

        def __init__(self) -> None:
            super().__init__()
            self.t0 = time.perf_counter()  # learn() starts: the process, imports, envs and model are behind
            self.start: tuple[float, int] | None = None
            self.last: tuple[float, int] | None = None
            self.cycles = 0
            self.written = self.t0
            self.done = False
            self.rollout_end: float | None = None
            self.compiling = compiling  # cycles left that compile (SBX's first): not measured
            self.collect_s = self.train_s = 0.0  # of the measured cycles: collecting, and training (the rest between)

        def _on_rollout_end(self) -> None:
            self.rollout_end = time.perf_counter()

        def _on_rollout_start(self) -> None:
            now, steps = time.perf_counter(), self.num_timesteps
            if self.start is None or now - self.t0 < warmup_s:  # cycles in the first warmup_s move the start on
                if steps >= learning_starts and self.compiling:
                    self.compiling -= 1
                elif steps >= learning_starts:
                    self.start = (now, steps)
                    self.collect_s = self.train_s = 0.0
                return
            previous = self.last[0] if self.last is not None else self.start[0]
            if self.rollout_end is not None:  # the cycle's split: its collection, then its training (core.run.time_split)
                self.collect_s += self.rollout_end - previous
                self.train_s += now - self.rollout_end
            self.last, self.cycles = (now, steps), self.cycles + 1
            # the boundary nearest to `seconds` (this one or, a cycle as long again, the next): a PPO cycle of
            # 2,048 steps is ~5 s on a busy 2-core machine, and "at least 6 s" measured two, ~10 s per probe
            if now - self.start[0] + (now - previous) / 2 >= seconds:
                self.done = True
            elif out is not None and now - self.written >= WRITE_EVERY_S:  # off-policy cycles can be a few steps
                self.written = now
                write_json_atomic(out, {**figures(self.start, self.last, self.cycles, memory.peak), "partial": True,
                                        "collect_s": self.collect_s, "train_s": self.train_s})

        def _on_step(self) -> bool:
            return not self.done

    return ProbeClock()


def jax_gpu_peak_bytes() -> int | None:
    """JAX's peak GPU memory (an SBX probe on a GPU), as torch's peak reserved is an SB3 probe's; None where JAX does not
    say. JAX cannot reset its peak: in a serving child it is the largest since the child started, never below the
    candidate's own. Read only, not run: the development machine has no GPU. JAX is the one the run loaded
    (``core.worker.sbx_engine`` alone imports it)."""
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    device = jax.config.jax_default_device or jax.devices()[0]
    stats = device.memory_stats() or {}
    peak = stats.get("peak_bytes_in_use")
    return int(peak) if peak is not None else None


def figures(start: tuple[float, int], last: tuple[float, int], cycles: int, host: int) -> dict[str, Any]:
    elapsed, steps = last[0] - start[0], last[1] - start[1]
    return {"steps_per_s": steps / elapsed if elapsed > 0 else None, "steps": steps, "first_step": start[1], "seconds": elapsed,
            "cycles": cycles, "host_peak_bytes": host}


def process_settings(cfg: RunConfig) -> dict[str, Any]:
    """What a process is started with and cannot change for a later candidate: the thread counts of
    ``set_thread_env`` are read by torch, OpenBLAS and the env processes' forkserver when they load (a thread
    count of torch's own default cannot be restored once another was set, and torch's inter-op count not at
    all once it ran), and a process that brought up CUDA holds its context's host memory, which a CPU
    candidate's figure must not count. Subprocess envs keep their forkserver for the rest of the process:
    a dummy candidate after them would count it. JAX reads its settings once, when it loads, and an SB3
    candidate's figure must not count the hundreds of MiB JAX holds."""
    rt = cfg.runtime
    return {"device": rt.device, "vec_env": rt.vec_env, "torch_threads": probe_threads(cfg), "engine": rt.engine}


def probe_threads(cfg: RunConfig) -> int:
    """The torch threads the real run of ``cfg`` uses here, "auto" resolved as the worker does: what the probe
    measures with (an empty ``torch_threads`` is not torch's own default in a run, so not in its probe either)."""
    return worker_threads(cfg, cfg.runtime.device).count


class ProbeProcess:
    """This process as a prober: the first candidate fixes its ``process_settings``; each later one must match."""

    def __init__(self) -> None:
        self.settings: dict[str, Any] | None = None

    def probe(self, config_path: Path, out: Path, seconds: float, warmup_s: float) -> dict[str, Any]:
        """Probe the config in ``config_path``; its figures, or ``{error}`` (never raises)."""
        try:
            cfg = validate_config(read_yaml_mapping(config_path), source=str(config_path)).config
            wanted = process_settings(cfg)
            engine = check_engine(cfg)  # sbx not installed here: the row names the fix, not a ModuleNotFoundError
            if engine:
                return {"error": str(engine[0])}
            if self.settings is None:
                set_thread_env(wanted["torch_threads"], cfg.runtime.vec_env != "dummy")  # as the worker, before torch
                if cfg.runtime.engine == "sbx":
                    set_jax_env(cfg.runtime.device, sys.platform)  # as the worker, before jax
                self.settings = wanted
            elif wanted != self.settings:
                return {"error": f"this probe process was started for {self.settings}; {wanted} needs a fresh one"}
            return measure(cfg, seconds, warmup_s, out)
        except Exception as exc:  # noqa: BLE001 - the tuner reads every failure from the file
            print(traceback.format_exc(), file=sys.stderr, flush=True)
            return {"error": f"{type(exc).__name__}: {exc}".strip()[:500]}
        finally:
            release_memory()


def release_memory() -> None:
    """Give back what the candidate held before the next is measured: its objects, torch's cached GPU blocks and
    the heap glibc keeps (the next candidate's host figure starts from what the process holds)."""
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        torch.cuda.empty_cache()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc (musl): its heap stays as it is
            pass


def serve(requests: TextIO, answers: TextIO) -> int:
    """Probe each candidate ``requests`` names, one per line, until it ends; answer each on ``answers``."""
    process = ProbeProcess()
    for line in requests:
        if not line.strip():
            continue
        request = json.loads(line)
        out = Path(request["out"])
        result = process.probe(Path(request["config"]), out, float(request["seconds"]), float(request.get("warmup_s", 0.5)))
        write_json_atomic(out, result)
        answers.write(json.dumps({"done": str(out)}) + "\n")
        answers.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.worker.throughput_probe")
    parser.add_argument("config", type=Path, nargs="?", help="the full run config to probe (YAML)")
    parser.add_argument("out", type=Path, nargs="?", help="where the JSON result goes")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured time after the warm-up")
    parser.add_argument("--warmup-s", type=float, default=0.5, help="cycles ending this early in learning are not measured")
    parser.add_argument("--serve", action="store_true", help="probe the candidates named on stdin, one JSON object a line")
    args = parser.parse_args(argv)
    if args.serve:
        answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)  # what SB3, torch or an env print goes to the log; stdout carries the answers alone
        return serve(sys.stdin, answers)
    if args.config is None or args.out is None:
        parser.error("CONFIG and OUT are needed unless --serve")
    result = ProbeProcess().probe(args.config, args.out, args.seconds, args.warmup_s)
    write_json_atomic(args.out, result)
    return 0 if "error" not in result else 1


if __name__ == "__main__":
    sys.exit(main())
