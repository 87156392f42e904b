"""A run that does not fit a card of this machine on Windows crawls rather than fails (sysmem fallback): the estimate
says so (``sysmem_fallback``, ``over_capacity`` in --json, present only then), ``rlpanel estimate``'s text too;
elsewhere, on a target card that is not this machine's, or when it fits, nothing is said."""

from __future__ import annotations

import pytest

from core.cli.estimate import format_estimate
from core.config.spaces import probe_spaces
from core.estimate.estimate import estimate
from core.estimate.gpus import get_profile
from core.estimate.result import CRAWL_TEXT, NO_FIT
from tests.core.estimate.test_device import CUDA_BUILD, HOST, detected_card
from tests.core.estimate.test_estimate import preset_config

TOO_BIG = {"policy__net_arch": [16384, 16384, 16384]}  # ~6 GiB of Adam over 0.8 G parameters: past 8 GB


def too_big():
    return preset_config("beast", "PPO", runtime__device="auto", **TOO_BIG)


def estimate_here(cfg, platform, gpu=None, card=None):
    card = card or detected_card()
    return estimate(cfg, probe_spaces(cfg.env), gpu or card, HOST, torch=CUDA_BUILD, here=[card], platform=platform)


def test_a_run_past_this_windows_machine_s_card_is_said_to_crawl_in_the_estimate_its_json_and_its_text():
    result = estimate_here(too_big(), "win32")
    assert result.verdict == NO_FIT and result.sysmem_fallback
    data = result.to_json()
    assert data["sysmem_fallback"] is True and data["over_capacity"] == CRAWL_TEXT
    assert CRAWL_TEXT.startswith("on Windows the driver moves the rest to system RAM and the run slows several times "
                                 "rather than failing (sysmem fallback; to have it fail at once instead: NVIDIA Control "
                                 "Panel > Manage 3D settings > \"CUDA - Sysmem Fallback Policy: Prefer No Sysmem Fallback\"")
    lines = format_estimate(result, "PPO", "CartPole-v1").splitlines()
    gpu_line = next(i for i, line in enumerate(lines) if line.startswith("GPU:  "))  # the verdict line
    assert lines[gpu_line].endswith("-> does not fit")
    assert lines[gpu_line + 1] == f"does not fit this card: {CRAWL_TEXT}"


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_elsewhere_past_the_card_is_an_out_of_memory_error_and_nothing_says_crawl(platform):
    result = estimate_here(too_big(), platform)
    assert result.verdict == NO_FIT and not result.sysmem_fallback
    assert "over_capacity" not in result.to_json() and "sysmem_fallback" not in result.to_json()
    assert "system RAM" not in format_estimate(result, "PPO", "CartPole-v1")


def test_a_run_that_fits_says_nothing_of_it_on_windows():
    cfg = preset_config("fast", "PPO", runtime__device="auto")
    result = estimate_here(cfg, "win32")
    assert result.verdict != NO_FIT and not result.sysmem_fallback and "over_capacity" not in result.to_json()


def test_a_target_card_elsewhere_is_not_judged_by_this_machine_s_windows_but_this_machine_s_own_card_is():
    import dataclasses

    small_here = dataclasses.replace(detected_card(), name="this machine: 4 GB", memory_bytes=4 << 30)
    target = get_profile("H100 80GB")  # fits there; the OS of the machine it runs on is not this one's
    result = estimate_here(too_big(), "win32", gpu=target, card=small_here)
    assert result.verdict != NO_FIT and not result.sysmem_fallback
    here = result.this_machine
    assert here is not None and here.verdict == NO_FIT and here.sysmem_fallback
    assert result.to_json()["this_machine"]["sysmem_fallback"] is True
    assert f"does not fit this card: {CRAWL_TEXT}" in format_estimate(result, "PPO", "CartPole-v1")
