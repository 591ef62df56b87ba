"""Layering: imports point one way, and nothing below the TUI imports Textual.

The rules are import-linter contracts in ``pyproject.toml`` (``[tool.importlinter]``): the
layers bottom to top, Textual forbidden below the TUI, no import cycle inside a package.
import-linter reads every import of every module (inside functions and under
``TYPE_CHECKING`` too). What it cannot see is what a module imports when it runs: each layer
below the TUI is imported here in a fresh interpreter, and Textual must not be loaded.
"""

from __future__ import annotations

import ast
import json
import os
import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import memtui

PACKAGE_DIR = Path(memtui.__file__).resolve().parent
PYPROJECT = PACKAGE_DIR.parent / "pyproject.toml"
MAX_MODULES = 16  # a package holding more wants splitting by concern


def contracts() -> list[dict]:
    return tomllib.loads(PYPROJECT.read_text("utf-8"))["tool"]["importlinter"]["contracts"]


def layers() -> list[list[str]]:
    """The layers, top first, each a list of package names (``memtui.<name>``)."""
    contract = next(c for c in contracts() if c["type"] == "layers")
    return [[f"memtui.{name.strip()}" for name in layer.split("|")] for layer in contract["layers"]]


def below_the_tui() -> list[str]:
    contract = next(c for c in contracts() if c["type"] == "forbidden" and c["forbidden_modules"] == ["textual"])
    return list(contract["source_modules"])


def lint_imports(project: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """import-linter on ``project`` (its pyproject.toml), in a fresh interpreter."""
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True))"
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=project,
        env={**os.environ, **env},
    )


def test_the_import_contracts_hold():
    result = lint_imports(PYPROJECT.parent)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(contracts())} kept, 0 broken." in result.stdout


def test_every_package_is_a_layer_says_what_it_holds_and_is_not_too_big():
    named = {package for layer in layers() for package in layer}
    for info in pkgutil.iter_modules([str(PACKAGE_DIR)]):
        name = f"memtui.{info.name}"
        if info.name.startswith("_") and info.name != "__main__":
            continue
        assert name in named, f"{name} is in no layer of the import contract (pyproject.toml)"
        if not info.ispkg:
            continue
        folder = PACKAGE_DIR / info.name
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8"))) or ""
        assert len(doc) > 80, f"{name} needs an opening docstring saying what it holds"
        for sub in [folder, *(p for p in folder.rglob("*") if p.is_dir() and (p / "__init__.py").exists())]:
            count = len(list(sub.glob("*.py")))
            assert count <= MAX_MODULES, f"{sub.relative_to(PACKAGE_DIR)} holds {count} modules (at most {MAX_MODULES})"


def test_a_contract_that_is_broken_is_reported(tmp_path):
    """The contracts really bind: a copy of the package with one upward import breaks them."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(PACKAGE_DIR, copy / "memtui", ignore=shutil.ignore_patterns("__pycache__", "_bundled"))
    shutil.copy(PYPROJECT, copy / "pyproject.toml")
    with (copy / "memtui" / "field" / "trust.py").open("a") as handle:
        handle.write("\ndef _upward():\n    from memtui.tui import app  # noqa: F401\n")
    result = lint_imports(copy, PYTHONPATH=str(copy))
    assert result.returncode != 0
    assert "memtui.field.trust -> memtui.tui.app" in result.stdout


def submodules(package: str) -> list[str]:
    folder = PACKAGE_DIR.joinpath(*package.split(".")[1:])
    if not folder.is_dir():
        return [package]
    return [package] + [
        f"{package}.{m.name}" for m in pkgutil.walk_packages([str(folder)]) if not m.name.startswith("_")
    ]


def imported_after(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; report which memtui modules and Textual got imported."""
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


def test_every_layer_below_the_tui_imports_without_textual():
    packages = below_the_tui()
    modules = [module for package in packages for module in submodules(package)]
    assert len(modules) > 60, modules
    seen = imported_after("\n".join(f"import {m}" for m in modules))
    assert seen["textual"] == []
    assert [m for m in seen["memtui"] if m.startswith(("memtui.tui", "memtui.cli"))] == []


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


@pytest.mark.parametrize("module", ["memtui.session.session", "memtui.render.review"])
def test_the_core_and_the_renderers_load_without_textual(module):
    assert imported_after(f"import {module}")["textual"] == []
