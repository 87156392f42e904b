"""The performance profile of a summary across envs as a standalone SVG (no Qt): one step line per algorithm.

Drawn from the numbers like ``core.results.svg``'s reward curves (whose ticks it shares): the fraction of runs
with a normalised score above tau, against tau; 0 on the x axis is the baseline.
"""

from __future__ import annotations

from html import escape

from core.results.multienv import MultiEnvSummary
from core.results.svg import nice_ticks

COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


def profile_svg(summary: MultiEnvSummary, width: int = 800, height: int = 480, background: str = "#ffffff",
                foreground: str = "#303030", colors: tuple[str, ...] = COLORS) -> str:
    """An SVG document of ``summary``'s performance profiles (one per algorithm)."""
    taus = summary.taus or [0.0, 1.0]
    x_ticks, y_ticks = nice_ticks(min(taus), max(taus)), [0.0, 0.25, 0.5, 0.75, 1.0]
    x0, x1 = min([*taus, *x_ticks]), max([*taus, *x_ticks])
    x1 = x1 if x1 > x0 else x0 + 1
    left, right, top, bottom = 70, 30, 40, 50
    pw, ph = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def py(y: float) -> float:
        return top + ph - y * ph

    title = "Performance profile: fraction of runs with normalised score > tau"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           'font-family="sans-serif" font-size="12">', f"<title>{escape(title)}</title>",
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="{background}"/>',
           f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" fill="{foreground}" font-size="14">{escape(title)}</text>',
           f'<g id="grid" stroke="{foreground}" stroke-opacity="0.15" stroke-width="1">']
    out += [f'<line x1="{px(t):.2f}" y1="{top}" x2="{px(t):.2f}" y2="{top + ph}"/>' for t in x_ticks]
    out += [f'<line x1="{left}" y1="{py(t):.2f}" x2="{left + pw}" y2="{py(t):.2f}"/>' for t in y_ticks]
    out += ["</g>", f'<g id="axes" fill="{foreground}">'
            f'<path d="M{left},{top} V{top + ph} H{left + pw}" stroke="{foreground}" fill="none"/>']
    out += [f'<text x="{px(t):.2f}" y="{top + ph + 18}" text-anchor="middle">{t:g}</text>' for t in x_ticks]
    out += [f'<text x="{left - 6}" y="{py(t) + 4:.2f}" text-anchor="end">{t:g}</text>' for t in y_ticks]
    out += [f'<text x="{left + pw / 2:.1f}" y="{height - 10}" text-anchor="middle">normalised score tau '
            '(0: the baseline)</text>',
            f'<text transform="translate(16,{top + ph / 2:.1f}) rotate(-90)" text-anchor="middle">fraction of runs '
            '&gt; tau</text></g>', '<g id="profiles" fill="none" stroke-width="2">']
    for i, row in enumerate(summary.rows):
        steps = [f"M{px(taus[0]):.2f},{py(row.profile[0]):.2f}"]
        steps += [f"H{px(t):.2f} V{py(f):.2f}" for t, f in zip(taus[1:], row.profile[1:], strict=True)]
        out.append(f'<path stroke="{colors[i % len(colors)]}" d="{" ".join(steps)}"><title>{escape(row.method)}</title></path>')
    out += ["</g>", f'<g id="legend" fill="{foreground}">']
    for i, row in enumerate(summary.rows):
        y = top + 14 + 18 * i
        iqm = f", IQM {row.iqm:.2f}" if row.iqm is not None else ""
        out.append(f'<line x1="{left + pw - 200}" y1="{y - 4}" x2="{left + pw - 176}" y2="{y - 4}" '
                   f'stroke="{colors[i % len(colors)]}" stroke-width="2"/>')
        out.append(f'<text x="{left + pw - 170}" y="{y}">{escape(row.method)} ({row.n} runs{iqm})</text>')
    out += ["</g>", "</svg>"]
    return "\n".join(out) + "\n"
