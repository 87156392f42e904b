"""The policy tools' results as the command line and the window say them (no torch: the tools are core.agent's).

For an export: the formats and their suffixes, the file name proposed for a checkpoint, its sidecar's name, how long the tool may
take, and the lines that say what was written and how close the file came to SB3's own predict. For a
recording: the line that says what was recorded. For a Hub model folder (``rlpanel hub``): which folders it may be
written to, and what was written (and pushed).
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


HUB_TIMEOUT_S = 1800  # an evaluation of 10 long episodes and a replay of one, beside a run still training


def hub_folder_problem(output: Path, overwrite: bool) -> str | None:
    """Why ``-o`` cannot take a Hub model folder (a file, a missing parent, files of its own), or None."""
    if output.exists() and not output.is_dir():
        return f"-o {output}: this is a file; name a folder (new or empty) for the model repository, e.g. -o hub/ppo-CartPole-v1"
    if not output.parent.is_dir():
        return f"-o {output}: the folder {output.parent} does not exist; create it or choose another folder"
    if output.is_dir() and not overwrite and any(output.iterdir()):
        return (f"-o {output}: the folder holds files; choose a new or empty folder, or replace the model's files in it "
                "(--overwrite; in the window: confirm)")
    return None


def repo_id_problem(repo_id: str) -> str | None:
    """Why ``--push`` cannot name a Hub repository (it is USER/NAME), or None."""
    if repo_id.count("/") != 1 or not all(part.strip() for part in repo_id.split("/")):
        return f"--push {repo_id!r}: give the repository as USER/NAME, e.g. --push you/ppo-CartPole-v1"
    return None


def hub_summary(result: dict[str, Any]) -> str:
    """What the folder holds, the evaluation it shows (stored or made now), and where it was pushed."""
    ev = result["evaluation"]
    made = "evaluated now, kept in evaluations.jsonl" if ev["made_now"] else "a stored evaluation"
    lines = [f"{result['run']} step {int(result['checkpoint_step']):,} as a Hub model repository: {result['folder']}",
             f"files: {', '.join(result['files'])}",
             f"mean reward {ev['mean_reward']:.2f} +/- {ev['std_reward']:.2f} over {ev['episodes']} episodes ({made})"]
    lines += [f"note: {note}" for note in result.get("notes", [])]
    if result.get("pushed"):
        lines.append(f"pushed: {result['pushed']}")
    return "\n".join(lines)
