"""The tune's budget: no probe starts when the budget cannot hold it, and one slow candidate does not end the tune.

The probes here are a scripted prober on a scripted clock (real probes are tested in test_probe_pool and
test_devices): the figures are the ones measured on the 2-core machine, where the user's config with torch's
own threads ran one ~50 s cycle under load, a process start cost ~9 s and a probe in a running process ~1 s
besides its time in learn().
"""

from __future__ import annotations

import pytest

import core.throughput.search as search
import core.util.threads
from core.config.validate import validate_config
from core.throughput.probe import ProbeResult, process_key
from core.throughput.search import TuneOptions, Tuner

CPU_TORCH = {"torch": "2.13.0+cpu", "cuda_available": False, "devices": []}
SB3 = ["sb3"]  # one engine: the engine's own dimension is test_engines'


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


class ScriptedProber:
    """Answers like the pool: a start for each new process key; torch's own threads are slow on this busy machine."""

    def __init__(self, clock: Clock, start_s: float = 9.0, warm_s: float = 1.0, learn_s: float = 6.0) -> None:
        self.clock, self.start_s, self.warm_s, self.learn_s = clock, start_s, warm_s, learn_s
        self.keys: set[tuple] = set()
        self.probed: list[tuple[float, float]] = []  # (start, end) on the clock

    def starts_process(self, cfg) -> bool:
        return process_key(cfg) not in self.keys

    def probe(self, cfg, seconds, timeout_s=None, cancel=None) -> ProbeResult:
        fresh = self.starts_process(cfg)
        self.keys.add(process_key(cfg))
        slow = cfg.runtime.torch_threads is None
        learn = 51.0 if slow else self.learn_s
        wall = learn + (self.start_s if fresh else self.warm_s)
        begin = self.clock.now
        self.clock.now += wall
        self.probed.append((begin, self.clock.now))
        speed = 40.0 if slow else 600.0 + 10 * cfg.runtime.n_envs
        return ProbeResult(speed, 300 << 20, 0, None, wall, fresh, learn_s=learn)

    def close(self) -> None:
        pass


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(search.time, "monotonic", clock.monotonic)
    return clock


def test_a_slow_first_candidate_does_not_end_the_tune_and_no_probe_outlasts_the_budget(clock, monkeypatch):
    # 8 cores: "auto" is 8 threads, slow here, and the tune tries one (on <= 2 cores auto is one already: no such probe)
    monkeypatch.setattr(core.util.threads, "usable_cores", lambda: 8)
    cfg = validate_config({"algo": "PPO", "env": {"id": "CartPole-v1"}, "runtime": {"device": "cpu"}}).config
    prober = ScriptedProber(clock)
    result = Tuner(cfg, TuneOptions(budget_s=120, facts=CPU_TORCH, engines=SB3), prober=prober).run()
    assert prober.probed[0][1] - prober.probed[0][0] == 60.0  # the user's config: one ~50 s cycle and a start
    assert len(prober.probed) >= 5, prober.probed  # a mean of the walls so far stopped the old tune here, after 1
    assert result.stopped == "budget" and prober.probed[-1][1] - 1000.0 <= 120.0
    assert result.picked is not None and result.picked.settings["runtime.torch_threads"] == 1


def test_no_one_thread_candidate_where_auto_is_one_thread_already(clock, monkeypatch):
    monkeypatch.setattr(core.util.threads, "usable_cores", lambda: 2)  # auto: 1 thread, the candidate's own run
    cfg = validate_config({"algo": "PPO", "env": {"id": "CartPole-v1"}, "runtime": {"device": "cpu"}}).config
    result = Tuner(cfg, TuneOptions(budget_s=120, facts=CPU_TORCH, engines=SB3), prober=ScriptedProber(clock)).run()
    assert len(result.rows) >= 2 and all(r.settings["runtime.torch_threads"] is None for r in result.rows)


def test_the_next_probe_is_expected_to_cost_a_start_only_when_it_needs_one(clock):
    cfg = validate_config({"algo": "PPO", "env": {"id": "CartPole-v1"},
                           "runtime": {"device": "cpu", "torch_threads": 1}}).config
    # starts cost 30 s here: a budget that holds warm probes after the first but no second start
    prober = ScriptedProber(clock, start_s=30.0)
    result = Tuner(cfg, TuneOptions(budget_s=60, facts=CPU_TORCH, engines=SB3), prober=prober).run()
    vecs = [r.settings["runtime.vec_env"] for r in result.rows]
    assert vecs[0] == "dummy" and "subproc" not in vecs  # a subproc probe needs a second start: 36 s did not fit
    assert len(prober.keys) == 1 and len(prober.probed) >= 3  # warm dummy probes (7 s each) did
    assert prober.probed[-1][1] - 1000.0 <= 60.0
