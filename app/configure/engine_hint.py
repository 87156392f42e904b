"""Under Engine: where sbx is not installed (the README's plain install), the line that says what to install.

The choice keeps both engines (a preset or a file may name sbx: the form shows it as it is); choosing sbx here
also gives validation's error at the field (``core.config.engines.check_engine``), and this line says it before.
"""

from __future__ import annotations

from app.configure.forms import FieldHint


class EngineHint(FieldHint):
    """The muted line below the Engine row, shown only where sbx (JAX) cannot be imported (a note: choosing sbx there
    makes the error)."""

    def show_installed(self) -> None:
        """Asked without importing jax (``find_spec``): shown or hidden by what this Python can import."""
        from core.config.engines import JAX_FIX, sbx_installed  # the schema's modules: loaded with the first validation

        installed = sbx_installed()
        self.setText("" if installed else f"sbx (JAX) is not installed here: {JAX_FIX}")
        self.setVisible(not installed)
