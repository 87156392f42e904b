"""Under Torch threads: what an empty field ("auto") comes to on this machine for the config as it stands.

"auto" is resolved by the worker from this machine's cores, the subprocess env processes and the device
(``core.util.threads``), so the number differs from machine to machine and with ``n_envs``; the user sees it
where the field is set: the placeholder says the count, the line below why ("auto: 1 thread here (2 cores,
4 subprocess envs)"). A configured count needs no line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.configure.forms import FieldHint, empty_meaning
from core.estimate.result import FitEstimate
from core.util.threads import TorchThreads

if TYPE_CHECKING:  # the schema loads after the window's first frame
    from core.config.schema import RunConfig


def threads_here(cfg: RunConfig | None, estimate: FitEstimate | None) -> TorchThreads | None:
    """The estimate's count (it knows the device a worker trains on here); without one, the config's own device
    when it names one (None: an invalid config, or ``auto`` before the estimate says which device)."""
    if estimate is not None and estimate.torch_threads is not None:
        return estimate.torch_threads
    if cfg is None or cfg.runtime.device == "auto":
        return None
    from core.estimate.device import worker_threads  # its modules load with the first estimate, after the first frame

    return worker_threads(cfg, cfg.runtime.device)


class TorchThreadsHint(FieldHint):
    """The muted line below the Torch threads row, shown while the field is empty; it also keeps the row's
    placeholder ("auto: 1 thread")."""

    def show_threads(self, threads: TorchThreads | None) -> None:
        """What "auto" is here (None: unknown yet: the placeholder says the rule in words, no line)."""
        auto = threads is not None and threads.auto
        self.row.set_placeholder(f"auto: {threads.count} thread{'' if threads.count == 1 else 's'}" if threads and auto
                                 else empty_meaning(self.row.description))
        if threads is None or not auto:
            self.hide()
            return
        self.setText(threads.text()[0].upper() + threads.text()[1:])
        self.show()
