"""An issue is one line, whatever the user's file holds in a key: every character ``str.splitlines`` splits on is
shown escaped (a YAML "\\N" key is NEL, U+0085: a plan with it once printed 8 lines for 6 issues)."""

from __future__ import annotations

from core.config.errors import FieldIssue, issues_text


def test_every_line_break_python_knows_is_escaped_in_an_issue():
    breaks = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    issues = [FieldIssue(f"jobs.{i}.{ch}", "Extra inputs are not permitted") for i, ch in enumerate(breaks)]
    for issue in issues:
        assert len(str(issue).splitlines()) == 1, repr(str(issue))
    assert str(issues[7]) == "jobs.7.\\x85: Extra inputs are not permitted"
    assert len(issues_text(issues, shown=len(issues), sep="\n").splitlines()) == len(issues)
