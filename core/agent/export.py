"""``python -m core.agent.export RUN --format onnx|torchscript -o FILE [--check]``: a checkpoint's policy as a file.

The file takes a float32 batch of raw observations and returns the deterministic actions in the env's
own action space (``core.agent.export_model``); next to it ``FILE.json`` (the sidecar) names the
spaces, the input and output, the opset or the torch version, the run and the checkpoint. ONNX goes
through torch's TorchScript-based exporter (``dynamo=False``): it traces an MLP policy in a fraction
of a second, where the torch.export-based one took ~8 s and needs onnxscript; the check below is
what tells whether a trace is right. ``--check`` runs 1,000 seeded observations through the written
file (onnxruntime, or ``torch.jit.load``) and through SB3's ``predict(deterministic=True)`` on the same
observations normalised as the env normalised them (``core.agent.export_check``).
"""

from __future__ import annotations

import argparse
import io
import json
import warnings
from pathlib import Path
from typing import Any

import torch
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn
from torch.jit._trace import TracerWarning

from core.agent.export_check import check_export, space_sample
from core.agent.export_model import ExportedPolicy, ExportRefused, exported_policy, refuse_engine
from core.agent.export_sidecar import INPUT_NAME, OUTPUT_NAME, sidecar
from core.agent.load import LoadedPolicy, load_policy
from core.agent.tool import tool_main, tool_parser
from core.launch.agent_results import existing_export, sidecar_path
from core.run.store import load_run_config
from core.util.files import replace_retrying, stage_bytes, write_failed

SB3_PACKAGES = ("stable_baselines3", "sb3_contrib")  # a policy or extractor from elsewhere is the user's own network

FORMATS = ("onnx", "torchscript")
ONNX_OPSET = 17  # read by onnxruntime 1.14 and later, and by TensorRT 8.6 and OpenVINO 2023
# onnx and onnxruntime are rlpanel's own dependencies: missing, this Python's install is incomplete
MISSING_ONNX = "ONNX export needs onnx and onnxruntime, which are not installed in this Python: pip install onnx onnxruntime"


def build_parser() -> argparse.ArgumentParser:
    parser = tool_parser("export")
    parser.add_argument("--format", choices=FORMATS, required=True, help="onnx or torchscript")
    parser.add_argument("-o", "--output", type=Path, required=True, help="the file to write (its sidecar: FILE.json)")
    parser.add_argument("--check", action="store_true",
                        help="compare the written file with SB3's predict on 1,000 observations (seeded by --seed, default 0)")
    parser.add_argument("--overwrite", action="store_true", help="replace FILE and FILE.json if they exist")
    return parser


def export_policy(args: argparse.Namespace) -> dict[str, Any]:
    """Write the file and its sidecar, check it if asked; the tool's JSON result."""
    if args.device != "cpu":
        raise ValueError(f"--device {args.device}: the export runs on the CPU (the file it writes runs anywhere); leave it out")
    refuse_engine(Path(args.run_dir).name, load_run_config(args.run_dir).runtime.engine)  # before any other question
    if args.format == "onnx":
        require_onnx(check=args.check)
    output = Path(args.output).resolve()
    if not output.parent.is_dir():
        raise ValueError(f"-o {output}: the folder {output.parent} does not exist; create it or choose another file")
    existing = existing_export(output)
    if existing is not None and not args.overwrite:
        raise ValueError(f"{existing} exists; choose another file or replace it (--overwrite; in the window: pick it "
                         "with Browse… and confirm)")
    loaded = load_policy(args.run_dir, args.checkpoint, device="cpu")
    try:
        return _export(loaded, args.checkpoint, args.format, output, check=args.check, seed=0 if args.seed is None else args.seed)
    finally:
        loaded.close()


def _export(loaded: LoadedPolicy, which: str, fmt: str, output: Path, check: bool, seed: int) -> dict[str, Any]:
    raw_space = loaded.env.observation_space
    module = exported_policy(loaded.model, loaded.normalize, raw_space, loaded.cfg.algo)
    example = torch.as_tensor(space_sample(raw_space, 2, seed))
    data, notes = traced_file(module, example, fmt)
    facts = {"opset": ONNX_OPSET} if fmt == "onnx" else {"torch_version": torch.__version__}
    side = sidecar(loaded, which, module, fmt, output, facts)
    write_together(output, data, json.dumps(side, indent=2, default=str) + "\n")
    result: dict[str, Any] = {"run": loaded.run_dir.name, "checkpoint": which,
                              "checkpoint_step": loaded.checkpoint.step, "format": fmt, "file": str(output),
                              "sidecar": str(sidecar_path(output)), "normalization_baked_in": module.normalize,
                              "check": check_export(loaded, fmt, output, seed) if check else None}
    if notes:
        result["trace_warnings"] = notes
    return result


def traced_file(module: ExportedPolicy, example: torch.Tensor, fmt: str) -> tuple[bytes, list[str]]:
    """The file's bytes: ``module`` traced on ``example`` (in memory: a policy is kilobytes to a few megabytes, and
    a disk that fails is then a write error, not a failed trace), and the tracer's warnings (a data-dependent branch
    the trace fixed). A trace that fails is one line."""
    buffer = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with torch.no_grad():
                _trace(module, example, fmt, buffer)
        except Exception as exc:  # noqa: BLE001 - any failure of the tracer is the same to the user: this policy did not trace
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            raise ExportRefused(f"the policy could not be traced for {fmt}{own_network(module)}: {type(exc).__name__}: "
                                f"{first}") from exc
    return buffer.getvalue(), sorted({str(w.message).splitlines()[0][:200] for w in caught
                                      if issubclass(w.category, TracerWarning)})


def write_together(output: Path, data: bytes, side_text: str) -> None:
    """The policy and its sidecar, each written whole under a temporary name in the folder before either gets its
    name; the policy is renamed last, so a policy under its name has its sidecar beside it. A failure is
    ``WriteFailed`` naming ``output`` and leaves neither."""
    side = sidecar_path(output)
    staged: list[Path] = []
    try:
        staged.append(stage_bytes(side, side_text.encode("utf-8")))
        staged.append(stage_bytes(output, data))
        replace_retrying(staged[0], side)
        try:
            replace_retrying(staged[1], output)
        except OSError:
            side.unlink(missing_ok=True)  # no sidecar that describes a file that is not there
            raise
    except OSError as exc:
        raise write_failed(output, exc) from None
    finally:
        for tmp in staged:
            tmp.unlink(missing_ok=True)


def own_network(module: nn.Module) -> str:
    """' (your network mod.Class)' for the user's own code in ``module`` (a features extractor, else a policy class,
    from outside SB3 and rlpanel): what a failed trace names. Empty when it is all SB3's."""
    for kind in (BaseFeaturesExtractor, BasePolicy):
        for part in module.modules():
            cls = type(part)
            if isinstance(part, kind) and cls.__module__.split(".", 1)[0] not in SB3_PACKAGES:
                return f" (your network {cls.__module__}.{cls.__qualname__})"
    return ""


def _trace(module: nn.Module, example: torch.Tensor, fmt: str, buffer: io.BytesIO) -> None:
    if fmt == "onnx":  # the TorchScript-based exporter writes to a file object too; torch's annotation names paths only
        torch.onnx.export(module, (example,), buffer, dynamo=False, opset_version=ONNX_OPSET,  # type: ignore[arg-type]
                          input_names=[INPUT_NAME], output_names=[OUTPUT_NAME],
                          dynamic_axes={INPUT_NAME: {0: "batch"}, OUTPUT_NAME: {0: "batch"}})
    else:
        traced = torch.jit.trace(module, example)
        torch.jit.save(traced, buffer)


def require_onnx(check: bool) -> None:
    """onnx (and onnxruntime for ``--check``): missing, the one line that installs them."""
    try:
        import onnx  # noqa: F401  (torch's exporter writes through it)

        if check:
            import onnxruntime  # noqa: F401
    except ImportError:
        raise ExportRefused(MISSING_ONNX) from None


def main(argv: list[str] | None = None) -> int:
    return tool_main(build_parser(), export_policy, argv)


if __name__ == "__main__":
    raise SystemExit(main())
