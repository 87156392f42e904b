"""``rlpanel tune``: probe settings in short real trainings, print the table as it goes, save the fastest.

The table goes to stdout as rows arrive (stderr with ``--json``, whose stdout is the one JSON
document ``{preset, pick, machine, table, baseline, stopped, algo, env, budget_s}``); the progress line goes to stderr.
The line naming the machine (``tuned for this machine (cpu; ...)``) comes before the table's header.
"""

from __future__ import annotations

import argparse
import json
import sys

from core.cli.common import CliError, add_config_args, config_from_args, env_issues, positive_float
from core.config.errors import ConfigError
from core.config.spaces import probe_spaces
from core.throughput.preset import save_tuned_preset
from core.throughput.search import TuneOptions, Tuner
from core.throughput.table import HEADER, TuneRow, format_row, format_table, pick_reason


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("tune", parents=[common],
                       help="find the fastest n_envs / vec env / device / batch that fits, save it as a preset")
    add_config_args(p)
    p.add_argument("--budget-s", type=positive_float, default=120.0, metavar="S",
                   help="time for the whole tune in seconds (default 120)")
    p.add_argument("--probe-s", type=positive_float, metavar="S",
                   help="measured seconds per candidate after its warm-up (default: from the budget, 1.5 to 6)")
    p.add_argument("--allow-learning-changes", action="store_true",
                   help="let the pick change what is learned (PPO's rollout and batch, gradient steps per env step)")
    p.add_argument("--host-memory-gib", type=positive_float, metavar="GIB",
                   help="screen candidates for a host with this much RAM (default: this one)")
    p.add_argument("--no-save", action="store_true", help="print the table and the pick; save no preset")
    p.set_defaults(func=run_tune)


def run_tune(args: argparse.Namespace) -> int:
    validated = config_from_args(args)
    cfg = validated.config
    if cfg.is_baseline:
        raise CliError(f"--algo {cfg.algo} is a baseline: it does not train, so there is nothing to tune; "
                       "use PPO, A2C, SAC, TD3, DDPG or DQN", 2)
    spaces = probe_spaces(cfg.env)  # a bad env or algorithm is one error line before any table (cached for the tune)
    issues = env_issues(args, cfg, spaces)
    if issues:
        raise ConfigError(issues)
    table_out = sys.stderr if args.json else sys.stdout
    print(f"tuning {cfg.algo} on {cfg.env.label} for {args.budget_s:g} s", file=table_out, flush=True)

    def on_machine(line: str) -> None:  # known once torch was asked which devices it has: before the first row
        _clear_progress()
        print(line, file=table_out)
        print(HEADER, file=table_out, flush=True)

    def on_row(i: int, row: TuneRow) -> None:
        _clear_progress()
        print(format_row(i + 1, row), file=table_out, flush=True)

    def on_progress(share: float, text: str) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\r[{'#' * int(share * 20):<20}] {share:4.0%} {text[:90]:<90}")
            sys.stderr.flush()
        elif text.startswith("probing"):
            print(f"[{share:4.0%} of {args.budget_s:g} s] {text}", file=sys.stderr, flush=True)

    options = TuneOptions(budget_s=args.budget_s, allow_learning_changes=args.allow_learning_changes, probe_s=args.probe_s,
                          host_memory_bytes=int(args.host_memory_gib * (1 << 30)) if args.host_memory_gib else None)
    tuner = Tuner(cfg, options, on_row=on_row, on_progress=on_progress, on_machine=on_machine)
    try:
        result = tuner.run()
    except KeyboardInterrupt:
        tuner.cancel()
        raise
    _clear_progress()
    if result.picked is None:
        raise CliError("no candidate could be measured (each row says why); try a longer --budget-s", 1)
    if not args.no_save:
        save_tuned_preset(cfg, result)
    if args.json:
        data = {**result.to_json(), "algo": cfg.algo, "env": cfg.env.label, "budget_s": args.budget_s,
                "why": pick_reason(result)}
        print(json.dumps(data, indent=2, default=str))
        return 0
    print("\n" + format_table(result))
    picked = result.picked
    speedup = result.speedup()
    ratio = f" ({speedup:.2f}x your config)" if speedup else ""
    print(f"\npick: row {result.pick + 1 if result.pick is not None else '-'}, {picked.steps_per_s or 0:,.0f} steps/s{ratio}; "
          f"search ended: {result.stopped}; {result.machine}")
    if reason := pick_reason(result):
        print(f"why: {reason}")
    if result.preset:
        print(f"saved as preset {result.preset}: rlpanel train --preset {result.preset}")
    return 0


def _clear_progress() -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r" + " " * 120 + "\r")
        sys.stderr.flush()
