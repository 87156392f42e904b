"""One module per algorithm (its hyperparameters and its ``AlgoSpec``); the table of them is ``registry``.

To add an algorithm: write ``<name>.py`` like ``ppo.py``, add it to ``ALGORITHMS`` in ``registry.py`` and give
``RunConfig`` its section field (ARCHITECTURE.md, "Where do I add ...").
"""
