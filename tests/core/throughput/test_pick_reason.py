"""The tune's table says where each probe's time went, and its pick explains itself with the user's config's split."""

from __future__ import annotations

from core.throughput.table import COLUMNS, TuneResult, TuneRow, cells, format_row, pick_reason, split_pcts


def _row(n_envs: int, speed: float, collect_s: float, train_s: float, device: str = "cpu") -> TuneRow:
    return TuneRow({"runtime.device": device, "runtime.n_envs": n_envs}, True, speed, None, None, [], "",
                   *split_pcts(collect_s, train_s))


def test_each_probe_shows_its_collect_and_train_shares():
    row = _row(1, 500.0, 4.0, 1.0)
    assert (row.collect_pct, row.train_pct) == (80.0, 20.0)
    assert cells(row)[COLUMNS.index("collect/train %")] == "80/20" and " 80/20 " in format_row(1, row)
    assert split_pcts(None, 1.0) == (None, None) and split_pcts(0.0, 0.0) == (None, None)
    assert row.to_json()["collect_pct"] == 80.0


def test_the_pick_explains_itself_with_where_the_users_config_spent_its_time():
    collecting = TuneResult([_row(1, 500.0, 4.0, 1.0), _row(8, 1500.0, 1.0, 1.0)], pick=1, baseline=0)
    assert pick_reason(collecting) == "collecting took 80 % of your config's time: more envs helped (n_envs 1 -> 8)"
    training = TuneResult([_row(4, 500.0, 1.0, 3.0), _row(4, 900.0, 1.0, 1.0, device="cuda:0")], pick=1, baseline=0)
    assert pick_reason(training) == "training took 75 % of your config's time: device cpu -> cuda:0 helped"
    same = TuneResult([_row(1, 500.0, 1.0, 3.0)], pick=0, baseline=0)
    assert pick_reason(same) == "your config is the fastest here; training takes 75 % of its time"
    assert pick_reason(TuneResult([TuneRow({}, True, 100.0)], pick=0, baseline=0)) == ""  # a probe without a split
