"""The Monitor and Log tabs: the followed run's plots and log.

``panel`` (Monitor tab), ``log_panel`` (Log tab: worker.log and the events, each message once), ``follower``
(``RunFollower``: cached columns first, then the JSONL after them, off the GUI thread), ``file_watch``
(``RunWatch``: the run folder's change signals; a polled folder where it cannot be watched), ``tensorboard``
(``TensorBoardLauncher``), ``idle_gpu``, ``time_split_view`` (where the run's time goes, on one line)."""
