"""``rlpanel calibrate``: measure CUDA's fixed costs on this machine's card for the fit estimate.

A probe process (~10-20 s) measures the CUDA context, cuBLAS, cuDNN and the allocator on the card,
with this driver, torch and OS; the result is stored in the user folder and every later estimate
for this card uses it ("measured on this card ..."). Without CUDA it says so and exits 1.
"""

from __future__ import annotations

import argparse

from core.cli.common import CliError, emit
from core.estimate.calibration import CalibrationError, describe, run_calibration, store_path
from core.estimate.gpus import detected_profiles


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("calibrate", parents=[common],
                       help="measure CUDA's fixed memory costs on this GPU (~20 s) so the fit estimate uses them")
    p.add_argument("--gpu", type=int, default=0, metavar="INDEX", help="the CUDA device to measure (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        cal = run_calibration(args.gpu)
    except CalibrationError as exc:
        raise CliError(f"cannot calibrate: {exc}") from None
    detected_profiles(refresh=True)
    emit(args, {**cal.to_json(), "stored_in": str(store_path())}, lambda: describe(cal))
    return 0
