"""Tests of core.tune: the throughput tune."""
