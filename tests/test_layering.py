"""Layering: the memory model (and the index, and the CLI outside the TUI) never import Textual.

Each check runs in a fresh ``python -c`` subprocess, so modules other tests imported do not count.
"""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import memtui

PACKAGE_DIR = Path(memtui.__file__).resolve().parent


def submodules(package: str) -> list[str]:
    folder = PACKAGE_DIR.joinpath(*package.split(".")[1:])
    return [package] + [f"{package}.{m.name}" for m in pkgutil.iter_modules([str(folder)])]


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


def test_memtui_field_and_every_field_module_import_without_textual():
    modules = submodules("memtui.field")
    assert "memtui.field.safe_write" in modules and "memtui.field.history" in modules
    seen = imported_after("\n".join(f"import {m}" for m in modules))
    assert seen["textual"] == []
    # The model is the bottom layer: it imports no other memtui layer.
    upward = [m for m in seen["memtui"] if m.startswith(("memtui.index", "memtui.tui", "memtui.cli"))]
    assert upward == []


def test_memtui_index_imports_without_textual():
    modules = submodules("memtui.index") if (PACKAGE_DIR / "index").is_dir() else []
    if len(modules) < 2:  # the package itself and at least one module
        pytest.skip("memtui/index/ has no modules yet; nothing to import")
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
