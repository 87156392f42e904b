"""The shipped field index (core/config/field_index.json) says what the live schema says: the window's first frame
builds its forms from it, so a schema change without ``python -m core.config.field_index --write`` fails here."""

from __future__ import annotations

from core.config import field_index as fi
from core.config import field_scan
from core.config.algorithms.registry import ALGORITHMS, ALGOS
from core.config.schema import RunConfig


def test_the_shipped_index_is_the_live_schemas_else_the_command_that_writes_it_is_named():
    live = field_scan.index_text()
    shipped = fi.INDEX_FILE.read_text(encoding="utf-8")
    assert shipped == live, f"core/config/field_index.json is stale: run {fi.WRITE_COMMAND} and commit the file"
    index = fi.read_index(shipped)
    assert index.algo_names() == ALGOS and [a.section for a in index.algorithms] == [s.section for s in ALGORITHMS.values()]
    # the defaults are what the schema builds (env: the picker's fields), every value's path is one the schema has
    built = RunConfig().model_dump(mode="json", by_alias=False)  # as the forms always had them: by field name
    assert {k: v for k, v in index.defaults.items() if k != "env"} == {k: v for k, v in built.items() if k != "env"}
    assert all(built["env"][k] == v for k, v in index.defaults["env"].items())
    policy = index.section("policy.class")  # an alias: the path a config file uses
    assert policy.name == "policy_class" and policy.kind.editor == "text" and "Path: policy.class" in policy.tip


def test_a_stale_index_is_told_apart_and_written_anew(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "field_index.json"
    stale.write_text(fi.INDEX_FILE.read_text(encoding="utf-8").replace('"Total timesteps"', '"Timesteps"', 1))
    monkeypatch.setattr(field_scan, "INDEX_FILE", stale)
    assert field_scan.main([]) == 1 and fi.WRITE_COMMAND in capsys.readouterr().err
    assert field_scan.main(["--write"]) == 0 and field_scan.main([]) == 0
    assert fi.read_index(stale.read_text()).section("budget.total_timesteps").title == "Total timesteps"
