"""Golden recall tests: questions and the pages a search must return in its top k.

``golden.yaml`` (at the top of a field)::

    min_recall: 1.0      # optional, default 1.0
    k: 5                 # optional, default 5
    questions:
      - question: what is our public API decision
        expect: [decisions/public-api-trpc.md]

An expected page may be named by path or by id. A question's recall@k is the
share of its expected pages found in the top k; the overall recall is the mean
over questions. Questions are searched as plain words (no query syntax), so a
question mark or a capitalised "OR" is just text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memtui.errors import FrontmatterError
from memtui.field.frontmatter import parse_yaml_mapping
from memtui.index.errors import GoldenFileError
from memtui.index.model import SearchHit

GOLDEN_FILE = "golden.yaml"
DEFAULT_K = 5
MAX_GOLDEN_BYTES = 1024 * 1024


@dataclass(slots=True)
class GoldenQuestion:
    question: str
    expect: list[str]


@dataclass(slots=True)
class GoldenFile:
    path: Path
    questions: list[GoldenQuestion]
    min_recall: float = 1.0
    k: int = DEFAULT_K


@dataclass(slots=True)
class QuestionResult:
    question: str
    expect: list[str]
    ranks: dict[str, int | None]  # expected page -> 1-based rank in the top k, or None
    top: list[str]  # paths returned, best first

    @property
    def recall(self) -> float:
        if not self.expect:
            return 1.0
        return sum(1 for rank in self.ranks.values() if rank is not None) / len(self.expect)

    def to_json(self) -> dict:
        return {
            "question": self.question,
            "expect": self.expect,
            "ranks": self.ranks,
            "top": self.top,
            "recall": round(self.recall, 4),
        }


@dataclass(slots=True)
class RecallResult:
    k: int
    min_recall: float
    questions: list[QuestionResult] = field(default_factory=list)

    @property
    def recall(self) -> float:
        if not self.questions:
            return 1.0
        return sum(q.recall for q in self.questions) / len(self.questions)

    @property
    def passed(self) -> bool:
        return self.recall + 1e-9 >= self.min_recall

    def to_json(self) -> dict:
        return {
            "k": self.k,
            "min_recall": self.min_recall,
            "recall": round(self.recall, 4),
            "passed": self.passed,
            "questions": [q.to_json() for q in self.questions],
        }


def load_golden(path: Path) -> GoldenFile:
    """Read and check a golden file; a problem is a ``GoldenFileError`` naming it."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise GoldenFileError(f"no golden file at {path}", "write one (see golden.yaml in the sample field)") from None
    except OSError as exc:
        raise GoldenFileError(f"cannot read {path}: {exc.strerror or exc}", "check the path") from None
    if len(data) > MAX_GOLDEN_BYTES:
        raise GoldenFileError(f"{path.name} is over {MAX_GOLDEN_BYTES // 1024} KB", "split it") from None
    try:
        doc = parse_yaml_mapping(data.decode("utf-8"), what=path.name, max_bytes=MAX_GOLDEN_BYTES)
    except UnicodeDecodeError:
        raise GoldenFileError(f"{path.name} is not UTF-8 text", "save it as UTF-8") from None
    except FrontmatterError as exc:
        where = f" (line {exc.line})" if exc.line else ""
        raise GoldenFileError(f"{exc.message}{where}", exc.hint) from None
    hint = "expected: questions: [{question: ..., expect: [page.md, ...]}, ...]"
    if not isinstance(doc, dict) or not isinstance(doc.get("questions"), list):
        raise GoldenFileError(f"{path.name} has no 'questions' list", hint)
    questions: list[GoldenQuestion] = []
    for number, entry in enumerate(doc["questions"], start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("question"), str):
            raise GoldenFileError(f"question {number} in {path.name} has no 'question' text", hint)
        expect = entry.get("expect", [])
        if isinstance(expect, str):
            expect = [expect]
        if not isinstance(expect, list) or not all(isinstance(e, str) for e in expect):
            raise GoldenFileError(f"question {number} in {path.name}: 'expect' must be a list of pages", hint)
        questions.append(GoldenQuestion(entry["question"], list(expect)))
    min_recall = doc.get("min_recall", 1.0)
    k = doc.get("k", DEFAULT_K)
    if not isinstance(min_recall, (int, float)) or isinstance(min_recall, bool) or not 0 <= min_recall <= 1:
        raise GoldenFileError(f"min_recall in {path.name} must be a number from 0 to 1", "for example 0.9")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise GoldenFileError(f"k in {path.name} must be a positive whole number", "for example 5")
    return GoldenFile(path, questions, float(min_recall), k)


def run_recall(
    golden: GoldenFile, search: Callable[[str, int], list[SearchHit]], *, k: int | None = None
) -> RecallResult:
    """Ask each question through ``search(question, k)`` and score the top k."""
    k = k or golden.k
    result = RecallResult(k=k, min_recall=golden.min_recall)
    for item in golden.questions:
        hits = search(item.question, k)[:k]
        ranks: dict[str, int | None] = {}
        for expected in item.expect:
            wanted = expected.strip().removeprefix("./")
            ranks[expected] = next((n for n, hit in enumerate(hits, start=1) if wanted in (hit.path, hit.id)), None)
        result.questions.append(QuestionResult(item.question, item.expect, ranks, [h.path for h in hits]))
    return result
