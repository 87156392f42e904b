"""Where a run's time went: its ``cycle`` records summed (``TimeSplit``), said in a line, and one sentence of advice.

SB3 never overlaps collecting and training (a rollout is collected, then trained on, then the
next is collected): while the envs step, the GPU waits, and while it trains, the envs wait. The
split says which of the two a run waits on, and so what would make it faster. The worker writes
the records (``core.worker.cycle_clock``); ``summary.json`` keeps the totals (``time_split``),
``status.json`` the totals so far while the run trains.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from core.config.algorithms.registry import ALGORITHMS
from core.run.records import CYCLE

DOMINANT = 0.6      # a phase with this share of the time is what the run waits on
OTHER_NOTICE = 0.05  # checkpoints, evaluations and logging past this share are worth a word
LOW_GPU_PCT = 30.0  # a GPU busy less than this while training is mostly waiting


@dataclass
class TimeSplit:
    """Seconds collecting (env steps and the policy's inference), training (gradient steps) and the rest
    (checkpoints, evaluations, logging) over ``n`` update cycles; the GPU's utilisation in each phase as sums
    weighted by the phase's seconds (``gpu_*_pct`` are the means)."""

    n: int = 0
    collect_s: float = 0.0
    train_s: float = 0.0
    other_s: float = 0.0
    gpu_collect_weighted: float = 0.0  # sum of pct x seconds over the records that had a figure
    gpu_collect_weight_s: float = 0.0
    gpu_train_weighted: float = 0.0
    gpu_train_weight_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.collect_s + self.train_s + self.other_s

    @property
    def gpu_collect_pct(self) -> float | None:
        return self.gpu_collect_weighted / self.gpu_collect_weight_s if self.gpu_collect_weight_s > 0 else None

    @property
    def gpu_train_pct(self) -> float | None:
        return self.gpu_train_weighted / self.gpu_train_weight_s if self.gpu_train_weight_s > 0 else None

    def add_record(self, rec: dict[str, Any]) -> None:
        """Add one ``cycle`` record (its seconds; its GPU figures weighted by its phases' seconds)."""
        collect, train = _seconds(rec.get("collect_s")), _seconds(rec.get("train_s"))
        self.n += int(rec.get("n") or 1)
        self.collect_s += collect
        self.train_s += train
        self.other_s += _seconds(rec.get("other_s"))
        pct = rec.get("gpu_collect_pct")
        if isinstance(pct, int | float) and _number(pct) and collect > 0:
            self.gpu_collect_weighted += float(pct) * collect
            self.gpu_collect_weight_s += collect
        pct = rec.get("gpu_train_pct")
        if isinstance(pct, int | float) and _number(pct) and train > 0:
            self.gpu_train_weighted += float(pct) * train
            self.gpu_train_weight_s += train

    def add(self, other: TimeSplit) -> None:
        for name in ("n", "collect_s", "train_s", "other_s", "gpu_collect_weighted", "gpu_collect_weight_s",
                     "gpu_train_weighted", "gpu_train_weight_s"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def shares(self) -> tuple[float, float, float] | None:
        """The fractions of the time collecting, training and the rest (None: no time measured)."""
        total = self.total_s
        if total <= 0:
            return None
        return self.collect_s / total, self.train_s / total, self.other_s / total

    def to_json(self) -> dict[str, Any]:
        """What ``summary.json`` and ``status.json`` keep as ``time_split``."""
        return {"collect_s": round(self.collect_s, 3), "train_s": round(self.train_s, 3),
                "other_s": round(self.other_s, 3), "cycles": self.n,
                "gpu_util_collect_pct": _round1(self.gpu_collect_pct), "gpu_util_train_pct": _round1(self.gpu_train_pct)}

    @classmethod
    def from_json(cls, data: Any) -> TimeSplit | None:
        """A ``time_split`` read back from ``summary.json`` or ``status.json`` (None: none, or not of its shape)."""
        if not isinstance(data, dict) or not all(_number(data.get(k)) for k in ("collect_s", "train_s", "other_s")):
            return None
        split = cls()
        split.add_record({"collect_s": data["collect_s"], "train_s": data["train_s"], "other_s": data["other_s"],
                          "n": data.get("cycles") if _number(data.get("cycles")) else 1,
                          "gpu_collect_pct": data.get("gpu_util_collect_pct"),
                          "gpu_train_pct": data.get("gpu_util_train_pct")})
        return split


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _seconds(v: Any) -> float:
    return max(float(v), 0.0) if _number(v) else 0.0


def _pct(share: float) -> str:
    return f"{100 * share:.0f} %"


def _round1(v: float | None) -> float | None:
    return None if v is None else round(v, 1)


def split_of(records: Iterable[dict[str, Any]]) -> TimeSplit | None:
    """The sum of the ``cycle`` records among ``records`` (None: there are none)."""
    split = TimeSplit()
    for rec in records:
        if rec.get("kind") == CYCLE:
            split.add_record(rec)
    return split if split.n else None


def split_line(split: TimeSplit | None) -> str:
    """``collecting 82 % · training 16 % · other 2 %`` (with the GPU's utilisation in each phase when measured);
    empty when nothing was measured."""
    shares = split.shares() if split is not None else None
    if split is None or shares is None:
        return ""
    collect, train, other = (round(100 * s) for s in shares)
    gpu = [f"{word} {pct:.0f} %" for word, pct in (("collecting", split.gpu_collect_pct), ("training", split.gpu_train_pct))
           if pct is not None]
    text = f"collecting {collect} % · training {train} % · other {other} %"
    return f"{text} (GPU busy: {', '.join(gpu)})" if gpu else text


def advice(split: TimeSplit | None, device: str, algo: str) -> str:
    """One plain sentence on what would make the run faster, from where its time goes on ``device`` ("cpu",
    "cuda:0", ...) with ``algo``; a change that would change what is learned says so. Empty: nothing measured."""
    shares = split.shares() if split is not None else None
    if split is None or shares is None:
        return ""
    collect, train, other = shares
    spec = ALGORITHMS.get(algo)
    on_policy = spec.on_policy if spec is not None else True
    gpu = device.startswith("cuda")
    if other >= max(OTHER_NOTICE, collect, train) or (other >= 2 * OTHER_NOTICE):
        return (f"Checkpoints, evaluations and logging take {_pct(other)} of the time: checkpoint or evaluate less often "
                "(budget.checkpoint_every, budget.eval_every); what is learned stays the same.")
    if collect >= DOMINANT:
        waits = "the GPU waits" if gpu else "training waits"
        size = ("more envs grow each rollout (n_envs x n_steps): lower n_steps to keep its size, or the learning changes"
                if on_policy else "more envs collect n_envs x train_freq steps a cycle: raise gradient_steps with them, or "
                "the learning changes")
        return (f"Collecting takes {_pct(collect)} and {waits}: more env processes (runtime.n_envs, vec_env subproc) or "
                f"a faster env help; {size}.")
    if train >= DOMINANT:
        if not gpu:
            fewer = ("fewer epochs (n_epochs) or a larger batch_size" if on_policy else "fewer gradient_steps")
            return (f"Training takes {_pct(train)} of the time on the CPU: a GPU (runtime.device cuda) helps a big network "
                    f"and changes nothing that is learned; {fewer} would too, but changes what is learned.")
        busy = split.gpu_train_pct
        if busy is not None and busy < LOW_GPU_PCT:
            return (f"Training takes {_pct(train)} of the time but the GPU is busy only {busy:.0f} % of it: the network or "
                    "batch is small for it, so the CPU may be as fast (runtime.device cpu, nothing learned changes); a "
                    "larger batch_size fills the GPU but changes what is learned.")
        fewer = "fewer epochs (n_epochs)" if on_policy else "fewer gradient_steps"
        return (f"Training takes {_pct(train)} of the time on the GPU: {fewer} or a smaller network would be faster, but "
                "either changes what is learned.")
    return (f"Collecting ({_pct(collect)}) and training ({_pct(train)}) share the time: SB3 does not run them at once, so "
            "speeding up either one alone helps only in part.")
