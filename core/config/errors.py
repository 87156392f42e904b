"""Config problems that name the field (its dotted ``--set`` path), the value and the fix."""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # what str.splitlines splits on: C1 (NEL \x85) too


def one_line(text: str) -> str:
    """``text`` with control characters (a newline or carriage return in a key) shown escaped: one
    issue is one line, whatever the user's file holds."""
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


@dataclass(frozen=True)
class FieldIssue:
    """One problem with one config field, addressed by its dotted ``--set`` path."""

    path: str
    message: str

    def __str__(self) -> str:
        return one_line(f"{self.path}: {self.message}" if self.path else self.message)


SHOWN_ISSUES = 5  # a message lists this many problems, then "and N more"


def issues_text(issues: list[FieldIssue], shown: int = SHOWN_ISSUES, sep: str = "; ") -> str:
    """The first ``shown`` issues joined, then how many more there are: error output stays short."""
    text = sep.join(str(i) for i in issues[:shown])
    more = len(issues) - shown
    return text + (f"{sep}and {more:,} more" if more > 0 else "")


class ConfigError(ValueError):
    """A config that cannot be used; ``issues`` lists every problem found (the message, the first few)."""

    def __init__(self, issues: list[FieldIssue], source: str = ""):
        self.issues = issues
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__(prefix + issues_text(issues))


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
