"""The time split's pure parts: summing cycle records, the line, and the advice's rules (``core.run.time_split``)."""

from __future__ import annotations

from core.run import records
from core.run.time_split import TimeSplit, advice, split_line, split_of


def _split(collect: float, train: float, other: float, gpu_collect: float | None = None,
           gpu_train: float | None = None) -> TimeSplit:
    split = TimeSplit()
    split.add_record(records.cycle(100, 1, collect, train, other, gpu_collect, gpu_train))
    return split


def test_cycle_records_sum_with_their_gpu_figures_weighted_by_their_seconds():
    recs = [records.cycle(64, 2, 3.0, 1.0, 0.0, 10.0, 90.0), records.cycle(128, 3, 1.0, 3.0, 0.0, 30.0, 50.0),
            records.event("a checkpoint"), {"kind": "progress", "step": 128, "t": 1.0, "fps": 1.0, "total": 128}]
    split = split_of(recs)
    assert split is not None and split.n == 5
    assert (split.collect_s, split.train_s, split.other_s) == (4.0, 4.0, 0.0)
    assert split.gpu_collect_pct == (10 * 3 + 30 * 1) / 4 and split.gpu_train_pct == (90 * 1 + 50 * 3) / 4
    assert split_of([records.event("nothing")]) is None
    back = TimeSplit.from_json(split.to_json())
    assert back is not None and back.n == 5 and round(back.gpu_train_pct or 0, 1) == 60.0
    assert TimeSplit.from_json({"collect_s": "many"}) is None


def test_the_line_says_the_shares_and_the_gpu_when_measured():
    assert split_line(_split(8.2, 1.6, 0.2)) == "collecting 82 % · training 16 % · other 2 %"
    assert split_line(_split(1, 1, 0, 5.0, 70.0)).endswith("(GPU busy: collecting 5 %, training 70 %)")
    assert split_line(None) == "" and split_line(TimeSplit()) == ""


def test_collecting_dominates_more_envs_and_says_the_rollout_grows():
    text = advice(_split(8, 1.5, 0.5), "cuda:0", "PPO")
    assert text.startswith("Collecting takes 80 %") and "the GPU waits" in text
    assert "runtime.n_envs" in text and "grow each rollout" in text and "learning changes" in text
    off = advice(_split(8, 1.5, 0.5), "cpu", "SAC")
    assert "train_freq" in off and "gradient_steps" in off and "the GPU" not in off


def test_training_dominates_on_the_cpu_names_the_gpu_and_fewer_epochs_as_a_change_to_learning():
    text = advice(_split(2, 7.5, 0.5), "cpu", "PPO")
    assert "Training takes 75 % of the time on the CPU" in text and "runtime.device cuda" in text
    assert "n_epochs" in text and "changes what is learned" in text
    assert "gradient_steps" in advice(_split(2, 7.5, 0.5), "cpu", "DQN")


def test_training_dominates_on_a_gpu_that_is_mostly_idle_suggests_the_cpu():
    idle = advice(_split(2, 7.5, 0.5, 3.0, 12.0), "cuda:0", "PPO")
    assert "busy only 12 %" in idle and "runtime.device cpu" in idle
    busy = advice(_split(2, 7.5, 0.5, 3.0, 95.0), "cuda:0", "PPO")
    assert "on the GPU" in busy and "changes what is learned" in busy


def test_checkpoints_and_evaluations_past_a_few_percent_say_less_often():
    text = advice(_split(5, 3, 2), "cpu", "PPO")
    assert text.startswith("Checkpoints, evaluations and logging take 20 %") and "budget.checkpoint_every" in text
    assert "budget.checkpoint_every" not in advice(_split(5, 4.8, 0.2), "cpu", "PPO")  # 2 %: not worth a word


def test_a_balanced_split_says_neither_alone_helps_much_and_nothing_measured_says_nothing():
    assert "share the time" in advice(_split(5, 4.8, 0.2), "cpu", "PPO")
    assert advice(None, "cpu", "PPO") == "" and advice(TimeSplit(), "cpu", "PPO") == ""
