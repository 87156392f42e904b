"""The seeds of a group, read from what a user types: the forms accepted and the errors that name the field."""

from __future__ import annotations

import pytest

from core.config.errors import ConfigError
from core.config.seeds import MAX_SEEDS, is_count, parse_seeds, seeds_text, with_seed
from core.config.validate import validate_config


@pytest.mark.parametrize(("value", "seeds"), [
    ("5", [0, 1, 2, 3, 4]),
    (5, [0, 1, 2, 3, 4]),
    ("2", [0, 1]),
    ("3,7,11", [3, 7, 11]),
    (" 11, 3 ,7 ", [11, 3, 7]),  # the order given is the order launched
    ("3,7,", [3, 7]),
    ([3, 7, 11], [3, 7, 11]),
    ([7], [7]),  # one explicit seed: a group of one
    ("0,1", [0, 1]),
    (str(MAX_SEEDS), list(range(MAX_SEEDS))),
])
def test_a_count_or_a_list_gives_the_seeds(value, seeds):
    assert parse_seeds(value) == seeds


@pytest.mark.parametrize("value", [None, "", "  ", "1", 1])
def test_one_run_is_no_group(value):
    assert parse_seeds(value) is None


@pytest.mark.parametrize(("value", "said"), [
    ("0", "0 runs cannot be launched"),
    (0, "0 runs cannot be launched"),
    ("-2", "-2 runs cannot be launched"),
    ("3,7,3", "seed 3 is given twice"),
    ([1, 1], "seed 1 is given twice"),
    (str(MAX_SEEDS + 1), f"more than {MAX_SEEDS} in one group"),
    (list(range(MAX_SEEDS + 1)), f"more than {MAX_SEEDS} in one group"),
    ("3,-7", "seed -7 is out of range"),
    ("4294967296", "more than 100"),
    ("1,4294967296", "seed 4294967296 is out of range"),
    ("five", "'five' is not a list of seeds"),
    ("1.5", "'1.5' is not a list of seeds"),
    ("3,,7", "is not a list of seeds"),
    ("3;7", "is not a list of seeds"),
    (True, "True is not a number of runs"),
    ([1, "a"], "holds something other than whole numbers"),
    ([], "an empty list launches nothing"),
])
def test_bad_seeds_are_refused_naming_the_field_and_the_fix(value, said):
    with pytest.raises(ConfigError) as refused:
        parse_seeds(value, "--seeds")
    text = str(refused.value)
    assert text.startswith("--seeds: ") and said in text, text
    assert "\n" not in text
    if "twice" not in said and "range" not in said and "more than" not in said:
        assert "(5: seeds 0-4)" in text and "(3,7,11)" in text  # the forms that work


def test_a_count_is_told_from_a_list():
    assert is_count(5) and is_count("5") and is_count(" 12 ")
    assert not is_count("3,7") and not is_count([3]) and not is_count(True) and not is_count("x")


def test_seeds_are_said_shortly():
    assert seeds_text([0, 1, 2, 3, 4]) == "seeds 0-4"
    assert seeds_text([3, 7, 11]) == "seeds 3, 7, 11"
    assert seeds_text([0, 1]) == "seeds 0, 1"
    assert seeds_text([7]) == "seed 7"


def test_with_seed_changes_the_seed_only():
    config = validate_config({"algo": "PPO", "name": "night", "runtime": {"n_envs": 2}}).config
    seeded = with_seed(config, 7)
    assert seeded.runtime.seed == 7 and config.runtime.seed is None
    assert seeded.model_dump(exclude={"runtime"}) == config.model_dump(exclude={"runtime"})
    assert seeded.runtime.model_dump(exclude={"seed"}) == config.runtime.model_dump(exclude={"seed"})
    assert validate_config(seeded.model_dump(mode="json")).config == seeded  # what the run folder's config reads back
