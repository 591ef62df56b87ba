"""Golden recall tests: the library function and ``memtui recall-test``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.index import GoldenFileError
from memtui.index.recall import load_golden
from tests.helpers_index import open_service


def test_the_sample_fields_golden_file_passes(sample_field: Path) -> None:
    svc = open_service(sample_field)
    try:
        result = svc.recall_test(load_golden(sample_field / "golden.yaml"))
        assert result.passed and result.recall == 1.0 and result.k == 5
        assert len(result.questions) == 19
        first = result.questions[0]
        assert first.ranks == {"decisions/public-api-trpc.md": 1}
    finally:
        svc.close()


def test_cli_prints_recall_per_question_and_overall(sample_field: Path, capsys) -> None:
    assert main(["recall-test", str(sample_field)]) == 0
    out = capsys.readouterr().out
    assert "overall recall@5 1.000" in out and "passed" in out
    assert "what is our public API decision" in out


def test_cli_fails_below_min_recall(sample_field: Path, tmp_path: Path, capsys) -> None:
    golden = tmp_path / "hard.yaml"
    golden.write_text(
        "min_recall: 0.75\nk: 3\nquestions:\n"
        "  - question: public API decision\n    expect: [mem_9tx5]\n"  # by id: found
        "  - question: zebra unicorn\n    expect: [decisions/public-api-rest.md]\n"  # never found
    )
    assert main(["recall-test", str(sample_field), str(golden), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["recall"] == 0.5 and not data["passed"] and data["k"] == 3
    assert data["questions"][0]["ranks"] == {"mem_9tx5": 1}
    assert data["questions"][1]["ranks"] == {"decisions/public-api-rest.md": None}
    assert main(["recall-test", str(sample_field), str(golden)]) == 1
    assert "FAILED" in capsys.readouterr().out


def test_cli_k_overrides_the_file(sample_field: Path, capsys) -> None:
    main(["recall-test", str(sample_field), "--k", "1", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["k"] == 1 and all(len(q["top"]) <= 1 for q in data["questions"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("questions: [", "YAML does not parse"),
        ("just a string", "not a mapping"),
        ("questions:\n  - expect: [a.md]\n", "has no 'question' text"),
        ("questions:\n  - question: q\n    expect: {a: 1}\n", "'expect' must be a list"),
        ("min_recall: 2\nquestions: []\n", "min_recall"),
        ("k: 0\nquestions: []\n", "k in"),
        ("questions:\n  - &a {question: q}\n  - *a\n", "aliases are not accepted"),
    ],
)
def test_a_malformed_golden_file_is_a_clear_error(
    tmp_path: Path, text: str, message: str, sample_field, capsys
) -> None:
    golden = tmp_path / "golden.yaml"
    golden.write_text(text)
    if message == "questions":  # aliases are fine for the safe loader; the file still loads
        assert load_golden(golden).questions[0].question == "q"
        return
    with pytest.raises(GoldenFileError) as info:
        load_golden(golden)
    assert message in info.value.message and info.value.hint
    assert main(["recall-test", str(sample_field), str(golden)]) == 1
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err


def test_a_missing_golden_file_is_a_clear_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "field").mkdir()
    assert main(["recall-test", str(tmp_path / "field")]) == 1
    assert "no golden file" in capsys.readouterr().err
