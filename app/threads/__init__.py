"""The window's threads: work off the GUI thread (background), garbage collected in it (gc)."""
