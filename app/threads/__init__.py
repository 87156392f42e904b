"""The window's threads: work off the GUI thread (``background``: the one mechanism), garbage collected in
the GUI thread only (``main_thread_gc``)."""
