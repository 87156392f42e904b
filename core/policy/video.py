"""Frames into a video file: MP4 through imageio with imageio-ffmpeg, GIF through Pillow.

imageio-ffmpeg ships its own ffmpeg binary in the wheel (no system ffmpeg, Windows included) and is the
``video`` extra (~30-70 MB); imageio and Pillow are in the base install. An MP4 streams its frames to
ffmpeg as they come (a constant amount of memory); a GIF is written when it is closed, so its frames wait
in memory: each is reduced to 256 colours as it arrives (1 byte a pixel, 240 KB for CartPole's 600x400,
not 720 KB of RGB: imageio's Pillow plugin would keep the RGB), and a GIF is for short clips.
Pillow merges a frame identical to the one before into it (their delays add up), so a GIF's frame count
may be below the frames written, its duration never.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from core.util.imports import installed

SUFFIXES = (".mp4", ".gif")
GIF_MAX_FPS = 50.0  # a GIF's delays are whole hundredths of a second; browsers show a delay under 20 ms as 100 ms
# imageio-ffmpeg is one of rlpanel's own dependencies: missing, this Python's install is incomplete
MP4_FIX = "pip install imageio-ffmpeg"


def video_problem(path: Path) -> str | None:
    """Why ``path`` cannot be written as a video here (its suffix, an MP4 encoder missing), or None."""
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        return f"-o {path.name}: the file must end in .mp4 or .gif (e.g. -o agent.mp4)"
    if suffix == ".mp4" and not installed("imageio_ffmpeg"):
        return f"an MP4 needs imageio-ffmpeg, which is not installed in this Python: {MP4_FIX} (or record a .gif)"
    return None


def video_fps(path: Path, fps: float) -> float:
    """The frame rate the file gets: ``fps``, at most ``GIF_MAX_FPS`` for a GIF."""
    return min(fps, GIF_MAX_FPS) if path.suffix.lower() == ".gif" else fps


class VideoWriter:
    """Append height x width x 3 uint8 frames of one size; ``close()`` finishes the file under a temporary name
    and renames it to ``path`` (a recording cut short leaves no half video under the name)."""

    def __init__(self, path: Path, fps: float):
        problem = video_problem(path)
        if problem:
            raise ValueError(problem)
        self.path = path
        self.fps = video_fps(path, fps)
        self.frames = 0
        self.size: tuple[int, int] | None = None  # width, height
        self._tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix.lower()}")
        self._gif: list[Any] = []
        self._mp4: Any = None

    def append(self, image: np.ndarray) -> None:
        height, width = image.shape[:2]
        if self.size is None:
            self.size = (width, height)
        elif self.size != (width, height):
            raise ValueError(f"a frame of {width}x{height} in a video of {self.size[0]}x{self.size[1]}")
        if self.path.suffix.lower() == ".gif":
            from PIL import Image

            self._gif.append(Image.fromarray(image).convert("P", palette=Image.Palette.ADAPTIVE))
        else:
            if self._mp4 is None:
                self._mp4 = self._open_mp4()
            self._mp4.append_data(_even(image))
        self.frames += 1

    def _open_mp4(self) -> Any:
        import imageio.v2 as imageio

        # libx264's yuv420p wants even sides (``_even``); 2 keeps imageio from resizing to multiples of 16
        return imageio.get_writer(str(self._tmp), format="FFMPEG", mode="I", fps=self.fps, codec="libx264",
                                  pixelformat="yuv420p", macro_block_size=2, quality=7)

    def close(self) -> None:
        """Finish the file and give it its name; nothing is written for no frames."""
        if self.frames == 0:
            raise ValueError("no frame was played: nothing to write")
        try:
            if self._mp4 is not None:
                self._mp4.close()
            else:
                first, *rest = self._gif
                first.save(self._tmp, format="GIF", save_all=True, append_images=rest, duration=round(1000 / self.fps),
                           loop=0)
                self._gif.clear()
            from core.util.files import replace_retrying

            replace_retrying(self._tmp, self.path)
        finally:
            self._tmp.unlink(missing_ok=True)

    def discard(self) -> None:
        """Drop what was written (a failure before ``close``)."""
        try:
            if self._mp4 is not None:
                self._mp4.close()
        finally:
            self._gif.clear()
            self._tmp.unlink(missing_ok=True)


def _even(image: np.ndarray) -> np.ndarray:
    """The frame with its last row or column repeated to make both sides even."""
    height, width = image.shape[:2]
    if height % 2 == 0 and width % 2 == 0:
        return image
    return np.pad(image, ((0, height % 2), (0, width % 2), (0, 0)), mode="edge")


def captioned(image: np.ndarray, text: str, bar_px: int = 28) -> np.ndarray:
    """The frame below a dark bar that reads ``text`` (the checkpoint's step in a how-it-learned video)."""
    from PIL import Image, ImageDraw, ImageFont

    height, width = image.shape[:2]
    canvas = Image.new("RGB", (width, height + bar_px), (32, 32, 32))
    canvas.paste(Image.fromarray(image), (0, bar_px))
    font = ImageFont.load_default(size=max(10, bar_px - 12))
    ImageDraw.Draw(canvas).text((8, bar_px // 2), text, fill=(240, 240, 240), font=font, anchor="lm")
    return np.asarray(canvas)
