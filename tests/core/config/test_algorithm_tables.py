"""Every table that lists the algorithms is complete against ``ALGORITHMS``: a new algorithm is its module plus its
entry there, and this test names whatever else it still needs (the schema's section field and ``AlgoParams``, which
pydantic and mypy need written out; its network family; the zoo's name)."""

from __future__ import annotations

from typing import get_args

from core.config.algorithms.registry import ALGORITHMS
from core.config.algorithms.spec import Network
from core.config.schema import ALGO_HELP, AlgoParams, RunConfig
from core.estimate.families.registry import FAMILIES
from core.zoo.translate import ZOO_ALGOS


def test_every_algorithm_has_its_section_field_in_the_run_config():
    missing = [f"{name}: RunConfig.{spec.section}: {spec.params.__name__}" for name, spec in ALGORITHMS.items()
               if RunConfig.model_fields.get(spec.section) is None
               or RunConfig.model_fields[spec.section].annotation is not spec.params]
    assert not missing, f"add the section field to RunConfig (core/config/schema.py): {missing}"


def test_the_params_union_holds_every_section_and_nothing_else():
    assert set(get_args(AlgoParams)) == {spec.params for spec in ALGORITHMS.values()}


def test_every_algorithm_can_be_chosen_and_is_named_in_the_help():
    choices = get_args(RunConfig.model_fields["algo"].annotation)
    for name in ALGORITHMS:
        assert name in choices
        assert name in ALGO_HELP.replace(",", " ").replace(";", " ").split()
    assert RunConfig.model_fields["algo"].description == ALGO_HELP


def test_every_algorithm_has_its_network_family_and_every_family_is_a_network_name():
    assert {spec.network for spec in ALGORITHMS.values()} <= set(FAMILIES)
    assert set(get_args(Network)) == set(FAMILIES)


def test_every_algorithm_has_one_zoo_name_and_it_leads_back_to_it():
    assert len(ZOO_ALGOS) == len(ALGORITHMS)  # two algorithms with one zoo name would hide one
    for name, spec in ALGORITHMS.items():
        assert ZOO_ALGOS[spec.zoo_name] == name
    assert ZOO_ALGOS["ppo_lstm"] == "RecurrentPPO" and ZOO_ALGOS["ppo_mask"] == "MaskablePPO"  # rl_zoo3's own spellings
