"""The window: a Qt view on ``core`` (see ARCHITECTURE.md, "The window").

pydantic loads its submodules lazily; one first touched after PySide6 is imported goes through
shiboken's import hook, which inspects pydantic mid-import and fails with a circular import. So
the schema, and with it all of pydantic, is loaded here, before any module of the window imports Qt.
"""

import core.config.schema  # noqa: F401
