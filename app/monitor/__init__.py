"""The Monitor and Log tabs: the followed run's plots and log (``panel``, ``log_panel``), the
``follower`` that reads its folder off the GUI thread, and the ``idle_gpu`` monitor."""
