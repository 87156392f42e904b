"""Draw rlpanel's application icon with Qt: ``python resources/icons/draw_icons.py``.

Writes rlpanel-<size>.png for 16 to 256 pixels and rlpanel.ico (PNG entries, the format Windows
Vista and later read) next to this script. The drawing: a rising reward curve over a dark
rounded square, with a green bar for the GPU.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPainterPath, QPen

SIZES = (16, 24, 32, 48, 64, 128, 256)
HERE = Path(__file__).resolve().parent


def draw(size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = float(size)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QColor("#1f2a44"))
    p.drawRoundedRect(QRectF(0, 0, s, s), s * 0.18, s * 0.18)
    p.setBrush(QColor("#3ddc84"))  # the GPU bar
    p.drawRoundedRect(QRectF(s * 0.14, s * 0.74, s * 0.72, s * 0.10), s * 0.03, s * 0.03)
    curve = QPainterPath(QPointF(s * 0.14, s * 0.62))  # the reward curve
    curve.cubicTo(QPointF(s * 0.40, s * 0.62), QPointF(s * 0.45, s * 0.22), QPointF(s * 0.86, s * 0.18))
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.setPen(QPen(QColor("#ffffff"), max(1.5, s * 0.08), Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap))
    p.drawPath(curve)
    p.end()
    return image


def png_bytes(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    return bytes(data.data())


def ico_bytes(pngs: dict[int, bytes]) -> bytes:
    """An ICO file holding one PNG per size (ICONDIR, ICONDIRENTRY x n, then the images)."""
    head = struct.pack("<HHH", 0, 1, len(pngs))
    offset = len(head) + 16 * len(pngs)
    entries, blobs = b"", b""
    for size, blob in sorted(pngs.items()):
        side = 0 if size >= 256 else size  # 0 means 256 in an ICONDIRENTRY
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(blob), offset + len(blobs))
        blobs += blob
    return head + entries + blobs


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (fonts and image plugins)
    pngs = {size: png_bytes(draw(size)) for size in SIZES}
    for size, blob in pngs.items():
        (HERE / f"rlpanel-{size}.png").write_bytes(blob)
    (HERE / "rlpanel.ico").write_bytes(ico_bytes(pngs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
