"""The bottom layer: files, processes, text and paths, used by every other part of ``core``.

Nothing here knows about runs, configs or GPUs (see ARCHITECTURE.md, "Layers").
"""
