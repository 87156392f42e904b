"""The Queue tab: ``panel`` = ``plan_editor`` (build a plan from the Configure state) +
``status_view`` (the running queue); ``jobs`` turns a config into a plan job and back."""
