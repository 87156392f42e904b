"""One module per algorithm (its hyperparameters and its ``AlgoSpec``); the table of them is ``registry``.

``spec`` (AlgoSpec), ``off_policy`` (OffPolicyParams, ReplayParams, ActionNoiseParams) and ``on_policy``
(RolloutParams, MinibatchParams) hold the shared sections; ``contrib``: which sb3-contrib algorithms are installed;
``baselines``: the baselines' names alone.

To add an algorithm: write ``<name>.py`` like ``ppo.py``, add it to ``ALGORITHMS`` in ``registry.py`` and give
``RunConfig`` its section field (ARCHITECTURE.md, "Where do I add ...")."""
