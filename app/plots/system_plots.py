"""The machine under the run: GPU memory, temperature, utilization and power, the run's CPU and RAM.

Each memory plot says which figure it draws. GPU memory: the run's own processes first, its legend
naming the measure (NVML's per-process figure; Windows' counter where NVML has none, under WDDM;
torch's reserved memory, without the CUDA context, where neither has one), then the card's total used,
which counts other programs and the driver's own reserve (~480 MiB on an idle H100 that
nvidia-smi shows as 0 MiB); its legend is always shown. Run RAM: the run's processes, each by its
own memory, the measure in the title (PSS, USS, private bytes; ``core.telemetry.host``); a run
recorded before own memory was read has only the RSS sum, which the title then names.

Fed with columns of telemetry (the run's ``telemetry.jsonl`` or the idle monitor's samples,
same shape; ``core.run.cache.columns``). Each plot reads against its limit, on an axis that does not
autoscale a hot GPU into a cool-looking curve: utilization 0-100 %, temperature from 0 with the
GPU's own slowdown threshold (NVML) as a line, memory up to the card's capacity (and this run's
estimate), power up to the enforced power limit. Readings past a threshold
(``core.telemetry.thresholds``) are drawn in the alert colour and named by ``alerts()``. Where
NVML said the clocks were slowed (power cap, thermal slowdown, ...: ``core.telemetry.throttle``)
the GPU plots are shaded, and the crosshair's readout over a shaded span names the reasons.

A value NVML does not report is ``None`` and is never drawn as zero: a plot whose field never had
a value says so, and when there is no GPU data at all (NVML is unavailable, or a run's telemetry has host readings
only) ``gpu_note`` says why, in one line the GPU plots fold to (``app.plots.system_area``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg

from app.plots.live_plot import LivePlot
from app.plots.on_screen import Clip
from app.theme import (
    CAPACITY_COLOR,
    ESTIMATE_COLOR,
    HOST_COLORS,
    LIMIT_COLOR,
    MEMORY_CARD_COLOR,
    MEMORY_RUN_COLOR,
    SERIES_COLORS,
    THROTTLE_COLOR,
)
from core.run.cache.columns import RUN_GPU_SERIES
from core.telemetry.gpu_measure import MEASURES, SHORT_WORDS, WORDS
from core.telemetry.host import MEASURE_WORDS, measure_name
from core.telemetry.thresholds import gpu_alerts, warn_levels
from core.telemetry.throttle import reason_names

GIB = 1024**3
MAX_POINTS = 2**17  # points a reading's series holds (4 MB): its older part kept as its envelope (app.plots.buffers)

# field -> (title, y label, unit)
GPU_FIELDS = {
    "memory_used_bytes": ("GPU memory", "GiB", "GiB"),
    "temperature_c": ("GPU temperature", "°C", "°C"),
    "utilization_pct": ("GPU utilization", "%", "%"),
    "power_w": ("GPU power", "W", "W"),
}
HOST_FIELDS = {
    "process_cpu_pct": ("Run CPU (% of one core)", "%", "%"),
    "host_memory_bytes": ("Run RAM", "GiB", "GiB"),
}
RAM = "host_memory_bytes"
RSS_SUM = "rss_bytes"  # the RSS sum: drawn on the RAM plot only for a run recorded without own memory
# the memory plots' words: short ones on the plot (a laptop's plot is ~200 px wide), the long ones as its tooltip
GPU_MEMORY_TIP = "\n".join([*(f"this run ({SHORT_WORDS[m]}): {WORDS[m]}" for m in MEASURES),
                            "card total incl. driver: all the card's used memory, other programs and the driver's own "
                            "reserve included (~480 MiB on an idle H100 that nvidia-smi shows as 0)"])
FIELDS = {**GPU_FIELDS, **HOST_FIELDS}
WARN_SCALE = {"memory_used_bytes": 1 / GIB, "temperature_c": 1.0, "power_w": 1.0}  # telemetry unit -> plotted
# two rows of these, a row of scalar charts and the reward plot fit a 1280x720 window's Monitor (its splitter gets
# ~520 px): at LivePlot's 140 they asked 618 px of the Monitor's 609, and the charts were pressed to 100 px
MIN_HEIGHT = 120
THROTTLE_MERGE_S = 5.0  # a span starting this soon after the last one ends continues it
NO_GPU_READINGS = "the run's telemetry has host readings only"  # no NVML reason recorded, and no GPU line


LABEL_Z = 20  # a limit's label is drawn over the readings (a hot GPU's red points hid "slowdown 87 °C")


def _limit_line(color: str, label: str, position: float = 0.99) -> pg.InfiniteLine:
    # labels end at the right edge, clear of the legend (top left); centred, "capacity" was cut
    line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(color, width=1.5, style=pg.QtCore.Qt.PenStyle.DashLine),
                           label=label, labelOpts={"position": position, "color": color, "anchors": [(1, 0), (1, 1)]})
    line.setVisible(False)
    line.setZValue(LABEL_Z)
    return line


class SystemPlots:
    """The six plots, kept in step (one GPU series per GPU index, the run's own CPU and RAM)."""

    def __init__(self) -> None:
        # x_label off: the ticks are a clock
        self.plots: dict[str, LivePlot] = {f: LivePlot(title, label, unit=unit, time_only=True, x_label=False)
                                           for f, (title, label, unit) in FIELDS.items()}
        self.plots["memory_used_bytes"].setToolTip(GPU_MEMORY_TIP)
        for plot in self.plots.values():
            plot.setMinimumHeight(MIN_HEIGHT)
        self._seen_value: dict[str, bool] = dict.fromkeys(FIELDS, False)
        self._own_memory = False  # the run's own memory came: its RSS sum is not drawn
        self._unavailable: str | None = None
        self._note: str | None = None  # gpu_note as last told
        self.on_note: Callable[[str | None], None] | None = None  # told when gpu_note changes
        self.latest: dict[int, dict[str, Any]] = {}
        self.capacity_line = _limit_line(CAPACITY_COLOR, "capacity {value:.1f} GiB")
        # mid-line: at the right end it would sit on the capacity label when the estimate is near it
        self.estimate_line = _limit_line(ESTIMATE_COLOR, "estimate {value:.1f} GiB", position=0.6)
        self.slowdown_line = _limit_line(LIMIT_COLOR, "slowdown {value:.0f} °C")
        self.power_limit_line = _limit_line(LIMIT_COLOR, "limit {value:.0f} W")
        for field, line in (("memory_used_bytes", self.capacity_line), ("memory_used_bytes", self.estimate_line),
                            ("temperature_c", self.slowdown_line), ("power_w", self.power_limit_line)):
            self.plots[field].getPlotItem().addItem(line)
        self._spans()
        self.throttled: list[list[float]] = []  # [start, end, reason bits] of each shaded span
        self._regions: list[list[pg.LinearRegionItem]] = []  # per span, one region on each GPU plot
        for field in GPU_FIELDS:
            self.plots[field].readout_extra = self.throttle_at

    def set_theme_colors(self, background: str, foreground: str) -> None:
        """Each limit's label on a see-through backing of the plot's background: readable over the lines."""
        fill = pg.mkColor(background)
        fill.setAlpha(80)  # light: a reading under a label stays visible as what it is
        for line in (self.capacity_line, self.estimate_line, self.slowdown_line, self.power_limit_line):
            line.label.fill = pg.mkBrush(fill)
            line.label.update()
        for plot in self.plots.values():
            plot.set_theme_colors(background, foreground)

    def widgets(self) -> list[LivePlot]:
        return list(self.plots.values())

    def gpu_widgets(self) -> list[LivePlot]:
        return [self.plots[f] for f in GPU_FIELDS]

    def _spans(self) -> None:
        """Fixed axes: from each limit when the GPU reports it, else a plain range."""
        first = self.latest[min(self.latest)] if self.latest else {}
        slowdown, total, limit = (first.get(k) for k in ("temperature_slowdown_c", "memory_total_bytes", "power_limit_w"))
        self.plots["utilization_pct"].set_y_span(0, 100)
        self.plots["temperature_c"].set_y_span(0, max(100.0, float(slowdown or 0) + 5))
        self.plots["memory_used_bytes"].set_y_span(0, float(total) / GIB * 1.05 if total else 1.0)
        self.plots["power_w"].set_y_span(0, float(limit) * 1.08 if limit else 100.0)
        self.plots["process_cpu_pct"].set_y_span(0, 100)
        self.plots[RAM].set_y_span(0, 1.0)

    def clear(self) -> None:
        """Another run (or the idle monitor): its GPUs' series, limits and readings go."""
        for plot in self.plots.values():
            plot.reset()
            plot.set_message(None)
            plot.set_warn_level(None)
        self._seen_value = dict.fromkeys(FIELDS, False)
        self._own_memory = False
        self.plots[RAM].set_title(HOST_FIELDS[RAM][0])
        self.plots[RAM].setToolTip("")
        self._unavailable = None
        self.latest = {}
        for regions in self._regions:
            for field, region in zip(GPU_FIELDS, regions, strict=True):
                self.plots[field].getPlotItem().removeItem(region)
        self.throttled, self._regions = [], []
        for line in (self.capacity_line, self.slowdown_line, self.power_limit_line):
            line.setVisible(False)
        self._spans()
        self._tell_note()

    def set_unavailable(self, reason: str | None) -> None:
        """NVML is not available (``reason``) or available again (``None``)."""
        self._unavailable = reason
        self._update_messages()

    def set_estimate(self, gpu_bytes: float | None) -> None:
        self.estimate_line.setVisible(bool(gpu_bytes))
        if gpu_bytes:
            self.estimate_line.setValue(gpu_bytes / GIB)

    def mark_break(self) -> None:
        for plot in self.plots.values():
            plot.mark_break()

    def add_series(self, series: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]) -> None:
        """``(field, key) -> (times, values)``; a series is created the first time its key comes."""
        if not self._own_memory and any(field == RAM for field, _ in series):
            self._own_memory = True
            if self.plots[RAM].has_series(RSS_SUM):
                self.plots[RAM].remove_series(RSS_SUM)
        for (field, key), (times, values) in series.items():
            if field == RSS_SUM:
                if self._own_memory:
                    continue
                field, key = RAM, RSS_SUM
            plot = self.plots[field]
            if not plot.has_series(key):
                plot.add_series(key, *self._name_and_color(field, key, len(plot.series_keys())), keep=False)
                plot.buffer(key).max_points = MAX_POINTS  # older readings at screen resolution (app.plots.buffers)
                if field == RAM:
                    plot.set_title(self._ram_title())
            plot.buffer(key).extend(times, times, values)
            # one GPU's line needs no legend box over its data; the GPU memory plot's names which figure it is
            plot.legend.setVisible(len(plot.series_keys()) > 1 or field == "memory_used_bytes")
            self._seen_value[field] = True
        if series and self._unavailable and any(f in GPU_FIELDS for f, _ in series):
            self._unavailable = None
        self._update_messages()

    def add_throttled(self, spans: list[tuple[float, float, int]]) -> None:
        """Shade the spans where the clocks were slowed (a span close to the last one extends it)."""
        for start, end, bits in spans:
            if self.throttled and start - self.throttled[-1][1] <= THROTTLE_MERGE_S:
                last = self.throttled[-1]
                last[1], last[2] = max(last[1], end), int(last[2]) | bits
                for region in self._regions[-1]:
                    region.setRegion((last[0], last[1]))
                continue
            self.throttled.append([start, end, bits])
            regions = []
            for field in GPU_FIELDS:
                region = pg.LinearRegionItem((start, end), movable=False, brush=pg.mkBrush(*THROTTLE_COLOR),
                                             pen=pg.mkPen(None))
                region.setZValue(-10)
                self.plots[field].getPlotItem().addItem(region)
                regions.append(region)
            self._regions.append(regions)

    def throttle_at(self, x: float) -> str | None:
        """The readout's words over a shaded span: which slowdowns NVML named there."""
        for start, end, bits in self.throttled:
            if start - 0.5 <= x <= end + 0.5:
                return "clocks slowed: " + ", ".join(reason_names(int(bits)))
        return None

    def _ram_title(self) -> str:
        """The RAM plot's title names the measure of its one series (its tooltip says what that counts);
        plain when the legend names several."""
        keys = self.plots[RAM].series_keys()
        measures = ["rss" if k == RSS_SUM else k for k in keys]
        self.plots[RAM].setToolTip("\n".join(f"this run ({measure_name(m)}): {MEASURE_WORDS.get(m, m)}" for m in measures))
        return f"{HOST_FIELDS[RAM][0]} ({measure_name(measures[0])})" if len(measures) == 1 else HOST_FIELDS[RAM][0]

    @staticmethod
    def _name_and_color(field: str, key: str, index: int) -> tuple[str, str]:
        if field == RAM:
            measure = "rss" if key == RSS_SUM else key
            return f"this run ({measure_name(measure)})", HOST_COLORS[RAM] if index == 0 else SERIES_COLORS[(index + 4) % 8]
        if field in HOST_FIELDS:
            return "this run", HOST_COLORS[field]
        prefix = key.rstrip("0123456789")
        if prefix in RUN_GPU_SERIES:  # GPU 0's names need no number: most machines have one GPU
            gpu, what = key.removeprefix(prefix), SHORT_WORDS[RUN_GPU_SERIES[prefix]]
            name = f"this run ({what})" if gpu == "0" else f"this run, GPU {gpu} ({what})"
            return name, MEMORY_RUN_COLOR if gpu == "0" else SERIES_COLORS[(index + 3) % 8]
        if field == "memory_used_bytes":
            return ("card total incl. driver" if key == "gpu0" else f"GPU {key[3:]} total incl. driver",
                    MEMORY_CARD_COLOR if key == "gpu0" else SERIES_COLORS[(index + 2) % 8])
        return f"GPU {key[3:]}", SERIES_COLORS[index % len(SERIES_COLORS)]

    def set_latest(self, latest: dict[int, dict[str, Any]]) -> None:
        """The newest line of each GPU: its limits drawn as lines, its thresholds as warning levels."""
        if not latest:
            return
        limits_before = {g: _limits(line) for g, line in self.latest.items()}
        self.latest.update(latest)
        first = self.latest[min(self.latest)]
        total, slowdown, limit = (first.get(k) for k in ("memory_total_bytes", "temperature_slowdown_c", "power_limit_w"))
        # visible first: a hidden line's label ignores the new value and would keep "0.0 GiB"
        for line, value, scale in ((self.capacity_line, total, 1 / GIB), (self.slowdown_line, slowdown, 1.0),
                                   (self.power_limit_line, limit, 1.0)):
            line.setVisible(bool(value))
            if value:
                line.setValue(float(value) * scale)
        levels = warn_levels(first)
        for field, scale in WARN_SCALE.items():
            self.plots[field].set_warn_level(levels[field] * scale if field in levels else None)
        if limits_before != {g: _limits(line) for g, line in self.latest.items()}:
            self._spans()

    def alerts(self) -> list[str]:
        """The newest readings past their thresholds, in words (the status line shows them)."""
        return [alert.message for gpu in sorted(self.latest) for alert in gpu_alerts(self.latest[gpu])]

    def _update_messages(self) -> None:
        any_data = any(self.plots[f].point_count() for f in GPU_FIELDS)
        for field, plot in self.plots.items():
            if field in GPU_FIELDS and self._unavailable:
                plot.set_message(f"No GPU data: {self._unavailable}")
            elif field in GPU_FIELDS and not self._seen_value[field] and any_data:
                plot.set_message(f"{FIELDS[field][0]} is not reported by NVML for this GPU")
            else:
                plot.set_message(None)
        self._tell_note()

    def gpu_note(self) -> str | None:
        """Why there is no GPU data to draw (the GPU plots fold to this line), or None."""
        if self._unavailable:
            return f"No GPU data: {self._unavailable}"
        if not any(self._seen_value[f] for f in GPU_FIELDS) and any(self._seen_value[f] for f in HOST_FIELDS):
            return f"No GPU data: {NO_GPU_READINGS}"
        return None

    def _tell_note(self) -> None:
        note = self.gpu_note()
        if note != self._note:
            self._note = note
            if self.on_note is not None:
                self.on_note(note)

    def refresh(self) -> bool:
        clip = Clip()
        return any([p.refresh(clip) for p in self.plots.values()])


def _limits(line: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(line.get(k) for k in ("memory_total_bytes", "temperature_slowdown_c", "power_limit_w"))
