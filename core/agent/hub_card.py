"""The text files of a Hub model folder (``rlpanel hub``): the model card, ``results.json``, ``args.yml``.

Written as rl_zoo3's ``push_to_hub`` and ``huggingface_sb3`` write them, so the Hub shows the card and its
evaluation, and ``python -m rl_zoo3.load_from_hub`` finds every file it asks for: the card's YAML front matter
has ``library_name: stable-baselines3``, the four tags they use and a ``model-index`` whose one metric is
``mean_reward`` as ``"mean +/- std"`` (their text); ``results.json`` has their five keys. Plain data and text
(no torch, no huggingface_hub): the folder is written where the Hub's library is not installed.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import yaml

from core.config import sb3_args
from core.config.engines import SBX_ALGORITHMS
from core.config.schema import RunConfig
from core.run.evaluations import Evaluation
from core.zoo.export import zoo_algo_name

TAGS = ("deep-reinforcement-learning", "reinforcement-learning", "stable-baselines3")


def env_name(cfg: RunConfig) -> str:
    """The env as huggingface_sb3's ``EnvironmentName``: the gymnasium id with '/' as '-' (an entry point: its class)."""
    name = cfg.env.id or str(cfg.env.entry_point).rsplit(":", 1)[-1]
    return name.replace("/", "-")


def model_name(cfg: RunConfig) -> str:
    """``ppo-CartPole-v1``: huggingface_sb3's ``ModelName`` (the zoo's algorithm name, the env); the model's file is
    this name with ``.zip``, as rl_zoo3's ``load_from_hub`` downloads it."""
    return f"{zoo_algo_name(cfg.algo)}-{env_name(cfg)}"


def load_class(cfg: RunConfig) -> tuple[str, str]:
    """(module, class) the model loads with: ``stable_baselines3``/``sb3_contrib``, or ``sbx`` for an SBX run."""
    assert cfg.spec is not None
    dotted = SBX_ALGORITHMS[cfg.algo].cls if cfg.runtime.engine == "sbx" else cfg.spec.sb3_class
    module, cls = dotted.split(":")
    return module.split(".")[0], cls


def results(evaluation: Evaluation) -> dict[str, Any]:
    """``results.json`` as huggingface_sb3's ``_evaluate_agent`` writes it."""
    when = datetime.datetime.fromtimestamp(evaluation.t) if evaluation.t else datetime.datetime.now()
    return {"mean_reward": evaluation.mean_reward, "std_reward": evaluation.std_reward,
            "is_deterministic": evaluation.deterministic, "n_eval_episodes": evaluation.episodes,
            "eval_datetime": when.isoformat()}


def front_matter(cfg: RunConfig, evaluation: Evaluation) -> dict[str, Any]:
    """The card's metadata, as huggingface_sb3's ``_generate_metadata`` builds it (``sbx`` added as a tag for an SBX
    run: the Hub has no library of that name, and its model loads with sbx, not SB3)."""
    env = cfg.env.id or env_name(cfg)
    _, cls = load_class(cfg)
    tags = [env, *TAGS] + (["sbx"] if cfg.runtime.engine == "sbx" else [])
    return {"library_name": "stable-baselines3", "tags": tags, "model-index": [{
        "name": cls,
        "results": [{"task": {"type": "reinforcement-learning", "name": "reinforcement-learning"},
                     "dataset": {"name": env, "type": env},
                     "metrics": [{"type": "mean_reward", "value": f"{evaluation.mean_reward:.2f} +/- "
                                  f"{evaluation.std_reward:.2f}", "name": "mean_reward", "verified": False}]}]}]}


def zoo_args(cfg: RunConfig) -> str:
    """``args.yml``: the command-line arguments rl_zoo3 saves beside a model; its ``enjoy`` reads ``env_kwargs``."""
    args = {"algo": zoo_algo_name(cfg.algo), "env": cfg.env.id or env_name(cfg), "env_kwargs": dict(cfg.env.kwargs),
            "n_timesteps": cfg.budget.total_timesteps, "seed": cfg.runtime.seed}
    return yaml.safe_dump(args, sort_keys=True)


def hyperparameters(cfg: RunConfig) -> dict[str, Any]:
    """What the algorithm's constructor got ('auto' resolved), then the policy's settings (``policy_kwargs.*``)."""
    out = dict(sb3_args.algo_kwargs(cfg))
    out.update({f"policy_kwargs.{key}": value for key, value in sb3_args.policy_kwargs(cfg).items()})
    return out


def card(cfg: RunConfig, evaluation: Evaluation, files: list[str], run_id: str) -> str:
    """``README.md``: the front matter, then how it was trained, how it was evaluated and how to load it."""
    module, cls = load_class(cfg)
    env = cfg.env.id or str(cfg.env.entry_point)
    name = model_name(cfg)
    how = "deterministic" if evaluation.deterministic else "stochastic (sampled)"
    seed = "none (not seeded)" if cfg.runtime.seed is None else str(cfg.runtime.seed)
    rows = "\n".join(f"| `{key}` | `{_cell(value)}` |" for key, value in hyperparameters(cfg).items())
    norm = cfg.runtime.normalize
    lines = [
        "---", yaml.safe_dump(front_matter(cfg, evaluation), sort_keys=False).rstrip(), "---", "",
        f"# **{cls}** agent playing **{env}**", "",
        f"A **{cls}** agent trained on **{env}** with rlpanel (run `{run_id}`), using {_library(module)}.", "",
        "## Training", "",
        f"- algorithm: {cls} ({module}), engine {cfg.runtime.engine}",
        f"- environment: `{env}`" + (f" with `{json.dumps(dict(cfg.env.kwargs))}`" if cfg.env.kwargs else ""),
        f"- budget: {cfg.budget.total_timesteps:,} timesteps over {cfg.runtime.n_envs} env(s); "
        f"checkpoint at step {evaluation.checkpoint_step:,}"
        + (" (the best by the run's periodic evaluation)" if evaluation.checkpoint == "best" else ""),
        f"- seed: {seed}",
        "- VecNormalize: " + (f"observations {norm.obs}, rewards {norm.reward} (statistics in `vec_normalize.pkl`)"
                              if norm.obs or norm.reward else "none"), "",
        "Hyperparameters (`config.yml` holds those changed from SB3's defaults, as rl_zoo3 reads them):", "",
        "| hyperparameter | value |", "|---|---|", rows or "| (all SB3's defaults) | |", "",
        "## Evaluation", "",
        f"Mean reward **{evaluation.mean_reward:.2f} ± {evaluation.std_reward:.2f}** (std) over "
        f"{evaluation.episodes} episodes, {how} actions, env seed {evaluation.seed}, rewards as the env gives them "
        "(normalisation statistics frozen), as SB3's `evaluate_policy` counts episodes.",
        "",
        "## Usage", "",
        "```python", *_usage(module, cls, name, env, "vec_normalize.pkl" in files), "```", "",
        f"Files: {', '.join(f'`{f}`' for f in files)}.", ""]
    return "\n".join(lines)


def _library(module: str) -> str:
    if module == "sbx":
        return "[SBX](https://github.com/araffin/sbx) (stable-baselines3 in JAX): the model loads with `sbx`"
    if module == "sb3_contrib":
        return "[sb3-contrib](https://github.com/Stable-Baselines-Team/stable-baselines3-contrib)"
    return "[stable-baselines3](https://github.com/DLR-RM/stable-baselines3)"


def _usage(module: str, cls: str, name: str, env: str, normalized: bool) -> list[str]:
    """The load snippet: the model from the Hub (huggingface_sb3), its VecNormalize statistics when it has them."""
    lines = ["import gymnasium as gym", "from huggingface_sb3 import load_from_hub", f"from {module} import {cls}", "",
             f'model = {cls}.load(load_from_hub("<user>/{name}", "{name}.zip"))']
    if normalized:
        lines[1:1] = ["from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize"]
        lines += [f'env = VecNormalize.load(load_from_hub("<user>/{name}", "vec_normalize.pkl"), '
                  f'DummyVecEnv([lambda: gym.make("{env}")]))', "env.training, env.norm_reward = False, False"]
    return lines


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")
