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

from core.util.files import WriteFailed, probe_write, replace_retrying, write_failed
from core.util.imports import installed

SUFFIXES = (".mp4", ".gif")
GIF_TRAILER = b"\x3b"  # the byte a whole GIF ends with
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
    """Append height x width x 3 uint8 frames of one size; ``close()`` finishes the file under a temporary name,
    checks it, and renames it to ``path`` (a recording cut short leaves no half video under the name).

    imageio's ffmpeg writer neither keeps ffmpeg's messages nor looks at its exit code: an ffmpeg that could not
    write (a full disk, a read-only folder) surfaces as a broken pipe, or not at all, and left a 16 KiB file that
    is no video. So the temporary file is created here first (a folder that takes no file says so at once), and
    the closed file is read back (its frames counted) before it gets its name; a failure is ``WriteFailed``
    naming ``path`` and why (``probe_write`` finds the reason ffmpeg's messages would have given).
    """

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
        try:
            self._tmp.open("wb").close()
        except OSError as exc:
            raise write_failed(path, exc) from None

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
            try:
                self._mp4.append_data(_even(image))
            except OSError:  # ffmpeg ended: imageio says "broken pipe" and an empty "FFMPEG STDERR OUTPUT:"
                raise self._failure("ffmpeg stopped writing it") from None
        self.frames += 1

    def _open_mp4(self) -> Any:
        import imageio.v2 as imageio

        # libx264's yuv420p wants even sides (``_even``); 2 keeps imageio from resizing to multiples of 16
        return imageio.get_writer(str(self._tmp), format="FFMPEG", mode="I", fps=self.fps, codec="libx264",
                                  pixelformat="yuv420p", macro_block_size=2, quality=7)

    def close(self) -> None:
        """Finish the file and give it its name; nothing is written for no frames."""
        try:
            if self.frames == 0:
                raise ValueError("no frame was played: nothing to write")
            try:
                if self._mp4 is not None:
                    self._mp4.close()
                else:
                    first, *rest = self._gif
                    first.save(self._tmp, format="GIF", save_all=True, append_images=rest,
                               duration=round(1000 / self.fps), loop=0)
                    self._gif.clear()
                with open(self._tmp, "rb+") as fh:
                    os.fsync(fh.fileno())
            except OSError as exc:
                raise write_failed(self.path, exc) from None
            problem = self._unfinished()
            if problem:
                raise self._failure(problem)
            replace_retrying(self._tmp, self.path)
        finally:
            self._tmp.unlink(missing_ok=True)

    def _unfinished(self) -> str | None:
        """Why the closed temporary file is not the whole video (read back: an MP4's frames counted, a GIF's
        frames decoded and its end), or None."""
        if self._mp4 is not None:
            from imageio_ffmpeg import count_frames_and_secs

            try:
                frames, _seconds = count_frames_and_secs(str(self._tmp))
            except (RuntimeError, OSError):
                return "ffmpeg left a file that is not a readable video"
            return None if frames == self.frames else f"ffmpeg left {frames:,} of its {self.frames:,} frames"
        from PIL import Image, ImageSequence

        try:
            with open(self._tmp, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                trailer = fh.read(1)
            with Image.open(self._tmp) as gif:  # every frame decoded (Pillow merges equal frames: fewer is fine)
                for frame in ImageSequence.Iterator(gif):
                    frame.load()
        except (OSError, ValueError, EOFError):
            return "the GIF written cannot be read back"
        return None if trailer == GIF_TRAILER else "the GIF written has no end (cut short)"

    def _failure(self, what: str) -> WriteFailed:
        """The error for a video ffmpeg (or Pillow) did not finish: the disk's own reason when writing there fails
        now, else ``what`` went wrong, reason unknown."""
        cause = probe_write(self.path.parent)
        if cause is not None:
            return write_failed(self.path, cause)
        return WriteFailed(f"cannot write {self.path}: {what} (reason unknown: the folder takes files)")

    def discard(self) -> None:
        """Drop what was written (a failure before ``close``: that failure is what is said, not this close's)."""
        try:
            if self._mp4 is not None:
                self._mp4.close()
        except OSError:
            pass
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
