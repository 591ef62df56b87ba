"""Fences: what a module may reach into.

A module may use the private names (``_name``) it defines itself, never another module's,
nor a library's private modules or attributes, except in the one place that library is
fenced in: Whoosh in ``memtui/index/engine/``, Textual in ``memtui/tui/compat.py``,
watchdog in ``memtui/index/watcher.py`` (which extends its inotify classes).
"""

from __future__ import annotations

import ast
from pathlib import Path

import memtui

PACKAGE = Path(memtui.__file__).resolve().parent
FENCES = ("index/engine/", "tui/compat.py", "index/watcher.py")
# The standard library's names that are public API despite their underscore.
PUBLIC_UNDERSCORED = {"_SubParsersAction", "_exit", "_asdict", "_replace", "_fields", "_make", "_field_defaults"}


def defined_privates(tree: ast.AST) -> set[str]:
    """The private names a module defines: its functions, classes, module names, arguments,
    attributes it sets on ``self``/``cls`` and its ``__slots__``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                names.add(node.attr)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
                    if target.id == "__slots__" and isinstance(node.value, ast.Tuple | ast.List):
                        names.update(e.value for e in node.value.elts if isinstance(e, ast.Constant))
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {name for name in names if isinstance(name, str) and name.startswith("_")}


def foreign_privates(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = defined_privates(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            value = node.value
            if isinstance(value, ast.Name) and value.id in ("self", "cls"):
                continue
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "super":
                continue
            if node.attr not in own and node.attr not in PUBLIC_UNDERSCORED:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module and not node.module.startswith("memtui"):
            if any(part.startswith("_") and part != "__future__" for part in node.module.split(".")):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} from {node.module}")
            found.extend(
                f"{path.relative_to(PACKAGE)}:{node.lineno} import {alias.name}"
                for alias in node.names
                if alias.name.startswith("_") and alias.name not in PUBLIC_UNDERSCORED
            )
    return found


def test_no_module_reaches_into_another_modules_private_names():
    outside = []
    fenced = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_bundled" in path.parts:
            continue
        found = foreign_privates(path)
        rel = str(path.relative_to(PACKAGE))
        (fenced if rel.startswith(FENCES) else outside).extend(found)
    assert outside == []
    assert fenced, "the fences hold every private use: an empty list means this test reads nothing"


def test_the_check_sees_a_reach_into_a_private_name(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "from textual.widgets._footer import FooterKey\n"
        "def f(field, info):\n    field._lookup = None\n    return info._str('x'), self_ok()\n"
        "class A:\n    def __init__(self):\n        self._mine = 1\n    def g(self, other):\n        return other._mine\n"
    )
    found = [line.split(" ", 1)[1] for line in foreign_privates_at(module)]
    assert found == ["from textual.widgets._footer", "._lookup", "._str"]


def foreign_privates_at(path: Path) -> list[str]:
    global PACKAGE
    saved, PACKAGE = PACKAGE, path.parent
    try:
        return foreign_privates(path)
    finally:
        PACKAGE = saved
