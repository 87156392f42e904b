"""A run's life: started, watched, stopped, resumed; and the agent tools run as children.

``start`` (``start_run``: the one launch path, for the window's Launch, ``rlpanel train``, the queue and sweep
runners: checks the path length and free space, creates the folder, launches; ``restart_run``; ``start_group``:
a group of seeds), ``control`` (``launch_worker``, stop, resume, delete; a cluster run through
``python -m core.cluster.submit``), ``supervisor`` (``python -m core.launch.supervisor RUN_DIR``: the process
around the worker; a worker killed outright is marked crashed and notified; plans and waits out an automatic
resume), ``auto_resume`` (a crashed run resumed by itself after a doubling back-off, never a failure that would
repeat), ``runner_folder`` (``RunnerFolder``: a detached runner's folder, the queue's and each sweep's),
``agent_child`` (a ``core.agent`` tool as a child process: its JSON line or its one-line error; the window and
the command line load no torch), ``agent_results`` (those tools' results in words).

Not here: the run folder's format and its readers (``core.run``), the worker itself (``core.worker``)."""
