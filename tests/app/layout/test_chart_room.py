"""Charts that stay readable on a laptop screen while a run trains (issue 42): the real window at 1920x1080 at 150 %
(1280x720 logical) and 1366x768, following a run that logs nine train/* scalars and cycle records (so the
collect/train bar and its advice show) on a machine without an NVIDIA GPU (its telemetry: host readings and NVML's
reason). Every chart in view is whole and at least 100 px tall, the chart grid scrolls by whole rows, the bar and
its advice take one line, the GPU plots fold to one line saying why, and no two x labels run together
(``tests/app/layout/monitor_room.py`` measures it).

Before (main at 9ed005f): the chart grid had a view of 68 px at 1280x720 for rows of 100 (each chart's top 68 px
shown, its x axis cut off; a page down showed 32 px of the next rows), 109 px at 1366x768 (a step down: 89 px of one
row and 16 of the next); the time split took 44 px (its advice wrapped to three lines); four "No GPU data" plots took
two rows of 140 px; and the charts, 218 px wide over 100,000-101,000 steps, ran "100.2k" and "100.4k" together.
"""

from __future__ import annotations

import pytest

from tests.app.layout.screens import LAPTOPS, on_screen

pytestmark = pytest.mark.gui


@pytest.mark.parametrize(("width", "height", "scale"), LAPTOPS)
def test_every_chart_keeps_its_room_while_a_run_trains_without_a_gpu(runs_dir, width, height, scale):
    data = on_screen("tests.app.layout.monitor_room", [str(runs_dir)], width, height, scale)
    print(f"{width}x{height} at {scale}: window {data['window']}, {data['measures']}")
    assert not data["problems"], "\n".join(data["problems"])
