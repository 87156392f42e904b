"""What this machine has: the doctor's report (``doctor``: Python, torch and CUDA, NVML and each GPU, free
space, the power plan, battery and power mode; ``rlpanel doctor`` prints it, the System tab shows it) and its
Windows checks (``windows_traps``: Defender, Controlled Folder Access, long paths, sysmem fallback, TDR, a line
and a fix each; ``--json``'s ``windows``, every key null off Windows).

Reads the machine through ``core.util`` (the registry, powercfg, Windows Update, power source), ``core.telemetry``
(NVML) and ``core.estimate.device`` (torch's facts, asked in a child). Not here: which device a run trains on and
how much memory it needs (``core.estimate``), live readings during a run (``core.telemetry``)."""
