"""``rlpanel tune``: throughput tuning. Short real trainings of candidate settings; the fastest that fits.

``knobs`` (the settings varied, what changes learning, the moves), ``probe`` (one throughput probe as a child
process, with a timeout), ``search`` (``Tuner``: the coarse-to-fine search, screened by the estimate), ``table``
(``TuneRow``, ``TuneResult``), ``preset`` (tuned-<algo>-<env>), ``devices`` (CPU or GPU?), ``engines`` (SB3 or
SBX?). Not here: hyperparameter search for reward (``core.sweep``). docs/throughput.md."""
