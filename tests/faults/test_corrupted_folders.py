"""Corrupted run folders, made by a seeded hand from a real trained run: every file of the folder
truncated, emptied, garbled, replaced by JSON of the wrong shape, removed or made a folder. The
other runs stay listed; the damaged one is listed (as broken with the reason when it cannot be
read); ``runs ID``, ``export`` and ``resume`` answer in a few lines; nothing prints a traceback."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from core.cli.main import main
from core.run.states import BROKEN
from tests.faults.conftest import SEED, TALLY
from tests.training_helpers import copy_run

CASES = 24
SHAPES = ["[1, 2]", '"text"', "null", "42", '{"state": ["x"], "step": "y", "model": "../../x"}', "{}"]


def damage(path: Path, rng: random.Random) -> str:
    how = rng.choice(["truncate", "empty", "garble", "shape", "remove", "folder", "binary"])
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: rng.randint(0, max(0, len(data) - 1))])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garble":
        raw = bytearray(data)
        for _ in range(rng.randint(1, 20)):
            if raw:
                raw[rng.randrange(len(raw))] = rng.randrange(256)
        path.write_bytes(bytes(raw))
    elif how == "shape":
        path.write_text(rng.choice(SHAPES) if path.suffix in (".json", ".jsonl") else "- 1\n- [2, 3]\n", encoding="utf-8")
    elif how == "remove":
        path.unlink()
    elif how == "folder":
        path.unlink()
        path.mkdir()
    else:
        path.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randint(1, 4096))))
    return how


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except Exception as exc:  # noqa: BLE001
        TALLY["tracebacks"] += 1
        raise AssertionError(f"traceback on {argv}: {type(exc).__name__}: {exc}") from exc
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert len(err.strip().splitlines()) <= 7, err[:800]
    return code, out, err


@pytest.mark.parametrize("case", range(CASES))
def test_a_seeded_corruption_never_hides_or_breaks_the_others(trained_run, runs_dir, capsys, case):
    rng = random.Random(SEED * 1000 + case)
    good = copy_run(trained_run, runs_dir / "a")
    bad_root = runs_dir / "a"
    bad = bad_root / (trained_run.name + "-bad")
    shutil.copytree(trained_run, bad)
    files = sorted(p for p in bad.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl", ".yaml", ".zip", ".pkl", ".csv"))
    done = [f"{p.relative_to(bad)}:{damage(p, rng)}" for p in rng.sample(files, k=rng.randint(1, 4))]
    TALLY["corrupted folders tried"] += 1

    code, out, _ = run_cli(capsys, "runs", "--runs-dir", str(bad_root), "--json")
    listed = {r["id"]: r for r in json.loads(out)}
    assert code == 0 and good.name in listed, done
    assert listed[good.name]["state"] == "finished"
    assert bad.name in listed, f"the damaged run is listed ({done})"
    TALLY["corrupted folders listed"] += 1
    if listed[bad.name]["state"] == BROKEN:
        TALLY["corrupted folders broken"] += 1
        assert listed[bad.name]["broken"], "a broken run says why"
    run_cli(capsys, "runs", "--runs-dir", str(bad_root))
    run_cli(capsys, "runs", bad.name, "--runs-dir", str(bad_root))
    code, out, _ = run_cli(capsys, "export", "--all", "--format", "csv", "--runs-dir", str(bad_root))
    assert code == 0 and good.name in out
    code, _, err = run_cli(capsys, "resume", bad.name, "--timesteps", "64", "--runs-dir", str(bad_root), "--detach")
    assert code == 0 or err.strip(), "a refused resume says why"
