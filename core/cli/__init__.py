"""The ``rlpanel`` command: ``main`` builds the parser from an explicit list of command modules,
one module per command (``train``, ``runs``, ``estimate``, ...), sharing ``common``.
See ARCHITECTURE.md, "Where do I add ...".
"""
