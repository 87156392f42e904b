"""``python -m core.cluster.submit RUN_DIR [--resume] | --stop RUN_DIR``: what ``core.launch.control`` runs for a cluster run.

``core.run`` sits below this package, so it starts this module as a process (as it starts the
supervisor) when a run's ``status.json`` names a Ray cluster: a launch, resume or restart of a
cluster run submits it again to the same cluster, and a stop that the worker did not hear through
``STOP`` asks Ray to stop the job. A failure is one line on stderr and exit code 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.cluster.client import ClusterError
from core.cluster.jobs import stop_job, submit_run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.cluster.submit")
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--stop", action="store_true", help="ask Ray to stop the run's job")
    args = parser.parse_args(argv)
    try:
        if args.stop:
            asked = stop_job(args.run_dir)
            print(f"stop of the run's Ray job {'asked' if asked else 'not needed: it has ended'}", flush=True)
        else:
            job_id = submit_run(args.run_dir, args.resume)
            print(f"submitted as Ray job {job_id}", flush=True)
    except ClusterError as exc:
        print(str(exc), file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
