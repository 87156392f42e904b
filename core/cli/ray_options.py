"""``--ray ADDRESS`` with ``--ray-python`` and ``--ray-runs``: the options that send runs to a Ray cluster."""

from __future__ import annotations

import argparse
from typing import Any

from core.cli.common import CliError
from core.cluster.client import ClusterError, job_client
from core.cluster.target import ClusterTarget


def add_ray_args(p: argparse.ArgumentParser, what: str) -> None:
    """``what``: the ``--ray`` option's help, before "the Ray cluster whose dashboard is at ADDRESS"."""
    p.add_argument("--ray", metavar="ADDRESS", help=f"{what} the Ray cluster whose dashboard is at ADDRESS "
                                                   "(http://HEAD:8265); needs rlpanel[ray]")
    p.add_argument("--ray-python", metavar="PYTHON", help="the python on the nodes that has rlpanel (default: python)")
    p.add_argument("--ray-runs", metavar="PATH", help="the runs folder as the nodes see it (default: the same path)")


def target_from_args(args: argparse.Namespace) -> ClusterTarget | None:
    """The cluster the options name (None without ``--ray``); one-line errors for a bad address or no ray."""
    if not getattr(args, "ray", None):
        if getattr(args, "ray_python", None) or getattr(args, "ray_runs", None):
            raise CliError("--ray-python and --ray-runs go with --ray ADDRESS (the cluster's dashboard)")
        return None
    try:
        return ClusterTarget.make(args.ray, args.ray_python, args.ray_runs)
    except ClusterError as exc:
        raise CliError(str(exc)) from None


def cluster_from_args(args: argparse.Namespace) -> dict[str, Any] | None:
    """The checked cluster (it answers) as a queue's or a sweep's state keeps it; None without ``--ray``."""
    target = target_from_args(args)
    if target is None:
        return None
    try:
        job_client(target.address)
    except ClusterError as exc:
        raise CliError(str(exc)) from None
    return target.to_json()
