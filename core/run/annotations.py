"""What the user says about a run: a display name, tags and a note, in ``annotations.json``.

The file is the user's own (the worker owns ``status.json`` and never touches this one); it is
replaced atomically. Renaming a run changes its display name, never its folder: the run id stays
what scripts, exports and the queue refer to. Every value has a limit, and a bad one is refused
naming the field, the value and the fix; a broken file reads as no annotations, never as an error
that hides the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.run.layout import RunDir
from core.util.files import read_json, write_json_atomic

MAX_NAME = 80
MAX_TAGS = 20
MAX_NOTE = 4000
TAG_RE = re.compile(r"^[^\W_][\w.+-]{0,31}$")  # a word: letters (any script), digits, '.', '+', '-', '_'


class AnnotationError(ValueError):
    """A display name, tag or note that cannot be kept, with what to do instead."""


@dataclass(frozen=True)
class Annotations:
    display_name: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"display_name": self.display_name, "tags": list(self.tags), "note": self.note}


def check_name(name: str | None) -> str | None:
    name = (name or "").strip()
    if len(name) > MAX_NAME:
        raise AnnotationError(f"display name: {len(name)} characters; use at most {MAX_NAME}")
    if any(ch in name for ch in "\n\r\t"):
        raise AnnotationError("display name: one line without tabs; put longer text in the note")
    return name or None


def check_tag(tag: str) -> str:
    tag = tag.strip()
    if not TAG_RE.match(tag):
        raise AnnotationError(f"tag {tag!r}: one word of at most 32 letters, digits, '.', '+', '-' or '_', "
                              "starting with a letter or digit (e.g. night-3, lr-sweep)")
    return tag


def check_note(note: str | None) -> str:
    note = (note or "").strip()
    if len(note) > MAX_NOTE:
        raise AnnotationError(f"note: {len(note)} characters; use at most {MAX_NOTE}")
    return note


def read_annotations(run_dir: Path) -> Annotations:
    """The run's annotations; none when the file is missing or unreadable."""
    data = read_json(RunDir(run_dir).annotations, default=None)
    if not isinstance(data, dict):
        return Annotations()
    try:
        tags = tuple(dict.fromkeys(check_tag(str(t)) for t in data.get("tags") or [] if isinstance(t, str)))
        return Annotations(check_name(data.get("display_name") if isinstance(data.get("display_name"), str) else None),
                           tags[:MAX_TAGS], check_note(data.get("note") if isinstance(data.get("note"), str) else ""))
    except AnnotationError:
        return Annotations()


def write_annotations(run_dir: Path, annotations: Annotations) -> Annotations:
    """Check and store ``annotations`` (atomically); returns what was stored."""
    tags = tuple(dict.fromkeys(check_tag(t) for t in annotations.tags))
    if len(tags) > MAX_TAGS:
        raise AnnotationError(f"tags: {len(tags)} of them; keep at most {MAX_TAGS}")
    clean = Annotations(check_name(annotations.display_name), tags, check_note(annotations.note))
    if not RunDir(run_dir).config.is_file():
        raise AnnotationError(f"{Path(run_dir).name} is not a run folder (no config.yaml)")
    write_json_atomic(RunDir(run_dir).annotations, clean.to_json())
    return clean


def annotate(run_dir: Path, *, name: str | None = None, clear_name: bool = False, add_tags: tuple[str, ...] = (),
             remove_tags: tuple[str, ...] = (), note: str | None = None) -> Annotations:
    """Change some of a run's annotations (the others stay) and store them."""
    old = read_annotations(run_dir)
    new = old
    if clear_name or name is not None:
        new = replace(new, display_name=None if clear_name else name)
    if add_tags or remove_tags:
        gone = {t.strip() for t in remove_tags}
        new = replace(new, tags=tuple(t for t in (*old.tags, *add_tags) if t.strip() not in gone))
    if note is not None:
        new = replace(new, note=note)
    return write_annotations(run_dir, new)
