"""GUI test fixtures: QSettings redirected to a temp folder for every test (pytest-qt gives ``qapp``)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings


@pytest.fixture(autouse=True)
def qsettings_dir(tmp_path_factory, qapp):
    """Window state written by one test never leaks into another (or into the user's settings)."""
    path = tmp_path_factory.mktemp("qsettings")
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(path))
    return path
