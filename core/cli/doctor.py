"""``rlpanel doctor``: prints the machine's report (``core.machine.doctor``) or, with ``--ray``, a cluster's."""

from __future__ import annotations

import argparse

from core.cli.common import emit, runs_dir
from core.cli.ray_options import add_ray_args, target_from_args
from core.cluster.doctor import cluster_report, format_cluster_report
from core.machine.doctor import format_report, report


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("doctor", parents=[common], help="python, torch, CUDA, GPUs, driver, TF32, SB3, disk "
                                                        "(with --ray: a Ray cluster's nodes, versions and runs folder)")
    add_ray_args(p, "check")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    target = target_from_args(args)
    if target is not None:
        cluster = cluster_report(target, runs_dir(args))
        emit(args, cluster, lambda: format_cluster_report(cluster))
        return 0 if cluster["ok"] else 1
    data = report(runs_dir(args))
    emit(args, data, lambda: format_report(data))
    return 0
