"""A run's host memory: each process counted by its own memory (PSS here), real processes that share
pages and hold their own; Windows' private bytes and the fallbacks through an injected psutil process."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import namedtuple

import psutil
import pytest

from core.telemetry.host import HostMemory, HostMemoryReader, HostSampler, own_memory, process_own_memory
from core.util.procs import process_tree

MIB = 2**20
SHARED_MIB, PRIVATE_MIB, CHILDREN = 96, 32, 3

# A parent that fills SHARED_MIB, then forks CHILDREN that each fill PRIVATE_MIB of their own: the shared
# pages are resident in every process of the tree but held once. Each child says when its pages are written.
SHARING_TREE = f"""
import json, os, sys, time
shared = b"\\x01" * ({SHARED_MIB} << 20)
ready_r, ready_w = os.pipe()
children = []
for _ in range({CHILDREN}):
    pid = os.fork()
    if pid == 0:
        private = b"\\x02" * ({PRIVATE_MIB} << 20)
        os.write(ready_w, b"x")
        time.sleep(600)
        os._exit(0)
    children.append(pid)
got = b""
while len(got) < {CHILDREN}:
    got += os.read(ready_r, {CHILDREN})
print(json.dumps(children), flush=True)
time.sleep(600)
"""


@pytest.fixture
def sharing_tree():
    """(parent pid, child pids) of a running SHARING_TREE; ended by the pids it started."""
    proc = subprocess.Popen([sys.executable, "-c", SHARING_TREE], stdout=subprocess.PIPE, text=True)
    children: list[int] = []
    try:
        children = json.loads(proc.stdout.readline())
        yield proc.pid, children
    finally:
        for pid in children:
            try:
                psutil.Process(pid).send_signal(signal.SIGKILL)
            except psutil.NoSuchProcess:
                pass
        proc.kill()
        proc.wait(30)


linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="os.fork, and PSS is Linux's")


@linux_only
def test_a_tree_that_shares_pages_holds_them_once_and_each_child_its_own(sharing_tree):
    parent, children = sharing_tree
    procs = process_tree(parent)
    assert sorted(p.pid for p in procs) == sorted([parent, *children])
    rss_sum = sum(p.memory_info().rss for p in procs)
    memory = own_memory(procs)
    assert memory is not None and memory.measure == "pss"
    # the RSS sum counts the shared block in all four processes, PSS once
    assert rss_sum - memory.memory_bytes > (CHILDREN - 0.5) * SHARED_MIB * MIB, (rss_sum / MIB, memory.memory_bytes / MIB)
    assert memory.memory_bytes > (SHARED_MIB + CHILDREN * PRIVATE_MIB) * MIB
    for pid in children:  # its own pages plus a quarter of the shared block (and of python's pages)
        own = process_own_memory(psutil.Process(pid))
        assert own.measure == "pss"
        expected = PRIVATE_MIB + SHARED_MIB / (CHILDREN + 1)
        assert expected * MIB < own.memory_bytes < (expected + 16) * MIB, own.memory_bytes / MIB
        assert psutil.Process(pid).memory_info().rss > (PRIVATE_MIB + SHARED_MIB) * MIB


@linux_only
def test_the_sampler_reads_own_memory_beside_the_rss_sum_paced_by_its_reader(sharing_tree):
    parent, children = sharing_tree
    clock = iter([0.0, 0.02, 1.0, 1.02]).__next__  # each read took 20 ms of CPU: the next in 2 s, not 1
    sampler = HostSampler(HostMemoryReader(cpu_clock=clock))
    first = sampler.sample({parent, *children})
    assert first.host_memory_measure == "pss"
    assert first.host_memory_bytes < first.process_rss_bytes - 2 * SHARED_MIB * MIB
    assert sampler.memory.period_s == pytest.approx(2.0)
    assert sampler.sample({parent, *children}).host_memory_bytes is None  # not due yet: RSS only
    assert sampler.sample({parent, *children}).process_rss_bytes == pytest.approx(first.process_rss_bytes, rel=0.1)


def test_the_reader_spaces_its_reads_by_their_cost():
    cpu = iter([0.0, 0.001, 5.0, 5.05]).__next__
    reader = HostMemoryReader(min_period_s=1.0, cpu_share=0.01, cpu_clock=cpu)
    assert reader.due(100.0)
    reader.read([], 100.0)  # 1 ms of CPU: the minimum period wins
    assert reader.period_s == 1.0 and not reader.due(100.9) and reader.due(101.0)
    reader.read([], 101.0)  # 50 ms: at most 1 % of a core means 5 s until the next
    assert reader.period_s == pytest.approx(5.0) and not reader.due(105.9) and reader.due(106.0)


def test_a_rising_rss_sum_brings_the_next_read_forward_once_a_second_at_most():
    cpu = iter([0.0, 0.05, 1.0, 1.05]).__next__
    reader = HostMemoryReader(min_period_s=1.0, cpu_share=0.01, cpu_clock=cpu)
    reader.read([], 100.0, rss_bytes=1000 * MIB)  # the next read by cost: in 5 s
    assert not reader.due(102.0, rss_bytes=1015 * MIB)  # 1.5 %: noise
    assert not reader.due(100.5, rss_bytes=2000 * MIB)  # a peak, but a read a second at most
    assert reader.due(101.0, rss_bytes=1030 * MIB)
    reader.read([], 101.0, rss_bytes=1030 * MIB)
    assert not reader.due(102.0, rss_bytes=1040 * MIB)  # measured against the highest read



def test_a_steady_rss_sum_spaces_the_reads_to_the_steady_period():
    # a lone worker's read costs ~10 ms (torch's page tables): 1 % of a core would read it every second, for the
    # figure it read last while the RSS sum holds still
    cpu = iter([0.0, 0.001, 1.0, 1.001, 2.0, 2.001]).__next__
    reader = HostMemoryReader(min_period_s=1.0, cpu_share=0.01, cpu_clock=cpu, steady_period_s=10.0)
    reader.read([], 100.0, rss_bytes=1000 * MIB)
    assert not reader.due(101.0, rss_bytes=1005 * MIB)  # due by its cost, but within 1 %: waits
    assert not reader.due(109.9, rss_bytes=995 * MIB)
    assert reader.due(110.0, rss_bytes=1000 * MIB)  # the steady period is up
    assert reader.due(101.0, rss_bytes=1015 * MIB)  # moved 1.5 %: the cost's pace again
    assert reader.due(101.0, rss_bytes=980 * MIB)  # down too
    assert reader.due(101.0)  # no RSS sum to compare: the cost's pace
    reader.read([], 101.0, rss_bytes=1015 * MIB)  # measured against the last read's sum
    assert not reader.due(102.0, rss_bytes=1020 * MIB) and reader.due(111.0, rss_bytes=1020 * MIB)
    reader.read([], 111.0)  # a read without a sum: the next one has nothing to hold still against
    assert reader.due(112.0, rss_bytes=1020 * MIB)

# --- through an injected psutil process: Windows, macOS, refusals ---------------------------------------

WinMem = namedtuple("WinMem", "rss vms num_page_faults peak_wset wset private")
LinuxMem = namedtuple("LinuxMem", "rss vms shared text lib data dirty")
LinuxFull = namedtuple("LinuxFull", "rss vms shared text lib data dirty uss pss swap")
MacFull = namedtuple("MacFull", "rss vms pfaults pageins uss")


class FakeProcess:
    """What own_memory asks of a psutil process; ``full`` is memory_full_info's answer or the error it raises."""

    def __init__(self, basic, full=None):
        self.basic, self.full = basic, full

    def memory_info(self):
        if isinstance(self.basic, Exception):
            raise self.basic
        return self.basic

    def memory_full_info(self):
        if isinstance(self.full, Exception) or self.full is None:
            raise self.full or AssertionError("Windows' private bytes need no memory_full_info (a working set walk)")
        return self.full


def test_windows_counts_private_bytes_without_walking_the_working_set():
    worker = FakeProcess(WinMem(900 * MIB, 2000 * MIB, 0, 0, 900 * MIB, 700 * MIB))
    env = FakeProcess(WinMem(60 * MIB, 200 * MIB, 0, 0, 60 * MIB, 25 * MIB))
    assert own_memory([worker, env, env], platform="win32") == HostMemory(750 * MIB, "private")


def test_windows_without_private_bytes_falls_back_to_rss_and_says_so():
    basic = namedtuple("Old", "rss vms")(80 * MIB, 100 * MIB)
    with_private = FakeProcess(WinMem(60 * MIB, 200 * MIB, 0, 0, 60 * MIB, 25 * MIB))
    assert own_memory([with_private, FakeProcess(basic)], platform="win32") == HostMemory(105 * MIB, "rss")


def test_linux_uses_pss_and_a_refused_process_its_rss_labelling_the_tree_by_the_weaker():
    mine = FakeProcess(LinuxMem(500 * MIB, 0, 0, 0, 0, 0, 0), LinuxFull(500 * MIB, 0, 0, 0, 0, 0, 0, 300 * MIB, 350 * MIB, 0))
    assert own_memory([mine, mine], platform="linux") == HostMemory(700 * MIB, "pss")
    refused = FakeProcess(LinuxMem(200 * MIB, 0, 0, 0, 0, 0, 0), psutil.AccessDenied(1))
    assert own_memory([mine, refused], platform="linux") == HostMemory(550 * MIB, "rss")


def test_macos_has_no_pss_and_counts_uss():
    proc = FakeProcess(None, MacFull(400 * MIB, 0, 0, 0, 120 * MIB))
    assert own_memory([proc], platform="darwin") == HostMemory(120 * MIB, "uss")


def test_a_process_gone_between_listing_and_reading_is_left_out():
    gone = FakeProcess(psutil.NoSuchProcess(1), psutil.NoSuchProcess(1))
    env = FakeProcess(WinMem(60 * MIB, 200 * MIB, 0, 0, 60 * MIB, 25 * MIB))
    assert own_memory([gone, env], platform="win32") == HostMemory(25 * MIB, "private")
    assert own_memory([gone], platform="linux") is None
