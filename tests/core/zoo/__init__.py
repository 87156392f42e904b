"""Tests of core.zoo: rl_zoo3 import and export."""
