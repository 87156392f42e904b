"""``python -m core.agent.record RUN -o agent.mp4|agent.gif``: a video of the agent playing a checkpoint.

The frames are those of ``core.agent.frames`` (``1 + sum(episode lengths)`` for one checkpoint) at the env's
own frame rate unless ``--fps`` says otherwise (a GIF at most 50). ``--all-checkpoints`` plays each kept
checkpoint in turn, oldest first, below a caption naming its step ("how it learned", rl_zoo3's
``record_training``): the frames of every segment, one after another. The result:
``{run, checkpoint, checkpoint_step, file, frames, episodes, fps, seconds (the video's length), rewards,
width, height, bytes, segments: [{checkpoint_step, frames, rewards}]}``.
The run folder is only read: a run still training is not disturbed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from core.agent.frames import env_fps, open_for_frames, play_frames
from core.agent.play import add_determinism
from core.agent.tool import tool_main, tool_parser
from core.agent.video import VideoWriter, captioned, video_problem
from core.run.checkpoints import complete_checkpoints


def build_parser() -> argparse.ArgumentParser:
    parser = tool_parser("record")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the video file: .mp4 or .gif")
    parser.add_argument("--episodes", type=int, default=1, help="episodes per checkpoint (default 1)")
    parser.add_argument("--fps", type=float, default=None, help="frames per second (default: the env's own)")
    parser.add_argument("--all-checkpoints", action="store_true",
                        help="every kept checkpoint in turn, oldest first, captioned with its step")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing file")
    add_determinism(parser)
    return parser


def _check(args: argparse.Namespace) -> Path:
    """The output path, absolute; ``ValueError`` naming the option to fix."""
    if args.episodes < 1:
        raise ValueError(f"--episodes {args.episodes}: give at least 1 episode")
    if args.fps is not None and not 0 < args.fps <= 240:
        raise ValueError(f"--fps {args.fps:g}: give a frame rate between 1 and 240 (default: the env's own)")
    path = Path(args.output).expanduser().resolve()
    problem = video_problem(path)
    if problem:
        raise ValueError(problem)
    if not path.parent.is_dir():
        raise ValueError(f"-o {path}: the folder {path.parent} does not exist")
    if path.exists() and not args.overwrite:
        raise ValueError(f"-o {path}: the file exists; choose another name or add --overwrite")
    return path


def _segment(args: argparse.Namespace, which: str, writer: VideoWriter | None, path: Path,
             caption: bool) -> tuple[VideoWriter, dict[str, Any]]:
    """Play ``args.episodes`` episodes of checkpoint ``which`` into the writer (made here for the first segment,
    and discarded here if that segment fails: the caller has no writer to discard yet)."""
    loaded = open_for_frames(args.run_dir, which, args.seed, args.device)
    made: VideoWriter | None = None
    try:
        if writer is None:
            writer = made = VideoWriter(path, args.fps or env_fps(loaded))
        step = loaded.checkpoint.step
        frames = 0
        rewards: list[float] = []
        for frame in play_frames(loaded, args.episodes, args.deterministic):
            image = frame.image
            if caption:
                image = captioned(image, f"step {step:,}   episode {frame.episode}   reward {frame.reward:g}")
            writer.append(image)
            frames += 1
            if frame.done:
                rewards.append(frame.reward)
    except BaseException:
        if made is not None:
            made.discard()
        raise
    finally:
        loaded.close()
    return writer, {"checkpoint_step": step, "frames": frames, "rewards": rewards}


def record(args: argparse.Namespace) -> dict[str, Any]:
    path = _check(args)
    if args.all_checkpoints:
        which = [str(c.step) for c in complete_checkpoints(args.run_dir)]
        if not which:
            raise LookupError(f"run {Path(args.run_dir).name} has no complete checkpoint yet")
    else:
        which = [args.checkpoint]
    writer: VideoWriter | None = None
    segments: list[dict[str, Any]] = []
    try:
        for checkpoint in which:
            writer, segment = _segment(args, checkpoint, writer, path, caption=args.all_checkpoints)
            segments.append(segment)
        assert writer is not None
        writer.close()
    except BaseException:
        if writer is not None:
            writer.discard()
        raise
    rewards = [r for s in segments for r in s["rewards"]]
    width, height = writer.size or (0, 0)
    return {"run": Path(args.run_dir).name, "checkpoint": "all" if args.all_checkpoints else args.checkpoint,
            "checkpoint_step": segments[-1]["checkpoint_step"], "file": str(path), "frames": writer.frames,
            "episodes": len(rewards), "fps": writer.fps, "seconds": round(writer.frames / writer.fps, 3),
            "rewards": rewards, "width": width, "height": height, "bytes": path.stat().st_size, "segments": segments}


def main(argv: list[str] | None = None) -> int:
    return tool_main(build_parser(), record, argv)


if __name__ == "__main__":
    sys.exit(main())
