"""The env probe subprocess: ``python -m core.config.space_probe --env JSON`` prints one JSON object.

An env from an entry point, or with wrappers, is user code, which only the worker may import
in-process (docs/safety.md): ``core.config.spaces.probe_spaces`` runs this module in a
child process to read its spaces. It also plays one episode of random actions and reports the
numeric keys of its last ``info``: the env's own measures the form offers for ``env.info_keys``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from typing import Any

from core.config.errors import ConfigError
from core.config.schema import EnvSpec
from core.config.spaces import describe, has_action_masks
from core.util.imports import load_object

PROBE_EPISODE_STEPS, PROBE_EPISODE_S = 2000, 10.0  # the probe's one random episode (its info keys): at most


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.config.space_probe", description="Print an env's spaces as JSON.")
    parser.add_argument("--env", required=True, help="the env section as JSON (id or entry_point, kwargs, wrappers)")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.getcwd())
    try:
        spec = EnvSpec.model_validate(json.loads(args.env))
        made = _make_wrapped(spec)
        try:
            found = describe(made.observation_space, made.action_space, spec.label)
            out: dict[str, Any] = replace(found, action_masks=has_action_masks(made)).to_json()
            out["info_keys"] = episode_info_keys(made)
        finally:
            close = getattr(made, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:  # the spaces are read; a failing close changes nothing
                    pass
    except ConfigError as exc:
        out = {"error": "; ".join(i.message for i in exc.issues)}
    except Exception as exc:  # user code: report anything it raises, in one line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        out = {"error": f"{type(exc).__name__}: {first}".rstrip(": ")}
    print(json.dumps(out))
    return 0


def episode_info_keys(env: Any, max_steps: int = PROBE_EPISODE_STEPS, max_s: float = PROBE_EPISODE_S) -> list[str]:
    """The numeric keys of ``info`` when one episode of random actions ends (within the step and time
    caps): what an env reports as its own measures, offered for ``env.info_keys``. Never raises."""
    import numbers
    import time

    try:
        env.reset()
        info: dict[str, Any] = {}
        deadline = time.monotonic() + max_s
        for _ in range(max_steps):
            _, _, terminated, truncated, info = env.step(env.action_space.sample())
            if terminated or truncated or time.monotonic() > deadline:
                break
        if not (terminated or truncated):
            return []
        return sorted(str(k) for k, v in info.items() if isinstance(v, numbers.Real) and not isinstance(v, bool))
    except Exception:  # user code: the keys are an offer, never a reason the probe fails
        return []


def _make_wrapped(spec: EnvSpec) -> Any:
    """The env with its wrappers (user code: this subprocess only)."""
    if spec.entry_point:
        made = load_object(spec.entry_point)(**spec.kwargs)
    else:
        import gymnasium

        made = gymnasium.make(spec.id or "", **spec.kwargs)
    for wrapper in spec.wrappers:
        module, _, cls = wrapper.name.rpartition(".")
        made = load_object(f"{module}:{cls}")(made, **wrapper.kwargs)
    return made


if __name__ == "__main__":
    sys.exit(main())
