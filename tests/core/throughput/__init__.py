"""Tests of core.throughput: the throughput tune."""
