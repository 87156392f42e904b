"""The config the window edits: one ``ConfigModel``, owned by the main window.

The Configure panel edits it and shows it; the Queue tab turns it into plan jobs and loads jobs
back into it. 100 ms after the last edit it validates ``preset <- overrides`` with ``core``;
the field issues, the env's spaces, the fit estimate and whether Launch is possible all follow
from that one validation, and views hear of it through ``validated``.
"""

from __future__ import annotations

import copy
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QTimer, Signal

from app.configure.estimator import (
    NetworkCache,
    SpacesCache,
    TorchFactsCache,
    estimate_for,
    measurable,
    needs_torch_facts,
)
from app.configure.state import ConfigState, Validation, schema_leaves
from core.config.dotted import get_path
from core.config.errors import ConfigError, FieldHint, FieldIssue
from core.config.trust import code_module, is_trusted, policy_modules

if TYPE_CHECKING:  # the estimate's modules load at the first check, after the window's first frame; pydantic and the
    # schema at the first validation (``flush``), right after it
    from core.config.schema import RunConfig
    from core.config.spaces import EnvSpaces
    from core.estimate.result import FitEstimate, Suggestion

DEBOUNCE_MS = 100
KIND_TEXT = {"box": "continuous (Box) actions", "discrete": "discrete actions",
             "multidiscrete": "multi-discrete actions", "multibinary": "multi-binary actions"}


def spaces_text(spaces: EnvSpaces) -> str:
    kind = KIND_TEXT.get(spaces.action_kind, spaces.action_kind)
    text = f"{kind}, observations {spaces.obs_kind} {list(spaces.obs_shape)}"
    if spaces.info_keys:  # offered for env.info_keys: the env's own measures at an episode's end
        text += f"; info at episode end: {', '.join(spaces.info_keys)} (record them with env.info_keys)"
    return text


class ConfigModel(QObject):
    """A preset, the user's overrides over it, and what ``core`` says of the result."""

    values_changed = Signal()          # a preset chosen, a config loaded, a field set or reset
    validated = Signal()               # issues, spaces and estimate are up to date
    config_changed = Signal(object)    # the valid RunConfig, or None
    estimate_changed = Signal(object)  # the FitEstimate, or None

    def __init__(self, parent: QObject | None = None, hold_probes: bool = False, hold_validation: bool = False):
        """``hold_probes``: the env's spaces are read once ``release_probes()`` is called (the window's, after its
        first frame); until then the estimate says it is reading them. ``hold_validation``: the first validation waits
        for ``flush()`` (the window's, right after its first frame: the first validation builds pydantic's schema of
        the config, ~0.1 s); anything that reads the outcome before (``current_config``, ``errors``...) flushes first."""
        super().__init__(parent)
        self.state = ConfigState()
        self.state.presets_checked = not hold_validation
        self.validation = Validation({})
        self.issues: list[FieldIssue] = []
        self.estimate: FitEstimate | None = None
        self.estimate_note = ""  # why there is no estimate
        self.spaces_text = ""    # the env's action and observation spaces, in words
        self.info_keys_seen: tuple[str, ...] = ()  # numeric info keys at a probe episode's end (offered for env.info_keys)
        self.runs_dir: Path | None = None  # the window's runs folder: how the last runs on this card compared
        # a preset just picked (or put back) whose algorithm may not train the env shown: (preset, the algorithm the
        # form showed before the pick); decided once the env's spaces are known (``_settle_pick``)
        self._pick: tuple[str, str | None] | None = None
        self.pick_note = ""  # what that decision kept, and why: shown as a note until the algorithm or env is edited
        self.spaces = SpacesCache(self, held=hold_probes)
        self.spaces.ready.connect(lambda _key: self._check())
        self.torch = TorchFactsCache(self)
        self.torch.ready.connect(self._check)
        self.networks = NetworkCache(self)  # the user's own network, measured for the estimate
        self.networks.ready.connect(self._check)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.validate_now)
        self._held = hold_validation  # validated by the next flush()
        if hold_validation:
            self.estimate_note = "checking the config\u2026"
        else:
            self.validate_now()

    # --- what it holds ---------------------------------------------------------------------

    @cached_property
    def host_total(self) -> int | None:
        """This machine's memory in bytes (psutil: read when first needed)."""
        from core.estimate.estimate import host_memory_total

        return host_memory_total()

    @property
    def preset(self) -> str | None:
        return self.state.preset

    def current_config(self) -> RunConfig | None:
        """The valid config, or None while there are issues."""
        self.flush()
        return self.validation.config if not self.issues else None

    def tunable_config(self) -> RunConfig | None:
        """The config a tune may start from: valid, or wrong only in ``runtime.device`` (a CUDA device this torch
        lacks): the tune says which device runs here, and its pick sets one that does."""
        self.flush()
        if any(issue.path != "runtime.device" for issue in self.issues):
            return None
        return self.validation.config

    def errors(self) -> list[FieldIssue]:
        self.flush()
        return list(self.issues)

    def warnings(self) -> list[str]:
        """Notes about the config, the hints' text among them."""
        return list(self.validation.warnings)

    def hints(self) -> list[FieldHint]:
        """Advice with a fix (SB3 accepts the value with a warning): shown with a button."""
        return list(self.validation.hints)

    def apply_hint(self, hint: FieldHint) -> None:
        """The hint's one-click fix: set its field to the value it suggests."""
        self.set_field(hint.path, hint.value)
        self.validate_now()

    def settled(self) -> bool:
        """No validation pending and the env's spaces known: the issues and estimate are final."""
        if self._timer.isActive() or self._held:
            return False
        cfg = self.validation.config
        if cfg is None:
            return True
        module = code_module(cfg.env)
        if module and not is_trusted(module):  # nothing is probed for code the user has not trusted
            return True
        if self.spaces.get(cfg.env) is None or (needs_torch_facts(cfg) and self.torch.get(cfg.runtime.engine) is None):
            return False
        if measurable(cfg) and all(is_trusted(m) for m in policy_modules(cfg.policy)):
            return self.networks.get(cfg) is not None
        return True

    def value(self, path: str) -> Any:
        return self.state.value(path)

    # --- edits -------------------------------------------------------------------------------

    def edit(self, path: str, value: Any) -> None:
        """A user's edit in a form: validated 100 ms after the last one."""
        self._chosen(path)
        self.state.set(path, value)
        self._timer.start()

    def _chosen(self, path: str) -> None:
        """The user chose the algorithm or env themselves: a pick's decision and its note no longer apply."""
        if path == "algo" or path == "env" or path.startswith("env."):
            self._pick, self.pick_note = None, ""

    def set_field(self, path: str, value: Any) -> None:
        """Set one field as the user would, by its dotted path, and show it."""
        self.edit(path, copy.deepcopy(value))
        self.values_changed.emit()

    def reset(self, path: str) -> None:
        self._chosen(path)
        self.state.reset(path)
        self.values_changed.emit()
        self._timer.start()

    def select_preset(self, name: str | None) -> None:
        """Show preset ``name``: the user's edits are dropped, except the environment they chose, and the algorithm
        shown when the preset's cannot train that env (``_settle_pick``)."""
        shown = self.state.value("algo")
        env = get_path(self.state.overrides, "env")
        self.state.preset = name
        self.state.overrides = {}
        if env is not None:
            self.state.set("env", env)
        self._pick, self.pick_note = ((name, str(shown) if shown else None) if name else None), ""
        if self._held:  # before the window's first frame: its flush validates
            self._timer.start()
        else:  # at once, not after the typing debounce: the preset's algorithm is replaced before it is ever shown
            self.validate_now()
        self.values_changed.emit()

    def load_config(self, raw: dict[str, Any], preset: str | None = None) -> None:
        """Put a config (a run's, a plan job's) into the forms, as edits over ``preset``."""
        self.state.preset = preset
        self.state.overrides = {}
        self._pick, self.pick_note = None, ""  # a run's or a job's config is shown as it is, right or wrong
        for path, value in schema_leaves(raw).items():
            self.state.set(path, value)
        self.values_changed.emit()
        self.validate_now()

    def load_edits(self, preset: str | None, overrides: dict[str, Any]) -> None:
        """Put back a preset and the user's edits over it as they were (the window's last session)."""
        self.state.preset = preset
        self.state.overrides = copy.deepcopy(overrides)
        # a preset put back with its own algorithm is decided as a pick is (a session saved before picks kept the
        # algorithm shown came back with SAC on CartPole); an algorithm the user chose comes back as it was
        algo_chosen = get_path(self.state.overrides, "algo") is not None
        self._pick, self.pick_note = ((preset, None) if preset and not algo_chosen else None), ""
        self.values_changed.emit()
        if not self._held:  # the window's last session, put back before its first frame: validated after it
            self.validate_now()

    def apply_suggestion(self, suggestion: Suggestion) -> None:
        """Apply the estimate's suggested fix: set its path to its new value."""
        self.set_field(suggestion.path, suggestion.new)
        self.validate_now()

    # --- validation --------------------------------------------------------------------------

    def flush(self) -> None:
        """Validate now if an edit (or the held first validation) is waiting for it."""
        if self._timer.isActive() or self._held:
            self.validate_now()

    def validate_now(self) -> None:
        self._timer.stop()
        self._held = False
        self.validation = self.state.validate()
        self._check()

    def release_probes(self) -> None:
        """Read the env's spaces now (held since construction)."""
        self.spaces.release()

    def recheck(self) -> None:
        """Estimate again (the GPU's costs changed: a calibration)."""
        self._check()

    def _check(self) -> None:
        """Spaces rules and the estimate for the current config; then tell the views."""
        from core.config.spaces import check_spaces
        from core.estimate.device import device_issue

        if self._pick is not None and self._settle_pick():
            return  # validated again with the algorithm kept: that validation told the views
        validation = self.validation
        issues = list(validation.issues)
        estimate: FitEstimate | None = None
        cfg = validation.config
        self.info_keys_seen = ()
        if cfg is None:
            self.estimate_note = "fix the errors below to see the estimate"
            self.spaces_text = self._spaces_while_invalid(validation.raw.get("env"))
        elif (module := code_module(cfg.env)) and not is_trusted(module):  # user code: never run before Launch asks
            self.spaces_text = f"this preset runs code from {module}: Launch asks before it runs"
            self.estimate_note = f"no estimate: reading the spaces would run code from {module} (Launch asks first)"
        else:
            found = self.spaces.get(cfg.env)
            if found is None:
                self.estimate_note = self.spaces_text = f"reading the spaces of {cfg.env.label}\u2026"
            elif found[0] is None:
                issues.append(FieldIssue("env.entry_point" if cfg.env.entry_point else "env.id", found[1]))
                self.estimate_note, self.spaces_text = "the environment cannot be created", ""
            else:
                self.spaces_text = spaces_text(found[0])
                self.info_keys_seen = found[0].info_keys
                refused = check_spaces(cfg, found[0].action_kind, found[0])
                issues += refused
                torch = self.torch.get(cfg.runtime.engine) if needs_torch_facts(cfg) else None
                issue = device_issue(cfg, torch)
                issues += [issue] if issue else []
                waiting = "" if refused else self._network_wait(cfg, issues)
                if refused:  # the estimate would refuse the same way: its message is at the field and in the list
                    self.estimate_note = "fix the errors below to see the estimate"
                elif waiting:
                    self.estimate_note = waiting
                else:
                    estimate, self.estimate_note = estimate_for(cfg, found[0], self.host_total, torch, self.runs_dir)
        self.issues = issues
        changed = estimate != self.estimate
        self.estimate = estimate
        self.validated.emit()
        self.config_changed.emit(cfg if not issues else None)
        if changed:
            self.estimate_changed.emit(estimate)

    def _settle_pick(self) -> bool:
        """A preset just picked whose algorithm cannot train the env shown (laptop-8gb's SAC on CartPole-v1): keep the
        algorithm the form showed (else the preset's first, else any, that can) and the rest of the preset, and say
        so; nothing invalid is shown, launched or saved for the next start. Waits while the env's spaces are read.
        Returns whether it changed the config (then validated again)."""
        from core.config.preset_env import clash, keep_algorithm, kept_note
        from core.config.presets import get_preset

        assert self._pick is not None
        preset, shown = self._pick
        env = self._env_spec(self.state.effective_raw().get("env"))  # the env shown: the user's, the preset's or the default
        if env is None or ((module := code_module(env)) and not is_trusted(module)):
            self._pick = None  # no env to ask, or code not run before Launch asks: check_spaces says it at launch
            return False
        found = self.spaces.get(env)
        if found is None:
            return False  # being read: decided when the probe ends (``spaces.ready``)
        self._pick = None
        reason = clash(preset, str(self.state.value("algo")), env.label, found[0].action_kind) if found[0] else None
        if reason is None:
            return False
        try:
            own = get_preset(preset, checked=False).algos
        except ConfigError:  # a preset deleted meanwhile: the algorithm shown, else any that trains the env
            own = []
        kept = keep_algorithm(found[0].action_kind, [shown, *own])
        if kept is None:
            return False  # nothing installed trains these actions: the field says so
        self.state.set("algo", kept)
        self.pick_note = kept_note(reason, preset, kept, shown)
        self.values_changed.emit()
        self.validate_now()
        return True

    @staticmethod
    def _env_spec(env: Any) -> Any:
        """The ``EnvSpec`` of a raw env section, or None when it is not one."""
        from pydantic import ValidationError

        from core.config.schema import EnvSpec

        try:
            return EnvSpec.model_validate(env)
        except ValidationError:
            return None

    def _network_wait(self, cfg: RunConfig, issues: list[FieldIssue]) -> str:
        """Why the estimate waits for the user's own network ("" when it need not: none, or measured); a network
        that cannot be built is an issue at its field. Nothing is measured for code the user has not trusted."""
        if not measurable(cfg):
            return ""
        if cfg.runtime.engine == "sbx":  # any SBX model: its arrays live in XLA, no torch formula counts them
            found = self.networks.get(cfg)
            if found is None:
                return "measuring the SBX model\u2026"
            if found[0] is None:
                issues.append(FieldIssue("runtime.engine", found[1]))
                return "the SBX model cannot be measured"
            return ""
        untrusted = [m for m in policy_modules(cfg.policy) if not is_trusted(m)]
        if untrusted:
            return f"no estimate: measuring your network would run code from {', '.join(untrusted)} (Launch asks first)"
        found = self.networks.get(cfg)
        if found is None:
            return "measuring your network\u2026"
        if found[0] is None:
            field = "policy.features_extractor" if cfg.policy.features_extractor else "policy.class"
            issues.append(FieldIssue(field, found[1]))
            return "your network cannot be measured"
        return ""

    def _spaces_while_invalid(self, env: Any) -> str:
        """The env's spaces even while another field is invalid (no probe for a bad env, nor for untrusted code)."""
        spec = self._env_spec(env)
        if spec is None:
            return ""
        module = code_module(spec)
        if module and not is_trusted(module):
            return f"this preset runs code from {module}: Launch asks before it runs"
        found = self.spaces.get(spec)
        if found is None:
            return f"reading the spaces of {spec.label}\u2026"
        return spaces_text(found[0]) if found[0] is not None else ""
