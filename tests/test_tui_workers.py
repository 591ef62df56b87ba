"""Every ``@work`` of the app names its description.

Without one, Textual's decorator builds a description from the ``repr`` of every
argument at each call, on the calling thread: for ``save_rows(analysis)`` that was the
repr of 10,000 page rows and every finding, 1.3 s of the UI thread per analysis while
an agent wrote pages (seen with py-spy in the write-storm benchmark).
"""

from __future__ import annotations

import ast
from pathlib import Path

TUI = Path(__file__).resolve().parent.parent / "memtui" / "tui"


def test_every_worker_decorator_names_its_description() -> None:
    missing = []
    seen = 0
    for path in sorted(TUI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for decorator in node.decorator_list:
                call = decorator if isinstance(decorator, ast.Call) else None
                name = getattr(call.func if call else decorator, "id", getattr(call.func if call else decorator, "attr", None))
                if name != "work":
                    continue
                seen += 1
                if call is None or not any(k.arg == "description" for k in call.keywords):
                    missing.append(f"{path.relative_to(TUI)}:{node.lineno} {node.name}")
    assert seen > 20
    assert missing == []
