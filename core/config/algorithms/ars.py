"""ARS: Augmented Random Search (sb3-contrib; gradient-free, Box or Discrete actions). Each update plays
``n_delta`` random perturbations of the policy's weights both ways and steps along the best ones.
Defaults are sb3-contrib 2.x's own."""

from __future__ import annotations

from typing import Any

from core.config.algorithms.spec import AlgoSpec, LearnCycle
from core.config.errors import FieldIssue
from core.config.fields import Schedule, Section, hp, learning_rate, schedule_hp


class ARSParams(Section):
    """Augmented Random Search (sb3-contrib; no gradients, no buffer)."""

    n_delta: int = hp(8, "Perturbations", "Random weight perturbations tried per update (each played both ways).", "",
                      ge=1, le=100_000)
    n_top: int | None = hp(None, "Best perturbations kept", "Perturbations the update uses (empty: all n_delta).", "",
                           ge=1, le=100_000)
    learning_rate: Schedule = learning_rate(0.02)
    delta_std: Schedule = schedule_hp(0.05, "Perturbation std", "Standard deviation of the weight perturbations.", 0, 10)
    zero_policy: bool = hp(True, "Start from zero", "Start from all-zero weights instead of a random initialisation.")
    alive_bonus_offset: float = hp(0.0, "Alive bonus offset", "Added to every step's reward while searching (removes a "
                                                              "constant alive bonus: use minus the bonus).", "",
                                   ge=-1e6, le=1e6)
    n_eval_episodes: int = hp(1, "Episodes per candidate", "Episodes each perturbed policy plays.", "episodes", ge=1, le=10_000)
    linear_policy: bool = hp(False, "Linear policy", "ARS's LinearPolicy: one linear map from observations to actions "
                                                     "(net_arch and activation unused).", sb3="none")
    with_bias: bool | None = hp(None, "Bias", "The layers learn an additive bias (policy_kwargs; empty: SB3's, yes for "
                                              "the MLP, no for the linear policy).", sb3="policy")


def top_rule(p: Any, runtime: Any, budget: Any) -> list[FieldIssue]:
    if p.n_top is not None and p.n_top > p.n_delta:
        return [FieldIssue("ars.n_top", f"n_top {p.n_top} is more than the {p.n_delta} perturbations (n_delta): "
                                        f"use at most {p.n_delta}, or leave it empty for all")]
    return []


def ars_cycle(p: Any, n_envs: int) -> LearnCycle:
    """ARS.learn: each update plays every candidate (n_delta perturbations, both ways) for n_eval_episodes whole
    episodes, so the steps of one are the episodes' lengths: not known ahead."""
    plays = 2 * p.n_delta * p.n_eval_episodes
    return LearnCycle(None, f"each update plays {plays:,} whole episode{'s' if plays != 1 else ''}: "
                            f"2 x {p.n_delta:,} perturbations x {p.n_eval_episodes:,}")


ARS = AlgoSpec(
    name="ARS", params=ARSParams, sb3_class="sb3_contrib:ARS", on_policy=True, network="ars",
    action_kinds=("box", "discrete"), action_need="a Box or Discrete action space", net_keys=frozenset(),
    default_net=(64, 64), default_activation="relu", train_batch=lambda p, n_envs: n_envs, cycle=ars_cycle, rules=(top_rule,),
    contrib=True, policy_kinds=("MlpPolicy",), policy_switch=("LinearPolicy", "linear_policy"))
