"""``rlpanel estimate`` (will this run fit?) and ``rlpanel gpus`` (the GPUs to plan for).

``estimate`` exits 0 when the run fits or is tight, 3 when it does not fit the GPU or host RAM,
so a script can gate a launch on it.
"""

from __future__ import annotations

import argparse
import sys

from core.cli.common import add_config_args, config_from_args, emit, env_issues, positive_float, runs_dir
from core.config.errors import ConfigError
from core.config.spaces import probe_spaces
from core.config.steps import PlannedSteps, planned_steps
from core.estimate.device import engine_facts
from core.estimate.estimate import estimate
from core.estimate.gpus import GpuProfile, detected_profiles, get_profile, known_profiles, with_history
from core.estimate.measured import measure_network, needs_measure
from core.estimate.result import FITS, MIB, FitEstimate
from core.run.card_history import card_ratios

EXIT_NO_FIT = 3


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("estimate", parents=[common],
                       help="GPU and host memory a run needs, the verdict and a fix (exit 3: does not fit)")
    add_config_args(p)
    p.add_argument("--gpu", metavar="NAME", help="target GPU profile (rlpanel gpus lists them; default: the config's target_gpu)")
    p.add_argument("--host-memory-gib", type=positive_float, metavar="GIB",
                   help="plan for a host with this much RAM (default: this one)")
    p.set_defaults(func=run_estimate)
    g = sub.add_parser("gpus", parents=[common], help="known target GPU profiles and the GPUs detected here")
    g.set_defaults(func=run_gpus)


def run_estimate(args: argparse.Namespace) -> int:
    validated = config_from_args(args)
    for warning in validated.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    cfg = validated.config
    spaces = probe_spaces(cfg.env)
    issues = env_issues(args, cfg, spaces)  # before the estimate, which refuses the same without naming --algo
    if issues:
        raise ConfigError(issues)
    if needs_measure(cfg):  # an own network or an SBX model is measured (a child process, once trusted)
        measure_network(cfg)
    gpu = get_profile(args.gpu or cfg.target_gpu)
    if gpu is not None and gpu.detected:  # how the last runs on this card compared with their estimates
        gpu = with_history(gpu, card_ratios(runs_dir(args), gpu.uuid, engine=cfg.runtime.engine))
    host = int(args.host_memory_gib * (1 << 30)) if args.host_memory_gib else None
    # the worker's torch (an SBX run: its jax) decides the device; asking costs one subprocess per interpreter and version
    result = estimate(cfg, spaces, gpu, host, torch=engine_facts(cfg))
    emit(args, result.to_json(), lambda: format_estimate(result, cfg.algo, cfg.env.label, planned_steps(cfg)))
    return EXIT_NO_FIT if not result.fits else 0


def _mib(n: int) -> str:
    return f"{n / MIB:,.1f}"


def format_estimate(result: FitEstimate, algo: str = "", env: str = "", plan: PlannedSteps | None = None) -> str:
    where = result.gpu_name if result.on_gpu else "CPU (no GPU)" if not result.warnings else "CPU"
    host = result.host_side  # this machine's host RAM: the same figure as the plan's warning and the fit bar's Host row
    lines = [f"{algo} on {env}, trains here on {result.train_device or 'n/a'}".strip(", ")]
    if result.this_machine is not None:
        lines.append(f"the gpu terms below are planned for {where} (the target, not this machine); the host terms are "
                     f"this machine's, where it trains on {result.train_device or 'n/a'}")
    elif result.on_gpu:
        lines.append(f"GPU: {where}")
    if result.gpu_source:
        lines.append(f"GPU fixed costs: {result.gpu_source}" + (f"; {result.gpu_history}" if result.gpu_history else ""))
    if plan is not None and plan.differs:  # SB3 trains whole rollouts: 33,000 asked may be 36,864 trained
        lines.append(f"{plan.text()}, for a budget of {plan.budget:,}")
    if result.network_source:  # an own network: counted by building it, not by the formulas
        lines.append(f"network: {result.parameter_count:,} parameters, {result.network_source}")
    if result.torch_threads is not None:  # what "auto" comes to on this machine, as the worker will resolve it
        lines.append(f"torch threads: {result.torch_threads.text()}")
    lines += [f"warning: {w}" for w in result.warnings] + [""]
    lines.append(f"{'term':<18} {'where':<5} {'MiB':>11} {'share':>6}  note")
    for side, est, total in (("gpu", result, result.gpu_bytes), ("host", host, host.host_bytes)):
        for t in (t for t in est.terms if t.where == side):
            share = f"{t.bytes / total:.0%}" if total else "-"
            lines.append(f"{t.name:<18} {side:<5} {_mib(t.bytes):>11} {share:>6}  {t.note}")
    lines.append("")
    if result.on_gpu:
        lines.append(f"GPU:  {_mib(result.gpu_bytes)} of {_mib(result.capacity_bytes)} MiB "
                     f"({result.usage:.0%})  -> {result.verdict}")
    if host.over_capacity_text:  # this machine's card, on Windows: the verdict means a crawl, not an error
        lines.append(f"does not fit this card: {host.over_capacity_text}")
    lines.append(f"host: {_mib(host.host_bytes)} of {_mib(host.host_capacity_bytes)} MiB "
                 f"({host.host_usage:.0%})  -> {host.host_verdict}")
    if result.verdict != FITS or host.host_verdict != FITS:
        big = result.biggest()
        lines.append(f"biggest term: {big.name} ({_mib(big.bytes)} MiB on the {big.where})")
        if result.suggestion:
            s = result.suggestion
            lines.append(f"suggestion: {s.text}  (--set {s.path}={_set_value(s.new)})")
        else:
            lines.append("suggestion: no single setting makes this fit; use a bigger GPU or host")
    for note in result.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _set_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).replace(" ", "")


def run_gpus(args: argparse.Namespace) -> int:
    detected = detected_profiles(refresh=True)
    known = known_profiles()
    auto = get_profile("auto")
    data = {"detected": [p.to_json() for p in detected], "known": [p.to_json() for p in known],
            "auto": auto.name if auto else None}
    emit(args, data, lambda: format_gpus(detected, known))
    return 0


def format_gpus(detected: list[GpuProfile], known: list[GpuProfile]) -> str:
    rows = [f"{'name':<36} {'memory':>9} {'cc':>5} {'tf32':>4}  generation"]
    for p in detected + known:
        tf32 = "yes" if p.tf32 else "no"
        rows.append(f"{p.name:<36} {p.memory_gib:>6.1f} GiB {p.compute_capability:>5} {tf32:>4}  {p.generation}")
    rows.append("")
    rows.append(f"auto: {detected[0].name}" if detected else
                "auto: no NVIDIA GPU detected here (no NVML): runs train on the CPU; plan for a card with --gpu NAME")
    return "\n".join(rows)
