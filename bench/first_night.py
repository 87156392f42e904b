"""The README's first night as a user's install runs it, command by command, with what each said and took.

    python bench/first_night.py OUT [--rlpanel PATH] [--device cuda|cpu] [--steps N]

Runs the ``rlpanel`` console script (default: the one beside this Python) as a Windows user's redirected night
does: output to files under the ANSI code page (``PYTHONIOENCODING=cp1252``), a user folder and runs folder with
spaces and umlauts, env processes started with ``spawn``. The night: doctor, the estimate, a group of two PPO seeds
and a SAC run on ``--device``, a random baseline, each run's reported device and its peak GPU memory beside its
estimate, evaluate, export-policy (ONNX and TorchScript, ``--check``), record (MP4), the morning report and every
export format. Each step is a JSON line in ``OUT/first_night.jsonl`` as it ends (a killed run keeps what was
done); the last line sums it up. Made for a lent GPU machine after ``pip install`` of the wheel with no extras
(issue 41); on a machine without CUDA pass ``--device cpu``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

SPAWNED = ["--set", "runtime.vec_env=subproc", "--set", "runtime.start_method=spawn"]


class Night:
    def __init__(self, out: Path, rlpanel: str):
        self.out = out
        self.user = out / "Jürgen Müller"
        self.runs = self.user / "runs dir"
        self.files = self.user / "Ergebnisse"
        self.files.mkdir(parents=True, exist_ok=True)
        self.rlpanel = rlpanel
        self.env = {**os.environ, "PYTHONIOENCODING": "cp1252", "RLPANEL_HOME": str(self.user / "rlpanel home")}
        self.log = out / "first_night.jsonl"
        self.steps: list[dict[str, Any]] = []

    def run(self, name: str, *args: str, timeout: float = 600) -> dict[str, Any]:
        """``rlpanel ARGS --runs-dir RUNS > file 2> file``: exit code, seconds, stdout (UTF-8), stderr's tail."""
        out, err = self.files / f"{name}.out", self.files / f"{name}.err"
        start = time.monotonic()
        with open(out, "wb") as stdout, open(err, "wb") as stderr:
            try:
                code = subprocess.run([self.rlpanel, *args, "--runs-dir", str(self.runs)], stdout=stdout, stderr=stderr,
                                      stdin=subprocess.DEVNULL, env=self.env, cwd=self.user, timeout=timeout).returncode
            except subprocess.TimeoutExpired:
                code = -1
        text, errors = out.read_bytes(), err.read_bytes()
        step = {"step": name, "args": list(args), "code": code, "s": round(time.monotonic() - start, 1),
                "utf8": _is_utf8(text) and _is_utf8(errors), "traceback": b"Traceback" in errors,
                "stderr_tail": errors.decode("utf-8", "replace").strip().splitlines()[-3:]}
        try:
            step["json"] = json.loads(text)
        except ValueError:
            step["stdout_head"] = text.decode("utf-8", "replace")[:1500]
        self.steps.append(step)
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(step, ensure_ascii=False) + "\n")
        print(f"{name}: exit {code} in {step['s']} s", flush=True)
        return step


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def run_facts(night: Night, run_id: str) -> dict[str, Any]:
    """The run's reported device, steps/s, peak GPU memory and the estimate kept with it (summary.json)."""
    folder = night.runs / run_id
    status = json.loads((folder / "status.json").read_text(encoding="utf-8"))
    summary_path = folder / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.exists() else {}
    keys = ("device", "state", "reason", "train_device")
    facts = {k: status[k] for k in keys if k in status}
    facts.update({k: v for k, v in summary.items() if any(w in k for w in ("peak", "estimate", "fps", "steps_per", "device"))})
    return facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--rlpanel", default=str(Path(sys.executable).with_name("rlpanel")))
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--steps", type=int, default=8192)
    args = parser.parse_args()
    night = Night(args.out, args.rlpanel)
    device = ["--set", f"runtime.device={args.device}"]
    night.run("doctor", "doctor")
    night.run("gpus", "gpus", "--json")
    if args.device.startswith("cuda"):
        night.run("calibrate", "calibrate")  # the System tab's Calibrate GPU: the estimate then uses this card's costs
    night.run("estimate-ppo", "estimate", "--algo", "PPO", "--env", "CartPole-v1", *device, "--json")
    night.run("estimate-sac", "estimate", "--algo", "SAC", "--env", "Pendulum-v1", *device, "--json")
    group = night.run("train-ppo-seeds", "train", "--algo", "PPO", "--env", "CartPole-v1", "--timesteps", str(args.steps),
                      "--seeds", "2", "--name", "ppo", "--set", "runtime.n_envs=4", *SPAWNED, *device, "--json")
    sac = night.run("train-sac", "train", "--algo", "SAC", "--env", "Pendulum-v1", "--timesteps", "2000", "--name",
                    "sac", *device, "--json")
    night.run("train-baseline", "train", "--algo", "random", "--env", "CartPole-v1", "--episodes", "10", "--name", "base",
              "--json")
    ids = [r["id"] for r in group.get("json", {}).get("runs", [])] + ([sac["json"]["id"]] if "json" in sac else [])
    facts = {run_id: run_facts(night, run_id) for run_id in ids}
    with open(night.log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"step": "run-facts", "runs": facts}, ensure_ascii=False) + "\n")
    if ids:
        first = ids[0]
        night.run("evaluate", "evaluate", first, "--episodes", "10", "--json")
        night.run("export-onnx", "export-policy", first, "--format", "onnx", "-o", str(night.files / "Agent für C#.onnx"),
                  "--check", "--json")
        night.run("export-torchscript", "export-policy", first, "--format", "torchscript", "-o",
                  str(night.files / "Agent für C++.pt"), "--check", "--json")
        night.run("record-mp4", "record", first, "-o", str(night.files / "Video für Anna.mp4"), "--json")
        night.run("runs-group", "runs", "--json")
    night.run("report", "report", "--since", "2000-01-01 00:00")
    for fmt in ("md", "csv", "xlsx", "tex", "html"):
        night.run(f"export-{fmt}", "export", "--all", "--group-by", "group", "-o", str(night.files / f"Tabelle.{fmt}"))
    bad = [s["step"] for s in night.steps if s["code"] != 0 or s["traceback"] or not s["utf8"]]
    summary = {"step": "summary", "steps": len(night.steps), "failed": bad, "runs": facts}
    with open(night.log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(summary, ensure_ascii=False) + "\n")
    print(json.dumps(summary, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
