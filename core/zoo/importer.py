"""``rlpanel zoo import``: every entry of a zoo file becomes a user preset ``zoo-<algo>-<env>``,
with a report line: imported, imported with drops (each named, with why), or refused (why)."""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.config.algorithms.contrib import installed_algorithms, missing_text
from core.config.algorithms.registry import ALGORITHMS
from core.config.errors import ConfigError
from core.config.presets import list_presets, save_user_preset
from core.util.text import safe_name
from core.util.yaml_reader import read_yaml_mapping
from core.zoo.envs import GENERIC, missing_env_warning
from core.zoo.translate import ZOO_ALGOS, translate_entry, validated_translation

IMPORTED, WITH_DROPS, REFUSED = "imported", "imported-with-drops", "refused"


@dataclass
class ImportResult:
    """One entry's fate; ``to_json`` is the shape ``--json`` prints."""

    algo: str
    env: str
    preset: str
    status: str
    dropped: list[str] = field(default_factory=list)
    reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    path: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def line(self) -> str:
        head = f"{self.status:<19}  {self.algo:<5} {self.env:<34} -> {self.preset}"
        details = [f"    dropped {d}" for d in self.dropped] + [f"    warning: {w}" for w in self.warnings]
        if self.reason:
            details.insert(0, f"    {self.reason}")
        return "\n".join([head, *details])


def preset_name(zoo_algo: str, env: str) -> str:
    return safe_name(f"zoo-{zoo_algo}-{env}".lower().replace("/", "-"))


def installed_zoo_file(zoo_algo: str) -> Path:
    """``hyperparams/<algo>.yml`` of the installed rl_zoo3 (found without importing it: it imports torch)."""
    spec = importlib.util.find_spec("rl_zoo3")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("rl_zoo3 is not installed here: pip install rl_zoo3, or give the path of a .yml file")
    folder = Path(list(spec.submodule_search_locations)[0]) / "hyperparams"
    path = folder / f"{zoo_algo}.yml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.yml")))
        raise FileNotFoundError(f"rl_zoo3 has no hyperparams/{zoo_algo}.yml; it has: {known}")
    return path


def installed_zoo_files() -> dict[str, Path]:
    """The installed rl_zoo3's files for the algorithms rlpanel has, by zoo name (empty without rl_zoo3)."""
    out: dict[str, Path] = {}
    here = installed_algorithms()
    for zoo_algo, algo in ZOO_ALGOS.items():
        if algo not in here:
            continue
        try:
            out[zoo_algo] = installed_zoo_file(zoo_algo)
        except FileNotFoundError:
            continue
    return out


def zoo_algo_of(path: Path) -> str:
    """The zoo algorithm a file is for, from its name (``ppo.yml``, ``ppo_lstm.yml``)."""
    stem = path.stem.lower()
    if stem not in ZOO_ALGOS:
        raise ValueError(f"{path.name}: cannot tell the algorithm from the file name; name it after one of "
                         f"{', '.join(ZOO_ALGOS)} (as rl_zoo3's hyperparams/ files are)")
    return stem


def import_zoo_file(path: Path, envs: list[str] | None = None, overwrite: bool = False,
                    zoo_algo: str | None = None) -> list[ImportResult]:
    """Import the entries of ``path`` (those of ``envs`` only, if given) as user presets."""
    zoo_algo = zoo_algo or zoo_algo_of(path)
    algo = ZOO_ALGOS[zoo_algo]
    if algo not in ALGORITHMS:
        have = ", ".join(z for z, a in ZOO_ALGOS.items() if a in ALGORITHMS)
        raise ValueError(f"{path.name}: rlpanel does not train {algo} (yet); it imports the files of {have}")
    if algo not in installed_algorithms():
        raise ValueError(f"{path.name}: {missing_text(algo)}")
    entries = read_yaml_mapping(path)
    missing = [e for e in envs or [] if e not in entries]
    if missing:
        raise ValueError(f"{path.name} has no entry for {', '.join(missing)}; it has {', '.join(map(str, entries))}")
    existing = {p.name: p for p in list_presets()}
    out: list[ImportResult] = []
    for env, entry in entries.items():
        if envs and env not in envs:
            continue
        out.append(_import_one(zoo_algo, str(env), entry, path, existing, overwrite))
    return out


def _import_one(zoo_algo: str, env: str, entry: Any, path: Path, existing: dict[str, Any], overwrite: bool) -> ImportResult:
    name = preset_name(zoo_algo, env)
    algo = ZOO_ALGOS[zoo_algo]
    if not isinstance(entry, dict):
        return ImportResult(algo, env, name, REFUSED, reason=f"the entry is {type(entry).__name__}, not a mapping of settings")
    translated, problem = validated_translation(translate_entry(zoo_algo, env, entry))
    result = ImportResult(algo, env, name, WITH_DROPS if translated.dropped else IMPORTED,
                          [str(d) for d in translated.dropped], warnings=list(translated.warnings))
    if problem:
        result.status, result.reason = REFUSED, problem
        return result
    warning = missing_env_warning(env)
    if warning:
        result.warnings.append(warning)
    if env in GENERIC:
        result.warnings.append(f"the {env!r} entry has no env of its own: it applies to {GENERIC[env]}; choose one")
    if name in existing and existing[name].builtin:
        result.status, result.reason = REFUSED, f"{name} is a built-in preset"
        return result
    if name in existing and not overwrite:
        result.status, result.reason = REFUSED, f"user preset {name} exists ({existing[name].path}); --overwrite replaces it"
        return result
    description = f"rl_zoo3 {path.name}: {env}" + (f" ({len(translated.dropped)} fields dropped)" if translated.dropped else "")
    try:
        saved = save_user_preset(name, translated.raw, description, overwrite=overwrite)
    except ConfigError as exc:
        result.status, result.reason = REFUSED, "; ".join(str(i) for i in exc.issues)
        return result
    result.path = str(saved)
    return result


def summary_line(results: list[ImportResult]) -> str:
    counts = {s: sum(r.status == s for r in results) for s in (IMPORTED, WITH_DROPS, REFUSED)}
    return (f"{len(results)} entries: {counts[IMPORTED]} imported exactly, {counts[WITH_DROPS]} imported with drops, "
            f"{counts[REFUSED]} refused")
