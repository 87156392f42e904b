"""``python -m core.agent.play RUN``: the agent plays a checkpoint, and with ``--stream`` the Watch window sees it.

Without ``--stream`` it plays ``--episodes`` episodes as fast as it can, renders every frame (a check that
the env renders) and prints its result: ``{run, checkpoint, checkpoint_step, episodes, deterministic,
frames, fps, width, height, rewards, lengths}``.

With ``--stream`` stdout is the frame stream of ``core.run.frame_stream`` (a 4-byte length, a JSON header,
the RGB bytes; the end record carries the result) and everything else the process prints goes to stderr,
a library's print included, so nothing can break the stream. ``--episodes 0`` plays until it is ended.
The child does not pace itself: the reader paces the display at the header's ``fps`` and the blocking
pipe holds the child back.

An env that cannot render says so in one line (``CartPole-v1 cannot render frames: ...``) and exits 1.
Playing reads the run folder and writes nothing to it: a run still training is not disturbed.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import IO, Any

from core.agent.frames import env_fps, open_for_frames, play_frames
from core.agent.tool import tool_main, tool_parser
from core.run.frame_stream import StreamFrame, write_end, write_frame


def build_parser() -> argparse.ArgumentParser:
    parser = tool_parser("play")
    parser.add_argument("--episodes", type=int, default=1, help="episodes to play (default 1; 0: until ended)")
    add_determinism(parser)
    parser.add_argument("--stream", action="store_true", help="write the frames to stdout (the Watch window's stream)")
    return parser


def add_determinism(parser: argparse.ArgumentParser) -> None:
    """``--deterministic`` (default: the policy's most likely action) or ``--stochastic`` (sampled)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--deterministic", dest="deterministic", action="store_true", default=True,
                       help="the policy's most likely action (default)")
    group.add_argument("--stochastic", dest="deterministic", action="store_false", help="sample the policy's actions")


def play(args: argparse.Namespace, out: IO[bytes] | None = None) -> dict[str, Any]:
    """Play, streaming each frame to ``out`` when given; the result."""
    if args.episodes < 0:
        raise ValueError(f"--episodes {args.episodes}: give a number of episodes, or 0 to play until ended")
    loaded = open_for_frames(args.run_dir, args.checkpoint, args.seed, args.device)
    try:
        fps = env_fps(loaded)
        rewards: list[float] = []
        lengths: list[int] = []
        frames = 0
        width = height = 0
        for frame in play_frames(loaded, args.episodes, args.deterministic):
            frames += 1
            height, width = frame.image.shape[:2]
            if out is not None:
                write_frame(out, StreamFrame(frame.episode, frame.step, frame.reward, frame.last_reward, frame.done,
                                             width, height, fps, frame.image.tobytes()))
            if frame.done:
                rewards.append(frame.reward)
                lengths.append(frame.step)
    finally:
        loaded.close()
    result = {"run": loaded.run_dir.name, "checkpoint": args.checkpoint, "checkpoint_step": loaded.checkpoint.step,
              "episodes": len(rewards), "deterministic": args.deterministic, "frames": frames, "fps": fps,
              "width": width, "height": height, "rewards": rewards, "lengths": lengths}
    if out is not None:
        write_end(out, result)
    return result


def _stream_stdout() -> IO[bytes]:
    """stdout's file for the frames alone; file descriptor 1 then points at stderr for whatever else prints."""
    sys.stdout.flush()
    stream = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return stream


def main(argv: list[str] | None = None) -> int:
    def work(args: argparse.Namespace) -> dict[str, Any]:
        if not args.stream:
            return play(args)
        stream = _stream_stdout()
        try:
            return play(args, stream)
        finally:
            try:
                stream.close()
            except BrokenPipeError:  # the reader went away first (Watch closed): nothing left to tell it
                pass

    return tool_main(build_parser(), work, argv)


if __name__ == "__main__":
    sys.exit(main())
