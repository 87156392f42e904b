"""``python -m core.agent.hub RUN -o DIR [--checkpoint last|best|STEP] [--push REPO_ID]``: a Hub model folder.

The layout rl_zoo3's ``push_to_hub`` and ``huggingface_sb3`` use: ``<algo>-<env>.zip`` (the checkpoint's own
model file, byte for byte: it loads with ``PPO.load``), ``config.yml`` (the zoo entry ``rlpanel zoo export``
writes), ``env_kwargs.yml``, ``args.yml``, ``vec_normalize.pkl`` (the checkpoint's own statistics) when the run
normalised, ``results.json`` and ``README.md`` (``core.agent.hub_card``), ``replay.mp4`` (one episode, by
``core.agent.record``) when the env draws frames, and ``train_eval_metrics.zip`` (the run's metrics.jsonl,
which rl_zoo3's ``load_from_hub`` downloads). The evaluation is the newest stored one of that checkpoint;
without one, one is made here (``--episodes``, deterministic, as rl_zoo3 evaluates before a push) and kept in
the run's ``evaluations.jsonl`` as ``rlpanel evaluate`` keeps it. Each file is written whole (a staged write);
a new folder that fails half-way is removed. ``--push`` uploads the folder (``core.agent.hub_push``).
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import yaml

from core.agent import hub_card
from core.agent.evaluate import evaluate
from core.agent.hub_push import push_folder
from core.agent.record import record
from core.agent.tool import tool_main, tool_parser
from core.config.schema import RunConfig
from core.launch.agent_results import hub_folder_problem, repo_id_problem
from core.run.checkpoint_read import read_checkpoint
from core.run.checkpoints import BestCheckpoint, Checkpoint
from core.run.evaluations import Evaluation, append_evaluation, read_evaluations
from core.run.layout import RunDir
from core.run.store import load_run_config
from core.util.files import write_bytes_atomic, write_failed
from core.zoo.export import export_entry

REPLAY = "replay.mp4"
STATISTICS = "vec_normalize.pkl"


def build_parser() -> argparse.ArgumentParser:
    parser = tool_parser("hub")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the folder to write (new or empty)")
    parser.add_argument("--episodes", type=int, default=10,
                        help="episodes of the evaluation made when the checkpoint has no stored one (default 10)")
    parser.add_argument("--no-replay", action="store_true", help="write no replay.mp4")
    parser.add_argument("--overwrite", action="store_true", help="replace the model's files in a folder that has files")
    parser.add_argument("--push", metavar="REPO_ID", help="upload the folder to this Hub model repository (USER/NAME)")
    return parser


def write_hub(args: argparse.Namespace) -> dict[str, Any]:
    """Write the folder, push it if asked; the tool's JSON result."""
    output = Path(args.output).expanduser().resolve()
    problem = hub_folder_problem(output, args.overwrite)
    problem = problem or (repo_id_problem(args.push) if args.push else None)
    if problem:  # said before the evaluation: a minute may pass before the push
        raise ValueError(problem)
    cfg = load_run_config(args.run_dir)
    if cfg.spec is None:
        raise ValueError(f"run {Path(args.run_dir).name} is a baseline ({cfg.algo}): it has no model to publish")
    read = read_checkpoint(args.run_dir, args.checkpoint)
    evaluation, made_now = checkpoint_evaluation(args.run_dir, read.checkpoint, args.episodes, args.seed, args.device)
    created = not output.exists()
    output.mkdir(exist_ok=True)
    try:
        files, notes = _write_folder(args, cfg, output, read.files, read.checkpoint, evaluation)
    except BaseException:
        if created:
            shutil.rmtree(output, ignore_errors=True)  # no half folder under the name the user gave
        raise
    result = {"run": Path(args.run_dir).name, "checkpoint": args.checkpoint, "checkpoint_step": read.checkpoint.step,
              "folder": str(output), "files": files, "model_file": f"{hub_card.model_name(cfg)}.zip", "notes": notes,
              "evaluation": {**hub_card.results(evaluation), "episodes": evaluation.episodes, "made_now": made_now},
              "pushed": None}
    if args.push:
        result["pushed"] = push_folder(output, args.push, f"{result['run']} step {read.checkpoint.step:,} (rlpanel)")
    return result


def checkpoint_evaluation(run_dir: Path, checkpoint: Checkpoint, episodes: int, seed: int | None,
                          device: str) -> tuple[Evaluation, bool]:
    """The newest stored evaluation of ``checkpoint`` (made after its model file), else one made now and stored;
    and whether it was made now."""
    best = isinstance(checkpoint, BestCheckpoint)
    model = checkpoint.path(run_dir, "model")
    saved_at = model.stat().st_mtime if model is not None and model.exists() else 0.0
    for stored in reversed(read_evaluations(run_dir)):
        if stored.checkpoint_step == checkpoint.step and (stored.checkpoint == "best") == best and stored.t >= saved_at:
            return stored, False
    made = evaluate(run_dir, "best" if best else str(checkpoint.step), episodes, True, seed, device)
    if made.checkpoint_step != checkpoint.step:
        raise LookupError(f"run {Path(run_dir).name}: a new best checkpoint (step {made.checkpoint_step:,}) replaced "
                          f"step {checkpoint.step:,} while it was evaluated; run rlpanel hub again")
    append_evaluation(run_dir, made)
    return made, True


def _write_folder(args: argparse.Namespace, cfg: RunConfig, output: Path, parts: dict[str, bytes],
                  checkpoint: Checkpoint, evaluation: Evaluation) -> tuple[list[str], list[str]]:
    """Every file of the folder; their names and notes on what is missing (the zoo entry's, the replay's)."""
    entry, notes = export_entry(cfg)
    texts = {"config.yml": yaml.safe_dump(entry, sort_keys=True), "env_kwargs.yml": yaml.safe_dump(dict(cfg.env.kwargs)),
             "args.yml": hub_card.zoo_args(cfg), "results.json": _json(hub_card.results(evaluation))}
    contents = {f"{hub_card.model_name(cfg)}.zip": parts["model"], **{k: v.encode("utf-8") for k, v in texts.items()},
                "train_eval_metrics.zip": _metrics_zip(Path(args.run_dir))}
    if "vecnormalize" in parts:
        contents[STATISTICS] = parts["vecnormalize"]
    elif (output / STATISTICS).exists():  # an earlier export's statistics would be loaded with this model
        (output / STATISTICS).unlink()
    for name, data in contents.items():
        _write(output / name, data)
    files = list(contents)
    replay_note = None if args.no_replay else _replay(args, checkpoint, output)
    if args.no_replay or replay_note:
        (output / REPLAY).unlink(missing_ok=True)  # never an earlier checkpoint's replay beside this model
    else:
        files.append(REPLAY)
    notes += [replay_note] if replay_note else []
    files.append("README.md")
    _write(output / "README.md", hub_card.card(cfg, evaluation, files, Path(args.run_dir).name).encode("utf-8"))
    return sorted(files), notes


def _replay(args: argparse.Namespace, checkpoint: Checkpoint, output: Path) -> str | None:
    """One deterministic episode of the checkpoint as ``replay.mp4``; None, or why there is none (a note: the
    folder is complete without it, as rl_zoo3's is when it cannot make one)."""
    which = "best" if isinstance(checkpoint, BestCheckpoint) else str(checkpoint.step)
    play = argparse.Namespace(run_dir=args.run_dir, checkpoint=which, output=output / REPLAY, episodes=1, fps=None,
                              all_checkpoints=False, overwrite=True, seed=args.seed, device=args.device,
                              deterministic=True)
    try:
        record(play)
    except (LookupError, ValueError, OSError, ImportError, RuntimeError) as exc:  # an env that draws no frames, no MP4
        return f"no {REPLAY}: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
    return None


def _metrics_zip(run_dir: Path) -> bytes:
    """``train_eval_metrics.zip``: the run's metrics.jsonl (rl_zoo3 zips its monitor and evaluation files here)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        metrics = RunDir(run_dir).metrics
        if metrics.is_file():
            archive.write(metrics, arcname=metrics.name)
    return buffer.getvalue()


def _write(path: Path, data: bytes) -> None:
    try:
        write_bytes_atomic(path, data)
    except OSError as exc:
        raise write_failed(path, exc) from None


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    return tool_main(build_parser(), write_hub, argv)


if __name__ == "__main__":
    raise SystemExit(main())
