"""Which engine? The tune probes the user's config on SBX beside SB3 where SBX can run it, follows the faster, and its
table says which engine each row used.

The search tests use a scripted prober on a scripted clock (as test_budget does): what they check is the search's
path, not a speed. One real SBX probe checks that a probe child trains an SBX candidate and measures it.
"""

from __future__ import annotations

import pytest

import core.throughput.search as search
import core.util.threads
from core.config.validate import validate_config
from core.throughput.engines import tune_engines
from core.throughput.probe import ProbePool, ProbeResult, process_key
from core.throughput.search import TuneOptions, Tuner
from core.throughput.table import HEADER, format_table

CPU_TORCH = {"torch": "2.13.0+cpu", "cuda_available": False, "devices": []}
CARTPOLE = {"algo": "PPO", "env": {"id": "CartPole-v1"}, "runtime": {"device": "cpu"}}
SBX_SPEEDUP = 3.0  # the scripted SBX trains this many times faster


class EngineProber:
    """Answers like the pool, SBX ``SBX_SPEEDUP`` times faster; remembers each candidate's engine and threads."""

    def __init__(self, clock: list[float]) -> None:
        self.clock = clock
        self.keys: set[tuple] = set()
        self.probed: list[tuple[str, int | None]] = []

    def starts_process(self, cfg) -> bool:
        return process_key(cfg) not in self.keys

    def probe(self, cfg, seconds, timeout_s=None, cancel=None) -> ProbeResult:
        fresh = self.starts_process(cfg)
        self.keys.add(process_key(cfg))
        self.probed.append((cfg.runtime.engine, cfg.runtime.torch_threads))
        wall = 6.0 + (9.0 if fresh else 1.0)
        self.clock[0] += wall
        speed = (600.0 + 10 * cfg.runtime.n_envs) * (SBX_SPEEDUP if cfg.runtime.engine == "sbx" else 1.0)
        return ProbeResult(speed, 300 << 20, 0, None, wall, fresh, learn_s=6.0, collect_s=3.0, train_s=3.0)

    def close(self) -> None:
        pass


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(search.time, "monotonic", lambda: now[0])
    monkeypatch.setattr(core.util.threads, "usable_cores", lambda: 8)  # auto is 8 threads: an SB3 run tries one
    return now


def test_the_engines_a_tune_probes():
    ppo = validate_config(CARTPOLE).config
    assert tune_engines(ppo, sbx_here=True) == ["sb3", "sbx"]
    assert tune_engines(ppo, sbx_here=False) == ["sb3"]  # no sbx here: no engine row, nothing to install mid-tune
    a2c = validate_config({**CARTPOLE, "algo": "A2C"}).config
    assert tune_engines(a2c, sbx_here=True) == ["sb3"]  # SBX has no A2C
    own = validate_config({**CARTPOLE, "runtime": {"device": "cpu", "engine": "sbx"}}).config
    assert tune_engines(own, sbx_here=True) == ["sbx", "sb3"]  # the user's own engine first: its row is the baseline


def test_the_tune_probes_sbx_follows_the_faster_engine_and_says_which_each_row_used(clock):
    cfg = validate_config(CARTPOLE).config
    prober = EngineProber(clock)
    result = Tuner(cfg, TuneOptions(budget_s=200, facts=CPU_TORCH, engines=["sb3", "sbx"]), prober=prober).run()
    rows = result.rows
    assert rows[0].engine == "sb3" and result.baseline == 0  # the user's config as it is
    assert rows[1].engine == "sbx" and {k: v for k, v in rows[1].settings.items() if k != "runtime.engine"} == \
        {k: v for k, v in rows[0].settings.items() if k != "runtime.engine"}  # the same config, the other engine
    assert result.picked is not None and result.picked.engine == "sbx"
    assert result.speedup() is not None and result.speedup() >= SBX_SPEEDUP
    # the search went on with SBX: no torch-thread candidate for it (its network is JAX's), SB3 once more at the end
    assert ("sbx", 1) not in prober.probed and ("sb3", 1) not in prober.probed[2:]
    assert sum(engine == "sbx" for engine, _ in prober.probed) >= 3
    table = format_table(result)
    column = HEADER.index("engine")
    assert [line[column:].split()[0] for line in table.splitlines()[1:]] == [r.engine for r in rows]
    assert [row["engine"] for row in result.to_json()["table"]] == [r.engine for r in rows]
    assert result.to_json()["pick"]["runtime.engine"] == "sbx"  # the preset it saves sets runtime.engine


def test_a_config_sbx_cannot_run_is_one_row_naming_the_field_and_never_probed(clock):
    cfg = validate_config({**CARTPOLE, "ppo": {"target_kl": 0.02}}).config
    prober = EngineProber(clock)
    result = Tuner(cfg, TuneOptions(budget_s=120, facts=CPU_TORCH, engines=["sb3", "sbx"]), prober=prober).run()
    refused = [r for r in result.rows if r.engine == "sbx"]
    assert len(refused) == 1 and refused[0].steps_per_s is None and refused[0].fits is None
    assert refused[0].note.startswith("cannot run here with engine sbx: ppo.target_kl: SBX's PPO adapts the learning rate")
    assert refused[0].note.endswith("or set runtime.engine: sb3")
    assert all(engine == "sb3" for engine, _ in prober.probed) and len(prober.probed) >= 3  # the search went on
    assert result.picked is not None and result.picked.engine == "sb3"


@pytest.mark.training
def test_a_probe_child_trains_and_measures_an_sbx_candidate_apart_from_sb3_ones():
    cfg = validate_config({**CARTPOLE, "ppo": {"n_steps": 64, "n_epochs": 2},
                           "runtime": {"device": "cpu", "engine": "sbx", "torch_threads": 1}}).config
    with ProbePool() as pool:
        result = pool.probe(cfg, 1.5)
        assert result.error is None and result.steps_per_s and result.steps_per_s > 0 and result.cycles
        assert result.first_step is not None and result.first_step >= 64  # the first cycle compiles: not measured
        assert result.host_bytes and result.host_bytes > 50 << 20 and result.gpu_bytes == 0
        twin = validate_config({**cfg.model_dump(mode="json"), "runtime": {**cfg.runtime.model_dump(mode="json"),
                                                                           "engine": "sb3"}}).config
        assert not pool.starts_process(cfg) and pool.starts_process(twin)  # JAX's memory never counts in an SB3 figure
