"""Plain Markdown notes: what a page is when no memory format claims it and memtui's own is not in use.

Nothing is read into them beyond what every page has (frontmatter, headings,
links, the ``status`` words and ``supersedes``/``superseded_by`` every format
shares). memtui's own conventions are not imposed on them: no source-tag rules,
no ``kind`` vocabulary, no lesson gate, no ``subject`` contradictions (an e-mail
memo's ``subject:`` is not a memory subject).
"""

from __future__ import annotations

from pathlib import Path

from memtui.dialects.base import Applied, Dialect
from memtui.field.page import PageInfo


class Markdown(Dialect):
    name = "markdown"
    title = "plain Markdown notes"

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
