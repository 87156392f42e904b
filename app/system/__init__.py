"""The System tab: what ``rlpanel doctor`` reports."""
