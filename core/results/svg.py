"""Reward curves as a standalone SVG drawn from the data (no Qt): axes, ticks, grid, legend.

The window's "Save plot as SVG" uses this: pyqtgraph 0.14's SVGExporter raises ValueError with
PySide6 6.12, and Qt's QSvgGenerator painting the plot scene misplaces the curves against the
axes. An SVG written from the numbers is exact, small, and editable in Inkscape or Illustrator.
A curve may come with a band (a group of seeds' confidence band): a translucent polygon behind it.
"""

from __future__ import annotations

import math
from html import escape
from typing import NamedTuple

from core.results.curves import RewardCurve

Band = tuple[list[float], list[float], list[float]]  # x, low, high

MAX_POINTS = 4000  # per curve: a 12 h run's thousands of episodes stay a light file


def nice_ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    """Round tick values (1, 2, 2.5, 5 x 10^k steps) from at or below ``lo`` to at or above ``hi``."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(count - 1, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first, last = math.floor(lo / step + 1e-9) * step, math.ceil(hi / step - 1e-9) * step
    ticks, v = [], first
    while v <= last + step * 1e-9:
        ticks.append(round(v, 12))
        v += step
    return ticks


def _label(v: float) -> str:
    if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
        return f"{v:.3g}"
    return f"{v:,.10g}"


def _thin(xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    if len(xs) <= MAX_POINTS:
        return xs, ys
    stride = math.ceil(len(xs) / MAX_POINTS)
    keep = list(range(0, len(xs), stride)) + ([len(xs) - 1] if (len(xs) - 1) % stride else [])
    return [xs[i] for i in keep], [ys[i] for i in keep]


class _Frame(NamedTuple):
    """The plot's area in pixels and the data range it shows."""

    left: int
    top: int
    pw: int
    ph: int
    x0: float
    x1: float
    y0: float
    y1: float

    def px(self, x: float) -> float:
        return self.left + (x - self.x0) / (self.x1 - self.x0) * self.pw

    def py(self, y: float) -> float:
        return self.top + self.ph - (y - self.y0) / (self.y1 - self.y0) * self.ph


def _series(curves: list[RewardCurve], x_mode: str) -> list[tuple[list[float], list[float]]]:
    """Each curve's finite points against steps or seconds, thinned."""
    series = []
    for c in curves:
        xs = c.steps if x_mode == "step" else c.seconds
        pts = [(x, y) for x, y in zip(xs, c.mean_reward, strict=False) if math.isfinite(x) and math.isfinite(y)]
        series.append(_thin([p[0] for p in pts], [p[1] for p in pts]))
    return series


def _frame(series: list[tuple[list[float], list[float]]], shaded: list[Band], width: int,
           height: int) -> tuple[_Frame, list[float], list[float]]:
    """The frame that holds every point, band and tick, and the ticks."""
    all_x = [x for xs, _ in series for x in xs] or [0.0, 1.0]
    all_y = [y for _, ys in series for y in ys] + [y for _, lo, hi in shaded for y in (*lo, *hi) if math.isfinite(y)]
    all_y = all_y or [0.0, 1.0]
    x_ticks, y_ticks = nice_ticks(min(all_x), max(all_x)), nice_ticks(min(all_y), max(all_y))
    x0, x1 = min([*all_x, *x_ticks]), max([*all_x, *x_ticks])
    y0, y1 = min([*all_y, *y_ticks]), max([*all_y, *y_ticks])
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)
    left, right, top, bottom = 70, 40, 40, 50
    return _Frame(left, top, width - left - right, height - top - bottom, x0, x1, y0, y1), x_ticks, y_ticks


def _axes(f: _Frame, x_ticks: list[float], y_ticks: list[float], x_label: str, y_label: str, height: int,
          foreground: str) -> list[str]:
    """The grid, the axes, their ticks and labels."""
    left, top, pw, ph = f.left, f.top, f.pw, f.ph
    out = [f'<g id="grid" stroke="{foreground}" stroke-opacity="0.15" stroke-width="1">']
    out += [f'<line x1="{f.px(t):.2f}" y1="{top}" x2="{f.px(t):.2f}" y2="{top + ph}"/>' for t in x_ticks]
    out += [f'<line x1="{left}" y1="{f.py(t):.2f}" x2="{left + pw}" y2="{f.py(t):.2f}"/>' for t in y_ticks]
    out.append("</g>")
    out.append(f'<g id="axes" fill="{foreground}">'
               f'<path d="M{left},{top} V{top + ph} H{left + pw}" stroke="{foreground}" fill="none"/>')
    out += [f'<text x="{f.px(t):.2f}" y="{top + ph + 18}" text-anchor="middle">{_label(t)}</text>' for t in x_ticks]
    out += [f'<text x="{left - 6}" y="{f.py(t) + 4:.2f}" text-anchor="end">{_label(t)}</text>' for t in y_ticks]
    out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 10}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text transform="translate(16,{top + ph / 2:.1f}) rotate(-90)" text-anchor="middle">'
               f'{escape(y_label)}</text></g>')
    return out


def _bands(f: _Frame, bands: list[Band | None], colors: list[str]) -> list[str]:
    out = ['<g id="bands" stroke="none" fill-opacity="0.25">']
    for i, band in enumerate(bands):
        if band is not None:
            xs, lo, hi = band
            edge = [(x, y) for x, y in zip(xs, lo, strict=True)] + [(x, y) for x, y in zip(xs, hi, strict=True)][::-1]
            points = " ".join(f"{f.px(x):.2f},{f.py(y):.2f}" for x, y in edge)
            out.append(f'<polygon fill="{colors[i % len(colors)]}" points="{points}"/>')
    out.append("</g>")
    return out


def _curves_and_legend(f: _Frame, series: list[tuple[list[float], list[float]]], labels: list[str],
                       colors: list[str], foreground: str) -> list[str]:
    out = ['<g id="curves" fill="none" stroke-width="2" stroke-linejoin="round">']
    for i, ((xs, ys), label) in enumerate(zip(series, labels, strict=True)):
        points = " ".join(f"{f.px(x):.2f},{f.py(y):.2f}" for x, y in zip(xs, ys, strict=True))
        out.append(f'<polyline stroke="{colors[i % len(colors)]}" points="{points}"><title>{escape(label)}</title></polyline>')
    out.append("</g>")
    out.append(f'<g id="legend" fill="{foreground}">')
    for i, label in enumerate(labels):
        y = f.top + 14 + 18 * i
        out.append(f'<line x1="{f.left + 12}" y1="{y - 4}" x2="{f.left + 36}" y2="{y - 4}" '
                   f'stroke="{colors[i % len(colors)]}" stroke-width="2"/>')
        out.append(f'<text x="{f.left + 42}" y="{y}">{escape(label)}</text>')
    out.append("</g>")
    return out


def curves_svg(curves: list[RewardCurve], x_mode: str = "step", title: str = "Episode reward",
               y_label: str = "reward", labels: list[str] | None = None, width: int = 960, height: int = 540, *,
               background: str, foreground: str, colors: list[str], bands: list[Band | None] | None = None) -> str:
    """An SVG document of ``curves`` against timesteps (``step``) or seconds since start (``time``),
    in the caller's colours (the window passes its theme's); ``bands[i]``, when given, is drawn behind curve i."""
    x_label = "timesteps" if x_mode == "step" else "wall time since start (s)"
    labels = labels or [c.label for c in curves]
    series = _series(curves, x_mode)
    shaded = [b for b in (bands or []) if b is not None]
    frame, x_ticks, y_ticks = _frame(series, shaded, width, height)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           f'font-family="sans-serif" font-size="12">',
           f"<title>{escape(title)}</title>",
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="{background}"/>',
           f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" fill="{foreground}" font-size="14">{escape(title)}</text>']
    out += _axes(frame, x_ticks, y_ticks, x_label, y_label, height, foreground)
    if shaded:
        out += _bands(frame, bands or [], colors)
    out += _curves_and_legend(frame, series, labels, colors, foreground)
    out.append("</svg>")
    return "\n".join(out) + "\n"
