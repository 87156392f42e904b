"""The policy tools' results as the command line and the window say them (no torch: the tools are core.policy's).

For an export: the formats and their suffixes, the file name proposed for a checkpoint, its sidecar's name, how long the tool may
take, and the lines that say what was written and how close the file came to SB3's own predict. For a
recording: the line that says what was recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

FORMATS = ("onnx", "torchscript")
SUFFIX = {"onnx": ".onnx", "torchscript": ".pt"}
TIMEOUT_S = 600  # a large CNN's trace and its 1,000-observation check take well under a minute


def sidecar_path(output: Path) -> Path:
    """``policy.onnx`` -> ``policy.onnx.json``: the sidecar of an exported policy."""
    return output.with_name(f"{output.name}.json")


def existing_export(output: Path) -> Path | None:
    """The file an export to ``output`` would replace (the policy, else its sidecar), or None."""
    return next((path for path in (output, sidecar_path(output)) if path.exists()), None)


def default_name(run_id: str, step: int, fmt: str) -> str:
    """``<run>-step<N>.onnx`` (or ``.pt``): what the window proposes too."""
    return f"{run_id}-step{step}{SUFFIX[fmt]}"


def summary(result: dict[str, Any]) -> str:
    """What was written and, with --check, how close it is to SB3's predict."""
    lines = [f"{result['run']} step {result['checkpoint_step']:,} exported as {result['format']}: {result['file']}",
             f"sidecar: {result['sidecar']}"
             + ("  (observation normalisation baked in)" if result.get("normalization_baked_in") else "")]
    check = result.get("check")
    if check:
        lines.append(f"check: {check['observations']:,} observations, largest difference from SB3's predict "
                     f"{check['max_abs_diff']:.3g}, {check['mismatches']} differing action(s)")
    return "\n".join(lines)


def recording_summary(result: dict[str, Any]) -> str:
    """``recorded 74 frames (1.5 s at 50 fps) of the checkpoint at step 1,024 to FILE; episode rewards 73``."""
    which = (f"{len(result.get('segments', []))} checkpoints" if result.get("checkpoint") == "all"
             else f"the checkpoint at step {int(result['checkpoint_step']):,}")
    rewards = ", ".join(f"{r:g}" for r in result.get("rewards", []))
    return (f"recorded {int(result['frames']):,} frames ({float(result['seconds']):.1f} s at {float(result['fps']):g} fps) "
            f"of {which} to {result['file']}; episode rewards {rewards or '(no episode ended)'}")
