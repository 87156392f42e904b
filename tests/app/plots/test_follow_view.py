"""A live plot's view follows its data from the extents the plot keeps (app.plots.headroom), in steps: it always holds
every point, moves only when the data leaves it, stays where a user's wheel put it, and an unchanged frame sets nothing."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from app.plots.reward_plot import RewardPlot
from app.plots.training_plots import SpeedPlot


def shown(qtbot, plot, pages: list[QWidget]):
    page = QWidget()  # closed at the end with the plot in it (pyqtgraph's widget closed alone tears down twice)
    qtbot.addWidget(page)
    QVBoxLayout(page).addWidget(plot)
    page.resize(700, 320)
    page.show()
    qtbot.waitExposed(page)
    pages.append(page)  # held for the test's length
    return plot


def view(plot, paint: bool = True) -> tuple[list[float], list[float]]:
    """The range painted (autoscale, pyqtgraph's or ours, runs before a paint)."""
    if paint:
        plot.grab()
    x, y = plot.getPlotItem().vb.viewRange()
    return list(x), list(y)


def holds(plot, key: str, paint: bool = True) -> bool:
    buf = plot.buffer(key)
    (left, right), (low, high) = view(plot, paint)
    x, v = buf.x(plot.x_mode), buf.values
    finite = v[np.isfinite(v)]
    return left <= x[0] and x[-1] <= right and low <= finite.min() and finite.max() <= high


@pytest.fixture
def pages():
    return []


@pytest.fixture
def speed(qtbot, pages):
    plot = shown(qtbot, SpeedPlot(), pages)
    plot.buffer("fps").extend(np.arange(1000) * 100.0, np.arange(1000.0), 1000 + np.sin(np.arange(1000.0)) * 10)
    assert plot.refresh()
    return plot


def test_the_view_follows_new_data_and_moves_only_when_the_data_leaves_it(speed):
    vb = speed.getPlotItem().vb
    assert holds(speed, "fps")
    before, sets = view(speed), vb.range_sets
    fps = speed.buffer("fps")
    fps.extend([100_000.0, 100_100.0], [1000.0, 1001.0], [1005.0, 995.0])  # inside the room ahead and the y range
    assert speed.refresh() and view(speed) == before and vb.range_sets == sets
    fps.append(100_200.0, 1002.0, 1500.0)  # a value above the range: y grows to hold it, x stays
    assert speed.refresh() and holds(speed, "fps")
    assert view(speed)[1] != before[1] and view(speed)[0] == before[0]
    fps.extend(np.arange(1003, 1200) * 100.0, np.arange(1003.0, 1200.0), np.full(197, 1000.0))  # past the room ahead
    assert speed.refresh() and holds(speed, "fps") and view(speed)[0] != before[0]


def test_an_unchanged_frame_sets_no_range_and_gives_no_curve_its_data(speed):
    vb = speed.getPlotItem().vb
    changed: list[object] = []
    vb.sigRangeChanged.connect(lambda *a: changed.append(a))
    speed.curve("fps").sigPlotChanged.connect(lambda *a: changed.append(a))
    sets = vb.range_sets
    for _ in range(3):
        assert not speed.refresh()
        speed.grab()  # a paint neither: autoscale is not asked again on paint
    speed._redecimate()  # a redraw asked for (a resize, a zoom back): the same drawing, nothing set
    assert not speed.refresh()
    speed.grab()
    assert changed == [] and vb.range_sets == sets


def wheel(plot, steps: int) -> None:
    """A real wheel turn over the middle of the plot (pyqtgraph zooms there and stops autoscaling)."""
    viewport = plot.viewport()
    at = QPointF(viewport.width() / 2, viewport.height() / 2)
    event = QWheelEvent(at, QPointF(viewport.mapToGlobal(at.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(viewport, event)


def test_a_zoomed_view_stays_where_the_user_put_it_until_autoscale_is_asked_again(qtbot, speed):
    vb = speed.getPlotItem().vb
    manual: list[object] = []
    vb.sigRangeChangedManually.connect(manual.append)
    whole = view(speed)
    wheel(speed, 2)
    assert manual and vb.autoRangeEnabled() == [False, False]
    zoomed = view(speed)
    assert zoomed[0][1] - zoomed[0][0] < whole[0][1] - whole[0][0]
    fps = speed.buffer("fps")
    fps.extend(np.arange(1000, 2000) * 100.0, np.arange(1000.0, 2000.0), np.full(1000, 5000.0))  # far outside the zoom
    assert speed.refresh()
    speed.grab()
    assert view(speed) == zoomed  # not pulled back to the newest point
    speed.getPlotItem().autoBtnClicked()  # the plot's "A" button: follow again
    speed.grab()
    assert vb.autoRangeEnabled()[0] and holds(speed, "fps")
    fps.append(200_500.0, 2005.0, 9000.0)
    assert speed.refresh() and holds(speed, "fps")


def test_the_drawn_range_always_holds_every_point_and_moves_in_steps(qtbot, pages):
    plot = shown(qtbot, RewardPlot(), pages)
    vb = plot.getPlotItem().vb
    rng = np.random.default_rng(7)
    episodes, frames = plot.buffer("episode"), 150
    history = 20_000  # a run some hours in: its view grows 3 % of its span ahead at a time
    steps = 500.0 * np.arange(1, history + 1)
    episodes.extend(steps, steps / 1000, np.cumsum(rng.normal(0, 0.5, history)))
    step, level = float(steps[-1]), float(episodes.values[-1])
    assert plot.refresh() and holds(plot, "episode")
    sets = vb.range_sets
    for frame in range(frames):
        n = int(rng.integers(1, 30))
        level += rng.normal(0, 3)
        rewards = level + rng.normal(0, 5, n)
        if frame % 47 == 20:
            rewards[-1] += 400 * rng.choice([-1, 1])  # a spike, either way
        steps = step + 500 * np.arange(1, n + 1)
        step = float(steps[-1])
        episodes.extend(steps, steps / 1000, rewards)
        assert plot.refresh()
        plot.grab()
        for key in ("episode", "mean"):
            assert holds(plot, key, paint=False), (frame, key, view(plot))
    assert vb.range_sets - sets < frames / 10  # in steps, not on every frame


def test_a_log_axis_fits_the_logs_of_the_values_and_the_values_again_once_off(speed):
    values = speed.buffer("fps").values
    speed.set_log_y(True)  # as the scalar charts' "log y" box does; the plot's menu does the same
    speed.refresh()
    _, (low, high) = view(speed)
    assert low <= np.log10(values.min()) and np.log10(values.max()) <= high < 4  # not the values' own 990 .. 1010
    speed.set_log_y(False)
    speed.refresh()
    assert holds(speed, "fps") and view(speed)[1][0] > 900


def test_a_log_axis_follows_what_is_drawn_in_steps_too(speed):
    """Fitted exactly to what is drawn (pyqtgraph's autoscale), a transformed view moved on every paint: what is drawn
    depends on the view, and two charts of a 12 h run traded ranges for ever inside one processEvents."""
    vb = speed.getPlotItem().vb
    speed.set_log_y(True)
    speed.refresh()
    before = view(speed)
    sets = vb.range_sets
    for _ in range(3):  # paints with nothing new: the view stays
        assert view(speed) == before
    speed.buffer("fps").extend([100_000.0, 100_100.0], [1000.0, 1001.0], [1005.0, 995.0])  # inside the range
    assert speed.refresh() and view(speed) == before and vb.range_sets == sets
    speed.buffer("fps").append(100_200.0, 1002.0, 5000.0)  # log10 3.7: above the range, which grows to hold it
    assert speed.refresh()
    (_, right), (_, high) = view(speed)
    assert high >= np.log10(5000.0) and right >= 100_200.0 and vb.range_sets == sets + 1
