"""Config problems that name the field (its dotted ``--set`` path), the value and the fix."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldIssue:
    """One problem with one config field, addressed by its dotted ``--set`` path."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


class ConfigError(ValueError):
    """A config that cannot be used; ``issues`` lists every problem found."""

    def __init__(self, issues: list[FieldIssue], source: str = ""):
        self.issues = issues
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__(prefix + "; ".join(str(i) for i in issues))


class CrossFieldError(ValueError):
    """Raised inside pydantic validation by rules between fields; unpacked into their issues."""

    def __init__(self, issues: list[FieldIssue]):
        self.issues = issues
        super().__init__("; ".join(str(i) for i in issues))


@dataclass(frozen=True)
class FieldHint:
    """Advice about one field that SB3 accepts but warns about, with the value that fixes it.

    The CLI prints it as a warning naming the ``--set``; the window shows it with a button
    that sets ``path`` to ``value``.
    """

    path: str
    message: str
    value: object

    def __str__(self) -> str:
        return f"{self.path}: {self.message} (--set {self.path}={self.value})"
