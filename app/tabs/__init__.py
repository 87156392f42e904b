"""The window's tabs as the window sees them: what it needs of each (``Panel``) and the builders of those built
when first shown (their modules load then, not before the first frame)."""
