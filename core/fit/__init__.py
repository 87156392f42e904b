"""Will this run fit? ``estimate`` (the entry) = ``compute`` (the terms, from ``families``, ``buffers``
and a GPU profile from ``gpus``) + ``suggest`` (the fix), giving a ``result.FitEstimate``.
See ARCHITECTURE.md, "Estimate before launch".
"""
