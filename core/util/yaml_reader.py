"""The one way YAML from the user is read: safe loaders only, under limits, a mapping where one is expected.

Presets, ``--config`` files, plans, run folders' ``config.yaml``, ``--set`` values and the
window's YAML fields all come through here (docs/safety.md). Before anything is
built, the text is checked against ``Limits``: its size, how deep it nests, how many keys
and values it holds once every alias is expanded (a "billion laughs" file is a few hundred
bytes that expands to billions of values), and the length of each string; a ``!!binary`` value
(bytes, which no setting takes) is refused by name. The checks walk
the parser's event stream, which needs no recursion and holds one event at a time, so a
hostile file is refused in milliseconds and a few kilobytes of memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: the same grammar, faster
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BINARY = "tag:yaml.org,2002:binary"


class SafeNumberLoader(_Loader):  # type: ignore[misc]
    """The safe loader with numbers read as people write them in configs.

    YAML 1.1 reads ``1e6`` as a string (it wants ``1.0e6``) and ``0x10``, ``010`` and ``1:30``
    as integers in other bases; here ``1e6`` is the float 1000000.0 and anything but a plain
    decimal stays a string, so the schema can refuse it by name instead of taking 16 for ``0x10``.
    """


SafeNumberLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_INT, _FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
SafeNumberLoader.add_implicit_resolver(_INT, re.compile(r"^[-+]?(0|[1-9][0-9_]*)$"), list("-+0123456789"))
_FLOAT_TEXT = r"^[-+]?([0-9][0-9_]*(\.[0-9_]*)?|\.[0-9][0-9_]*)([eE][-+]?[0-9]+)?$|^[-+]?\.(inf|Inf|INF)$|^\.(nan|NaN|NAN)$"
SafeNumberLoader.add_implicit_resolver(_FLOAT, re.compile(_FLOAT_TEXT), list("-+0123456789."))


@dataclass(frozen=True)
class Limits:
    """What one YAML document may hold. The defaults are far above any real config or plan.

    ``max_nodes`` and ``max_keys`` count the document with every alias expanded, so an alias
    costs what it stands for; aliases are accepted only while that stays under the limits.
    """

    max_bytes: int = 1 << 20           # 1 MiB: a preset is ~1 KiB, a long plan ~50 KiB
    max_depth: int = 32                # nested mappings and lists
    max_nodes: int = 100_000           # keys, values and items, aliases expanded
    max_keys: int = 20_000             # mapping keys, aliases expanded
    max_string: int = 64 * 1024        # characters in one scalar
    what: str = "a YAML file"          # what is read, for messages
    fix: str = "a config, preset or plan is a few KiB: remove what does not belong in it"


DEFAULT_LIMITS = Limits()
# A --set value or a form field is one value typed by a person, not a file.
VALUE_LIMITS = Limits(max_bytes=64 * 1024, max_nodes=20_000, max_keys=5_000, what="one value",
                      fix="a setting's value is a few words or numbers: shorten it")


class YamlLimitError(ValueError):
    """YAML refused before it was built: names the source, the limit and the fix."""

    def __init__(self, source: str, problem: str, fix: str):
        self.source, self.problem, self.fix = source, problem, fix
        super().__init__(f"{source}: {problem}; {fix}")


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.1f} KiB" if n >= 1024 else f"{n} bytes"


def check_yaml(text: str, source: str = "YAML", limits: Limits = DEFAULT_LIMITS) -> None:
    """Raise ``YamlLimitError`` when ``text`` breaks ``limits``; ``yaml.YAMLError`` when it is not YAML."""
    size = len(text.encode("utf-8", errors="replace"))
    if size > limits.max_bytes:
        raise YamlLimitError(source, f"{_size(size)} is over the {_size(limits.max_bytes)} limit for {limits.what}",
                             limits.fix)
    counter = _Counter(source, limits)
    for event in yaml.parse(text, Loader=_Loader):
        counter.see(event)


class _Counter:
    """Counts a document's values and keys from its events, as if every alias were expanded."""

    def __init__(self, source: str, limits: Limits):
        self.source, self.limits = source, limits
        # one frame per open collection: [expanded nodes, expanded keys, children seen, is a mapping, anchor]
        self.frames: list[list[Any]] = []
        self.anchors: dict[str, tuple[int, int]] = {}
        self.nodes = self.keys = 0

    def see(self, event: yaml.Event) -> None:
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in self.anchors:
                raise YamlLimitError(self.source, f"the alias *{event.anchor} refers to an anchor that is not complete "
                                                  "(undefined or recursive)", "define &name before using *name, outside itself")
            self.add(*self.anchors[event.anchor])
        elif isinstance(event, yaml.ScalarEvent):
            if event.tag == _BINARY:  # bytes, which no setting takes and JSON cannot hold (a traceback downstream)
                raise YamlLimitError(self.source, f"a !!binary value ({_line(event)}) is binary data, which no setting "
                                                  "takes", "write the value as text, without the !!binary tag")
            if len(event.value) > self.limits.max_string:
                raise YamlLimitError(self.source, f"a string of {len(event.value):,} characters ({_line(event)}) is over "
                                                  f"the {self.limits.max_string:,} character limit", "shorten it")
            self.add(1, 0)
            if event.anchor:
                self.anchors[event.anchor] = (1, 0)
        elif isinstance(event, yaml.CollectionStartEvent):
            if len(self.frames) >= self.limits.max_depth:
                raise YamlLimitError(self.source, f"nests deeper than {self.limits.max_depth} levels ({_line(event)})",
                                     "flatten it: a config nests four levels at most")
            self.frames.append([1, 0, 0, isinstance(event, yaml.MappingStartEvent), event.anchor])
        elif isinstance(event, yaml.CollectionEndEvent):
            n, k, _, _, anchor = self.frames.pop()
            self.add(n, k)
            if anchor:
                self.anchors[anchor] = (n, k)

    def add(self, n: int, k: int) -> None:
        """A child of ``n`` values (``k`` of them keys) completes in the open collection."""
        if self.frames:
            frame = self.frames[-1]
            if frame[3] and frame[2] % 2 == 0:  # a mapping's even children are its keys
                k += n
            frame[0] += n
            frame[1] += k
            frame[2] += 1
        else:
            self.nodes += n
            self.keys += k
        if self.nodes + sum(f[0] for f in self.frames) > self.limits.max_nodes:
            raise YamlLimitError(self.source, f"holds more than {self.limits.max_nodes:,} values once its aliases (*name) "
                                              "are expanded", "write the values out without aliases, or split the file")
        if self.keys + sum(f[1] for f in self.frames) > self.limits.max_keys:
            raise YamlLimitError(self.source, f"holds more than {self.limits.max_keys:,} keys",
                                 "a config, preset or plan has at most a few hundred: remove the rest")


def _line(event: yaml.Event) -> str:
    return f"line {event.start_mark.line + 1}" if event.start_mark else "line ?"


def load_yaml(text: str, source: str = "YAML value", limits: Limits = VALUE_LIMITS) -> Any:
    """Parse YAML text with the safe loader under ``limits``, numbers read as ``SafeNumberLoader`` reads them.

    ``YamlLimitError`` (a ``ValueError``) when a limit is broken; ``yaml.YAMLError`` on bad syntax.
    """
    check_yaml(text, source, limits)
    return yaml.load(text, Loader=SafeNumberLoader)  # noqa: S506 - a safe loader (CSafeLoader or SafeLoader)


def read_yaml_text(path: Path, limits: Limits = DEFAULT_LIMITS) -> str:
    """A YAML file's text, refusing a file over ``limits.max_bytes`` before reading it (``ValueError``)."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(limits.max_bytes + 1)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limits.max_bytes:
        raise YamlLimitError(str(path), f"the file is over the {_size(limits.max_bytes)} limit for {limits.what}",
                             f"{limits.fix}; is this the right file?")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def read_yaml(path: Path, limits: Limits = DEFAULT_LIMITS) -> Any:
    """A YAML file's content under ``limits``; ``ValueError`` says what is wrong, naming the file."""
    text = read_yaml_text(path, limits)
    try:
        return load_yaml(text, str(path), limits)
    except YamlLimitError:
        raise
    except yaml.YAMLError as exc:
        raise ValueError(f"cannot read YAML from {path}: {_first_lines(exc)}") from None


def read_yaml_mapping(path: Path, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """A YAML file that must hold a mapping (safe loader, ``limits``); ``ValueError`` says what is wrong."""
    data = read_yaml(path, limits)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of settings, got {type(data).__name__}")
    return data


def _first_lines(exc: BaseException, n: int = 3) -> str:
    return " ".join(str(exc).splitlines()[:n])
