"""The bottom layer: files, processes, text and paths, used by every other part of ``core``.

``files`` (atomic writes retrying Windows sharing violations: 10 s for a writer, 2 s for a reader and the window's
thread; ``stage_bytes``: two files written before either is renamed; ``WriteFailed``), ``jsonl`` (reader, writer,
tail), ``yaml_reader`` (the safe YAML reader), ``locks`` (every OS-held lock: filelock, released however its holder
ends), ``procs`` (process identity, trees, detached start, start methods), ``console`` (stdout/stderr and children's
output in UTF-8 whatever the code page), ``text`` (clock, age, bytes, durations, numbers, safe names), ``paths``
(RLPANEL_HOME, the shipped configs/ and resources/), ``imports`` (the module:Class loader), ``threads`` (torch
threads "auto": ``TorchThreads``, the one resolution), ``awake`` (keep the machine awake).
Windows: ``registry`` (the registry read through one function; recorded values in tests), ``powercfg`` (the power
plan), ``winupdate`` (active hours, a pending restart), ``long_paths``, ``power_throttling`` (the worker and its
env processes opt out of EcoQoS), ``power_source`` (battery or mains, power mode), ``defender`` (the runs folder's
exclusion, Controlled Folder Access), ``tdr`` (TdrDelay, TdrLevel).

Nothing here knows about runs, configs or GPUs (ARCHITECTURE.md, "Layers")."""
