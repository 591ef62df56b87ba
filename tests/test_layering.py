"""Layering: imports point one way, and nothing below the TUI imports Textual.

Bottom to top: ``memtui.errors``/``memtui.textsafety`` (the base), ``store``,
``field``, ``dialects`` (how each format reads into the model), then ``review``
and ``index`` (each on the model), then ``cli`` and ``tui``. Two kinds of proof:

- static: every ``import`` in every module (at the top, inside functions, under
  ``TYPE_CHECKING``) is read from the source and checked against the table
  below, and the module graph has no cycle;
- at run time: each layer's modules are imported in a fresh ``python -c``
  subprocess (so modules other tests imported do not count) and Textual must
  not be among what got loaded.
"""

from __future__ import annotations

import ast
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import memtui

PACKAGE_DIR = Path(memtui.__file__).resolve().parent

# Each layer and the layers it may import. "root" is the ``memtui`` package itself
# (``__version__``); "base" is ``memtui.errors`` and ``memtui.textsafety``.
LAYER_OF_MODULE = {
    "memtui": "root",
    "memtui.__main__": "entry",
    "memtui.errors": "base",
    "memtui.textsafety": "base",
    "memtui.resources": "resources",
}
LAYER_OF_PACKAGE = {
    "memtui.store": "store",
    "memtui.field": "field",
    "memtui.dialects": "dialects",
    "memtui.review": "review",
    "memtui.index": "index",
    "memtui.cli": "cli",
    "memtui.tui": "tui",
}
ALLOWED = {
    "root": set(),
    "base": {"root"},
    "resources": {"root"},
    "store": {"root", "base"},
    "field": {"root", "base", "store"},
    "dialects": {"root", "base", "store", "field"},
    "review": {"root", "base", "store", "field", "dialects"},
    "index": {"root", "base", "store", "field", "dialects"},
    "cli": {"root", "base", "resources", "store", "field", "dialects", "review", "index", "tui"},
    "tui": {"root", "base", "resources", "store", "field", "dialects", "review", "index"},
    "entry": {"cli"},
}
BELOW_THE_TUI = ("memtui.store", "memtui.field", "memtui.dialects", "memtui.review", "memtui.index")


def all_modules() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for path in PACKAGE_DIR.rglob("*.py"):
        rel = path.relative_to(PACKAGE_DIR.parent).with_suffix("")
        parts = list(rel.parts)
        if "_bundled" in parts:
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def layer_of(module: str) -> str:
    if module in LAYER_OF_MODULE:
        return LAYER_OF_MODULE[module]
    for package, layer in LAYER_OF_PACKAGE.items():
        if module == package or module.startswith(package + "."):
            return layer
    raise AssertionError(f"{module} belongs to no layer: add its package to LAYER_OF_PACKAGE")


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Every memtui module ``module`` imports, wherever the import statement is."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([base] if base else []))
            if base != "memtui" and not base.startswith("memtui."):
                continue
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in modules else base)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "memtui" or alias.name.startswith("memtui."):
                    found.add(alias.name)
    found.discard(module)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = all_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def test_every_module_belongs_to_a_layer_and_every_package_says_what_it_holds():
    for name, path in all_modules().items():
        layer_of(name)
        if path.name == "__init__.py" and name in LAYER_OF_PACKAGE:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            assert len(doc) > 80, f"{name} needs an opening docstring saying what it holds"
            assert "import" in doc.lower(), f"{name}'s docstring must say what it may import"


def test_imports_point_one_way():
    wrong = []
    for module, imported in sorted(import_graph().items()):
        mine = layer_of(module)
        for target in sorted(imported):
            theirs = layer_of(target)
            if theirs != mine and theirs not in ALLOWED[mine]:
                wrong.append(f"{module} ({mine}) imports {target} ({theirs})")
    assert wrong == []


def test_the_module_graph_has_no_cycle():
    graph = import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in graph:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    assert cycles == []


def test_the_static_check_sees_imports_inside_functions(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from memtui.field.field import Field\n"
        "def f():\n    from memtui.tui import app\n    import memtui.index.service\n"
    )
    modules = {"memtui.field.field": module, "memtui.tui.app": module, "memtui.index.service": module}
    assert imports_of("memtui.store.m", module, modules) == {
        "memtui.field.field",
        "memtui.tui.app",
        "memtui.index.service",
    }


def submodules(package: str) -> list[str]:
    folder = PACKAGE_DIR.joinpath(*package.split(".")[1:])
    return [package] + [
        f"{package}.{m.name}" for m in pkgutil.walk_packages([str(folder)]) if not m.name.startswith("_")
    ]


def imported_after(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; report which memtui layers and Textual got imported."""
    probe = (
        "import json, sys\n"
        f"{code}\n"
        "mods = sorted(sys.modules)\n"
        "print(json.dumps({'textual': [m for m in mods if m == 'textual' or m.startswith('textual.')],\n"
        "                  'memtui': [m for m in mods if m.startswith('memtui.')]}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=PACKAGE_DIR.parent,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("package", BELOW_THE_TUI)
def test_every_layer_below_the_tui_imports_without_textual(package):
    modules = submodules(package)
    assert len(modules) > 2, modules
    seen = imported_after("\n".join(f"import {m}" for m in modules))
    assert seen["textual"] == []
    allowed = {p for p, layer in LAYER_OF_PACKAGE.items() if layer in ALLOWED[layer_of(package)] | {layer_of(package)}}
    upward = [
        m
        for m in seen["memtui"]
        if m.count(".") and ".".join(m.split(".")[:2]) in LAYER_OF_PACKAGE and ".".join(m.split(".")[:2]) not in allowed
    ]
    assert upward == []


def test_the_cli_outside_the_tui_does_not_import_textual(tmp_path):
    from memtui.cli import COMMAND_MODULES

    field = tmp_path / "f"
    (field / "notes").mkdir(parents=True)
    (field / "notes" / "a.md").write_text("---\nid: a\nsubject: s\n---\nA fact with a tag. [stated]\n")
    imports = "\n".join(f"import {m}" for m in ("memtui.cli", *COMMAND_MODULES))
    run = (
        "import contextlib, io\n"
        "from memtui.cli import main, build_parser\n"
        "build_parser()\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['check', {str(field)!r}, '--json']) == 0\n"
        f"    assert main(['history', {str(field)!r}, 's', '--json']) == 0\n"
        f"    assert main(['export', {str(field)!r}, {str(tmp_path / 'f.memoryfield.zip')!r}]) == 0\n"
    )
    seen = imported_after(imports + "\n" + run)
    assert seen["textual"] == []
    assert [m for m in seen["memtui"] if m.startswith("memtui.tui")] == []
