"""Measure a policy network instead of counting it by formula: built on torch's ``meta`` device.

A network the schema does not describe (``policy.features_extractor``, ``policy.class``: the
user's own, issue 30) cannot be counted by ``core.estimate.families``. Here the real SB3 policy is built
for the env's spaces on the ``meta`` device (shapes without memory: nothing is allocated, even for
a network far larger than this machine), its parameters are counted exactly, and one forward and
backward pass of a training batch runs on meta tensors while ``saved_tensors_hooks`` adds up the
bytes of every tensor autograd saves for the backward pass (each storage once; parameters are
not activations). ``python -m core.worker.measure --config JSON`` prints the result as JSON: the
estimate runs it in a child process (``core.estimate.measured``), after the user trusted the code.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass
from typing import Any
from unittest import mock

import gymnasium as gym
import torch as th
from stable_baselines3.common.on_policy_algorithm import OnPolicyAlgorithm
from stable_baselines3.common.policies import BaseModel
from stable_baselines3.common.vec_env import VecEnv

from core.config.schema import RunConfig
from core.estimate.families.registry import train_batch

TARGETS = ("critic_target", "actor_target", "q_net_target", "qf_target")  # copies SB3 never steps


@dataclass(frozen=True)
class NetworkMeasure:
    """What the meta-device build and pass found; ``error`` says why the pass could not run (the counts stand)."""

    params: int             # every parameter of the policy (targets included)
    trainable: int          # those an optimizer steps (not the target networks)
    tensors: int            # parameter tensors of the trainable part
    saved_bytes: int        # what autograd saved for backward over one training batch
    widest_bytes: int       # the widest saved layer output (batch x features, needing a gradient): backward holds
                            # gradients of about this size in flight
    batch: int              # samples in that pass
    error: str = ""

    @property
    def activation_bytes(self) -> int:
        """The activation term: the saved tensors plus two in-flight gradients of the widest layer (as the formulas)."""
        return self.saved_bytes + 2 * self.widest_bytes

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def build_policy_meta(cfg: RunConfig, env: VecEnv) -> tuple[th.nn.Module, gym.Space[Any], gym.Space[Any]]:
    """The SB3 policy ``build_model`` would build for ``env``, on torch's meta device (no memory), with the
    observation and action spaces it sees (images transposed to channels first, as SB3 wraps the env)."""
    from core.worker.factory import build

    args = build(cfg, env)
    cls, kind, kwargs = args.algorithm, args.policy, args.kwargs
    # SB3 moves some parts to ``policy.device``, its first parameter's device or cpu while it has none yet: meta here
    with th.device("meta"), mock.patch.object(BaseModel, "device", property(lambda self: th.device("meta"))):
        algo = cls(kind, env, device="meta", verbose=0, _init_setup_model=False, **kwargs)  # type: ignore[call-arg]
        algo._setup_lr_schedule()
        extra = {"use_sde": algo.use_sde} if isinstance(algo, OnPolicyAlgorithm) else {}
        policy: th.nn.Module = algo.policy_class(algo.observation_space, algo.action_space, algo.lr_schedule,
                                                 **extra, **algo.policy_kwargs)
    return policy, algo.observation_space, algo.action_space


def meta_batch(space: gym.Space[Any], batch: int) -> Any:
    """A batch of ``space``'s values as meta tensors (zeros in shape and dtype only)."""
    if isinstance(space, gym.spaces.Dict):
        return {key: meta_batch(sub, batch) for key, sub in space.spaces.items()}
    if isinstance(space, gym.spaces.Discrete):
        return th.zeros((batch,), dtype=th.long, device="meta")
    if isinstance(space, gym.spaces.MultiDiscrete | gym.spaces.MultiBinary):
        return th.zeros((batch, *space.shape), dtype=th.float32, device="meta")
    dtype = th.uint8 if space.dtype == "uint8" else th.float32
    return th.zeros((batch, *(space.shape or ())), dtype=dtype, device="meta")


def training_loss(policy: Any, obs: Any, actions: th.Tensor) -> th.Tensor:
    """One training forward pass of ``policy``'s kind: actor-critic, actor and critic(s), or Q-network."""
    if hasattr(policy, "evaluate_actions"):  # PPO, A2C (and a custom ActorCriticPolicy)
        values, log_prob, entropy = policy.evaluate_actions(obs, actions)
        loss: th.Tensor = values.sum() + log_prob.sum()
        return loss + entropy.sum() if entropy is not None else loss
    if hasattr(policy, "actor") and hasattr(policy, "critic"):  # SAC, TD3, DDPG: the actor's loss, the larger graph
        actor = policy.actor
        pi = actor.action_log_prob(obs)[0] if hasattr(actor, "action_log_prob") else actor(obs)
        q_values: list[th.Tensor] = list(policy.critic(obs, pi))
        return th.stack([q.sum() for q in q_values]).sum()
    if hasattr(policy, "q_net"):  # DQN
        out: th.Tensor = policy.q_net(obs).sum()
        return out
    found = policy(obs)
    parts: list[th.Tensor] = [found] if isinstance(found, th.Tensor) else [t for t in found if isinstance(t, th.Tensor)]
    return th.stack([t.float().sum() for t in parts]).sum()


def measure_policy(policy: th.nn.Module, observation_space: gym.Space[Any], action_space: gym.Space[Any],
                   batch: int) -> NetworkMeasure:
    """Count ``policy``'s parameters and the bytes autograd saves over one training pass of ``batch`` samples."""
    named = list(policy.named_parameters())
    trainable = [p for name, p in named if not name.startswith(TARGETS)]
    params = {id(p) for _, p in named}
    saved: dict[int, int] = {}
    widest = [0]
    keep: list[th.Tensor] = []  # alive until counted, so no id is reused

    def pack(t: th.Tensor) -> th.Tensor:
        base = t._base if t._base is not None else t
        if id(t) not in params and id(base) not in params and id(base) not in saved:
            saved[id(base)] = base.numel() * base.element_size()
            keep.append(base)
            if base.requires_grad and base.dim() == 2:  # a layer's output, batch x features
                widest[0] = max(widest[0], saved[id(base)])
        return t

    counts = (sum(p.numel() for _, p in named), sum(p.numel() for p in trainable), len(trainable))
    validate = th.distributions.Distribution._validate_args
    th.distributions.Distribution.set_default_validate_args(False)  # validation reads values: meta tensors have none
    try:
        obs, actions = meta_batch(observation_space, batch), meta_batch(action_space, batch)
        with th.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = training_loss(policy, obs, actions)
        loss.backward()
    except Exception as exc:  # noqa: BLE001 (user code: the counts stand, the pass says why it could not run)
        first = (str(exc).strip().splitlines() or [""])[0][:200]
        return NetworkMeasure(*counts, 0, 0, batch, f"{type(exc).__name__}: {first}")
    finally:
        th.distributions.Distribution.set_default_validate_args(validate)
    return NetworkMeasure(*counts, sum(saved.values()), widest[0], batch)


def measure_config(cfg: RunConfig) -> NetworkMeasure:
    """Build ``cfg``'s env (one, in this process: user code) and policy on the meta device, and measure it."""
    from core.worker.factory import build_vec_env

    env, _ = build_vec_env(cfg, n_envs=1, force_dummy=True)
    try:
        policy, observation_space, action_space = build_policy_meta(cfg, env)
        return measure_policy(policy, observation_space, action_space, train_batch(cfg))
    finally:
        env.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.worker.measure", description="Measure a run's policy network.")
    parser.add_argument("--config", required=True, help="the run config as JSON")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.getcwd())
    th.set_num_threads(1)
    try:
        cfg = RunConfig.model_validate(json.loads(args.config))
        out = measure_config(cfg).to_json()
    except Exception as exc:  # noqa: BLE001 (user code: report anything it raises, in one line)
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        out = {"error_build": f"{type(exc).__name__}: {first}".rstrip(": ")}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
