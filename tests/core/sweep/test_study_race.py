"""A sweep's study is opened by one process at a time: a new SQLite file gets Optuna's tables when it
is first opened, and a runner creating its study died on SQLite's UNIQUE constraint (alembic_version)
when a `sweep status` opened the same new file at that moment."""

from __future__ import annotations

import threading
import time

from core.sweep.folder import SweepFolder
from core.sweep.spec import parse_sweep
from core.sweep.study import load_study, open_study
from core.util.locks import held_briefly
from tests.core.sweep.helpers import SMALL_SWEEP


def test_reading_a_study_waits_while_another_process_opens_it(runs_dir):
    spec = parse_sweep(SMALL_SWEEP)
    folder = SweepFolder(runs_dir, spec.name)
    open_study(spec, folder)  # the runner's first opening created the file and its tables
    read: list[object] = []
    with held_briefly(folder.path / "study.lock"):  # as the runner (or another reader) holds it while opening
        reader = threading.Thread(target=lambda: read.append(load_study(spec, folder)))
        reader.start()
        time.sleep(1.0)
        assert reader.is_alive() and read == []  # it waits: it never opens a storage mid-creation
    reader.join(timeout=60)
    assert read and read[0] is not None and read[0].study_name == spec.name


def test_a_study_opened_again_and_read_many_times_stays_one_study(runs_dir):
    spec = parse_sweep(SMALL_SWEEP)
    folder = SweepFolder(runs_dir, spec.name)
    assert load_study(spec, folder) is None  # before its runner created it
    errors: list[BaseException] = []

    def poll() -> None:
        try:
            for _ in range(20):
                load_study(spec, folder)
        except BaseException as exc:  # noqa: BLE001 (what `sweep status` would have died of)
            errors.append(exc)

    readers = [threading.Thread(target=poll) for _ in range(3)]
    for thread in readers:
        thread.start()
    open_study(spec, folder)
    open_study(spec, folder)  # a resume
    for thread in readers:
        thread.join(timeout=120)
    assert errors == [] and len(load_study(spec, folder).get_trials()) == 0
