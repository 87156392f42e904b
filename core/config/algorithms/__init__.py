"""One module per algorithm (its hyperparameters and its ``AlgoSpec``); the table of them is ``registry``.

To add an algorithm: write ``<name>.py`` like ``ppo.py``, add it to ``ALGORITHMS`` in ``registry.py`` and give
``RunConfig`` its section field (ARCHITECTURE.md, "Where do I add ...").
"""

# Baselines play a fixed policy for budget.episodes episodes through the same worker and run
# folder, so they sit in tables and plots like any run: random actions, or the zero action. (Here, not in the registry:
# readers of a run folder ask without loading the algorithms' tables, and pydantic with them.)
BASELINES = ("random", "constant")
