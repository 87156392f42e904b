"""The Queue tab: ``panel`` = ``plan_editor`` (build a plan from the Configure state) + ``status_view`` (the
running queue as its runner sees it); ``jobs`` turns a config into a plan job and back."""
