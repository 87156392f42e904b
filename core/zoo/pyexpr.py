"""rl_zoo3's Python-ish strings, read with ``ast`` and never evaluated.

The zoo writes ``policy_kwargs: "dict(net_arch=[64, 64], activation_fn=nn.ReLU)"`` and evaluates
it; here the same text is parsed into plain data: literals, lists, tuples, ``dict(...)`` calls and
``{...}`` displays, with dotted names (``nn.ReLU``, ``th.optim.Adam``) kept as ``Name("nn.ReLU")``.
Anything else (calls of other functions, arithmetic, lambdas) is refused with ``ValueError``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

MAX_LENGTH = 10_000


@dataclass(frozen=True)
class Name:
    """A dotted name in the text (``nn.ReLU``), left unresolved."""

    dotted: str

    def __str__(self) -> str:
        return self.dotted


def parse_python_value(text: str) -> Any:
    """``"dict(a=1, b=[2, 3], c=nn.ReLU)"`` -> ``{"a": 1, "b": [2, 3], "c": Name("nn.ReLU")}``."""
    if len(text) > MAX_LENGTH:
        raise ValueError(f"expression longer than {MAX_LENGTH:,} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not a Python expression ({exc.msg})") from None
    return _value(tree.body)


def _value(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) and isinstance(node.operand, ast.Constant):
        number = node.operand.value
        if isinstance(number, (int, float)) and not isinstance(number, bool):
            return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_value(e) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise ValueError("'**' in a dict is not supported")
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
    if isinstance(node, ast.Call) and _dotted(node.func) == "dict" and not node.args:
        if any(kw.arg is None for kw in node.keywords):
            raise ValueError("'**' in dict(...) is not supported")
        return {str(kw.arg): _value(kw.value) for kw in node.keywords}
    dotted = _dotted(node)
    if dotted is not None:
        return {"True": True, "False": False, "None": None}.get(dotted, Name(dotted))
    raise ValueError(f"{ast.unparse(node)!r} is not plain data (only literals, lists, dict(...) and names are read)")


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None
