"""GPU telemetry plots: memory (with capacity and estimate lines), temperature, utilization, power.

Fed with telemetry records (the run's ``telemetry.jsonl`` or the idle monitor's samples, same
shape). A value NVML does not report is ``None`` and is never drawn as zero: a plot whose field
never had a value says so, and when NVML itself is unavailable every plot shows the reason.
"""

from __future__ import annotations

import pyqtgraph as pg

from app.plots.live_plot import LivePlot
from app.theme import CAPACITY_COLOR, ESTIMATE_COLOR, SERIES_COLORS

GIB = 1024 ** 3

# field -> (title, y label, unit scale)
FIELDS = {
    "memory_used_bytes": ("GPU memory", "GiB", 1 / GIB),
    "temperature_c": ("GPU temperature", "°C", 1.0),
    "utilization_pct": ("GPU utilization", "%", 1.0),
    "power_w": ("GPU power", "W", 1.0),
}


class GpuPlots:
    """The four GPU plots, kept in step (one series per GPU index)."""

    def __init__(self):
        self.plots: dict[str, LivePlot] = {f: LivePlot(title, label, time_only=True) for f, (title, label, _) in FIELDS.items()}
        self._seen_value: dict[str, bool] = dict.fromkeys(FIELDS, False)
        self._unavailable: str | None = None
        mem = self.plots["memory_used_bytes"]
        dash = pg.QtCore.Qt.PenStyle.DashLine
        # labels end at the right edge, clear of the legend (top left); centred, "capacity" was cut
        right = [(1, 0), (1, 1)]
        self.capacity_line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(CAPACITY_COLOR, width=1.5, style=dash),
                                             label="capacity {value:.1f} GiB",
                                             labelOpts={"position": 0.99, "color": CAPACITY_COLOR, "anchors": right})
        self.estimate_line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(ESTIMATE_COLOR, width=1.5, style=dash),
                                             label="estimate {value:.1f} GiB",
                                             labelOpts={"position": 0.99, "color": ESTIMATE_COLOR, "anchors": right})
        for line in (self.capacity_line, self.estimate_line):
            line.setVisible(False)
            mem.getPlotItem().addItem(line)
        self._capacity_bytes: float | None = None

    def widgets(self) -> list[LivePlot]:
        return list(self.plots.values())

    def clear(self) -> None:
        for plot in self.plots.values():
            plot.clear_data()
            plot.set_message(None)
        self._seen_value = dict.fromkeys(FIELDS, False)
        self._unavailable = None
        self._capacity_bytes = None
        self.capacity_line.setVisible(False)

    def set_unavailable(self, reason: str | None) -> None:
        """NVML is not available (``reason``) or available again (``None``)."""
        self._unavailable = reason
        self._update_messages()

    def set_estimate(self, gpu_bytes: float | None) -> None:
        self.estimate_line.setVisible(bool(gpu_bytes))
        if gpu_bytes:
            self.estimate_line.setValue(gpu_bytes / GIB)

    def add_samples(self, samples: list[dict]) -> None:
        """Telemetry records; host-only lines (``gpu`` null) and status lines are handled too."""
        per_series: dict[tuple[str, str], tuple[list, list]] = {}
        for rec in samples:
            if rec.get("kind") == "reset":  # the file was rewritten (thinned): it follows in full
                self.clear()
                per_series.clear()
                continue
            if rec.get("kind") == "status":
                if rec.get("nvml") is False:
                    self.set_unavailable(rec.get("reason") or "NVML is not available")
                continue
            gpu = rec.get("gpu")
            if gpu is None:
                continue
            t = rec.get("t", 0)
            for field, (_, _, scale) in FIELDS.items():
                value = rec.get(field)
                if value is None:
                    continue
                col = per_series.setdefault((field, f"gpu{gpu}"), ([], []))
                col[0].append(t)
                col[1].append(float(value) * scale)
            proc = rec.get("process_memory_bytes")
            if proc is not None:
                col = per_series.setdefault(("memory_used_bytes", f"proc{gpu}"), ([], []))
                col[0].append(t)
                col[1].append(float(proc) / GIB)
            total = rec.get("memory_total_bytes")
            if total and total != self._capacity_bytes:
                self._capacity_bytes = float(total)
                # visible first: a hidden line's label ignores the new value and would keep "0.0 GiB"
                self.capacity_line.setVisible(True)
                self.capacity_line.setValue(self._capacity_bytes / GIB)
        if per_series and self._unavailable:
            self._unavailable = None
        for (field, key), (times, values) in per_series.items():
            plot = self.plots[field]
            if not plot.has_series(key):
                idx = len(plot.series_keys())
                name = f"GPU {key[3:]}" if key.startswith("gpu") else f"this run (GPU {key[4:]})"
                plot.add_series(key, name, SERIES_COLORS[idx % len(SERIES_COLORS)])
            plot.buffer(key).extend(times, times, values)
            self._seen_value[field] = True
        self._update_messages()

    def _update_messages(self) -> None:
        for field, plot in self.plots.items():
            if self._unavailable:
                plot.set_message(f"No GPU data: {self._unavailable}")
            elif not self._seen_value[field] and any(p.point_count() for p in self.plots.values()):
                plot.set_message(f"{FIELDS[field][0]} is not reported by NVML for this GPU")
            else:
                plot.set_message(None)

    def refresh(self) -> bool:
        return any([p.refresh() for p in self.plots.values()])
