"""sb3-contrib's ARS, counted without torch (read from its source): one policy network (``with_bias``;
LinearPolicy: a bias-free linear map), no gradients and no optimizer; each update holds ``n_delta``
perturbations, ``2 x n_delta`` candidate weight vectors and a copy of the policy. It plays each
perturbation's episodes and keeps only their returns: no buffer, no sampled batch."""

from __future__ import annotations

from core.config.algorithms.ars import ARSParams
from core.config.schema import RunConfig, section_as
from core.config.spaces import EnvSpaces
from core.estimate.families.family import Family, observation_bytes, policy_inputs
from core.estimate.networks import FLOAT, ModelShape, Network


class Ars(Family):
    network = "ars"
    has_buffer = False

    def shape(self, cfg: RunConfig, spaces: EnvSpaces) -> ModelShape:
        """The policy network alone (no optimizer: it moves by random search)."""
        p, inputs = section_as(cfg, ARSParams), policy_inputs(cfg, spaces)
        linear = bool(p.linear_policy)
        bias = p.with_bias if p.with_bias is not None else not linear
        sizes = ((inputs.features, spaces.action_logits) if linear
                 else (inputs.features, *inputs.arch.get("qf", []), spaces.action_logits))
        pairs = list(zip(sizes[:-1], sizes[1:], strict=True))
        params = sum(a * b + (b if bias else 0) for a, b in pairs)
        return ModelShape((Network("policy", params, len(pairs) * (2 if bias else 1), False, (sizes,)),), ())

    def activation_bytes(self, cfg: RunConfig, spaces: EnvSpaces, shape: ModelShape) -> tuple[int, str]:
        """No gradients: weights, n_delta perturbations, 2 x n_delta candidates and a policy copy."""
        n_delta = section_as(cfg, ARSParams).n_delta
        return FLOAT * shape.param_count * (3 * n_delta + 2), f"{n_delta} perturbations of the policy's weights"

    def update_knob(self, cfg: RunConfig) -> tuple[str, int] | None:
        return "n_delta", section_as(cfg, ARSParams).n_delta

    def batch_copy_bytes(self, cfg: RunConfig, spaces: EnvSpaces) -> int:
        """No sampled batch: each step's observations only."""
        return cfg.runtime.n_envs * observation_bytes(spaces)
