"""Claims as data (``memtui.field.claims``) and ``memtui claims``: fields, filters, inert output,
promotions in git revisions, line numbers in unusual pages, a page of thousands of claims."""

from __future__ import annotations

import json
import marshal
import re

import pytest

from memtui.dialects.open import open_field
from memtui.field import claims as claims_mod
from memtui.field.claims import field_claims
from memtui.store import signed_chunks
from tests.helpers_field import make_field, page, run_cli, run_cli_json
from tests.helpers_review import git, init_repo

CLAIM_KEYS = [
    "path",
    "line",
    "text",
    "tag",
    "cited",
    "citations",
    "line_status",
    "page_status",
    "trust",
    "promoted_from",
]

NOTES = {
    "notes/a.md": page(
        "id: a\ntitle: Queue\nsources:\n  - sessions/s.md#L1",
        "# Queue\n\n"
        "- ~~Use Redis for the queue [suggested]~~ superseded 2026-02-01\n"  # line 9
        "- Use Redis for the queue [stated]\n"  # line 10: promoted, cites nothing
        "- Postgres holds the jobs [cite:1]. [observed]\n"  # line 11: cited
        "- Workers might scale on queue depth [inferred]\n",  # line 12
    ),
    "people/b.md": "Dana leads engineering (kickoff 2026-01-14). [stated]\nDana could own hiring [suggested]\n",
    "sessions/s.md": "Maya: Postgres holds the jobs.\n",
}


@pytest.fixture(autouse=True)
def _wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def notes(tmp_path):
    return make_field(tmp_path / "f", NOTES)


def _claims(argv, capsys):
    code, data, err = run_cli_json(["claims", *argv], capsys)
    assert code == 0 and err == ""
    return data


def test_json_lists_every_claim_with_exactly_its_fields(notes, capsys):
    data = _claims([notes], capsys)
    assert all(list(item) == CLAIM_KEYS for item in data)
    by_line = {(c["path"], c["line"]): c for c in data}
    assert set(by_line) == {("notes/a.md", n) for n in (9, 10, 11, 12)} | {("people/b.md", 1), ("people/b.md", 2)}
    struck = by_line["notes/a.md", 9]
    assert (struck["tag"], struck["line_status"], struck["page_status"]) == ("suggested", "struck", "current")
    assert by_line["notes/a.md", 10] == {
        "path": "notes/a.md",
        "line": 10,
        "text": "Use Redis for the queue",
        "tag": "stated",
        "cited": False,
        "citations": [],
        "line_status": "current",
        "page_status": "current",
        "trust": "unknown",
        "promoted_from": "suggested",
    }
    assert by_line["notes/a.md", 11]["citations"] == ["sessions/s.md#L1"]
    assert by_line["people/b.md", 1]["citations"] == ["kickoff 2026-01-14"]  # a dated provenance on the line


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--tag", "stated"], {("notes/a.md", 10), ("people/b.md", 1)}),
        (["--tag", "suggested", "--tag", "inferred"], {("notes/a.md", 9), ("notes/a.md", 12), ("people/b.md", 2)}),
        (["--status", "superseded"], {("notes/a.md", 9)}),
        (["--status", "current", "--tag", "suggested"], {("people/b.md", 2)}),
        (["--uncited", "--tag", "stated"], {("notes/a.md", 10)}),
        (["--promoted"], {("notes/a.md", 10)}),
        (["--path", "people/*"], {("people/b.md", 1), ("people/b.md", 2)}),
        (["redis QUEUE"], {("notes/a.md", 9), ("notes/a.md", 10)}),  # every word, any case
        (["dana", "--tag", "suggested"], {("people/b.md", 2)}),
        (["no such words"], set()),
    ],
)
def test_each_filter(notes, capsys, argv, expected):
    data = _claims([notes, *argv], capsys)
    assert {(c["path"], c["line"]) for c in data} == expected


@pytest.mark.parametrize("argv", [["--tag", "decided"], ["--status", "stale"], ["--tag", "STATED"]])
def test_bad_tag_or_status_is_a_usage_error(notes, capsys, argv):
    with pytest.raises(SystemExit) as exc:
        run_cli(["claims", notes, *argv], capsys)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and ("suggested" in err or "superseded" in err)


def test_table_and_summary(notes, capsys):
    code, out, err = run_cli(["claims", notes], capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["tag", "line", "status", "cited", "promoted", "from", "text"]
    starts = [lines[0].index(h) for h in ("line", "status", "cited", "promoted", "text")]
    row = next(line for line in lines if "notes/a.md:10 " in line)
    assert [row[a:b].strip() for a, b in zip([0, *starts], [*starts, None])] == [
        "[stated]",
        "notes/a.md:10",
        "current",
        "no",
        "[suggested]",
        "Use Redis for the queue",
    ]
    for line in lines[1:-1]:  # aligned: every value starts under its header
        assert all(line[start - 2 : start] == "  " and line[start] != " " for start in starts[:3])
    assert "struck" in next(line for line in lines if "notes/a.md:9 " in line)
    assert (
        out.strip().splitlines()[-1] == "6 claims: 2 suggested, 1 inferred, 1 observed, 2 stated; 1 promoted, 4 uncited"
    )
    code, out, _ = run_cli(["claims", notes, "nothing like this"], capsys)
    assert out.strip() == "0 claims; 0 promoted, 0 uncited"


def test_hostile_text_is_shown_inert(tmp_path, capsys):
    hostile = "Deploy [bold]x[/] now \x1b[31mred\x1b[0m \x1b]0;title\x07 and \u202eevil [stated]\n"
    root = make_field(tmp_path / "f", {"notes/a.md": hostile, "notes/\x1b[2Jclear.md": "Odd name [observed]\n"})
    code, out, _ = run_cli(["claims", root], capsys)
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "[bold]x[/]" in out  # shown as typed, not as markup
    assert "clear.md:1" in out
    data = _claims([root], capsys)  # JSON keeps the text (escaped by json, ensure_ascii)
    assert any("\x1b[31m" in c["text"] for c in data)


def test_on_a_terminal_only_memtuis_own_colours_are_written(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "100")
    hostile = "Deploy [bold]x[/] now \x1b[31mred\x1b[0m \x1b]0;title\x07 and \u202eevil " + "long " * 40 + "[stated]\n"
    root = make_field(tmp_path / "f", {"notes/a.md": hostile, "notes/b.md": "- ~~Old idea [suggested]~~\n"})
    code, out, _ = run_cli(["claims", root], capsys)
    assert code == 0
    assert "\x1b[31mred" not in out and "\x1b]0;" not in out and "\x07" not in out and "\u202e" not in out
    assert "\x1b[1;32m[stated]" in out  # the tag in its colour
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)
    assert "[bold]x[/]" in plain
    assert all(len(line) <= 100 for line in plain.splitlines())  # long text cut to the terminal's width


# ------------------------------------------------------------------ promotions in git


@pytest.mark.parametrize("commit", [True, False], ids=["committed", "on-disk-only"])
def test_promotion_since_the_previous_git_revision(tmp_path, capsys, commit):
    root = make_field(tmp_path / "f", {"notes/a.md": "- Ship the beta in May [suggested]\n- Other line [observed]\n"})
    init_repo(root)
    (root / "notes/a.md").write_text("- Ship the beta in May [stated]\n- Other line [observed]\n", encoding="utf-8")
    if commit:
        git(root, "commit", "-qam", "decided")
    data = _claims([root, "--promoted"], capsys)
    assert [(c["path"], c["line"], c["promoted_from"], c["tag"]) for c in data] == [
        ("notes/a.md", 1, "suggested", "stated")
    ]
    assert [c.promoted_from for c in field_claims(open_field(root), git=False)] == [None, None]


def test_a_weaker_tag_later_is_no_promotion(tmp_path, capsys):
    root = make_field(tmp_path / "f", {"notes/a.md": "- Ship the beta in May [stated]\n"})
    init_repo(root)
    (root / "notes/a.md").write_text("- Ship the beta in May [inferred]\n", encoding="utf-8")
    git(root, "commit", "-qam", "less sure")
    assert _claims([root, "--promoted"], capsys) == []


# ------------------------------------------------------------------ line numbers


def test_line_numbers_with_frontmatter_crlf_and_a_bom(tmp_path, capsys):
    lf = "---\nid: x\ntitle: X\n---\n# X\n\nFirst fact here [observed]\n\n- Second fact here [stated]\n"
    root = make_field(
        tmp_path / "f",
        {
            "notes/lf.md": lf,
            "notes/crlf.md": lf.replace("\n", "\r\n"),
            "notes/bom.md": "\ufeff" + lf,
            "notes/bom-crlf.md": ("\ufeff" + lf).replace("\n", "\r\n"),
        },
    )
    data = _claims([root], capsys)
    lines = {}
    for c in data:
        lines.setdefault(c["path"], []).append((c["line"], c["text"]))
    expected = [(7, "First fact here"), (9, "Second fact here")]
    assert lines == {p: expected for p in ("notes/lf.md", "notes/crlf.md", "notes/bom.md", "notes/bom-crlf.md")}
    for path, found in lines.items():  # the line number points at the line as an editor counts them
        file_lines = (root / path).read_bytes().decode("utf-8-sig").splitlines()
        assert all(text in file_lines[number - 1] for number, text in found)


def test_a_page_with_thousands_of_claims(tmp_path, capsys):
    count = 5000
    tags = claims_mod.TAGS
    body = "".join(f"- Fact number {n} about shipments [{tags[n % 4]}]\n" for n in range(count))
    root = make_field(tmp_path / "f", {"notes/big.md": page("id: big\ntitle: Big", "# Big\n\n" + body)})
    data = _claims([root], capsys)
    assert len(data) == count
    assert [c["line"] for c in data] == list(range(7, 7 + count))
    assert all(c["text"] == f"Fact number {n} about shipments" and c["tag"] == tags[n % 4] for n, c in enumerate(data))
    assert len(_claims([root, "--tag", "stated"], capsys)) == count // 4
    code, out, _ = run_cli(["claims", root, "number 4999"], capsys)
    assert "notes/big.md:5006" in out and out.strip().splitlines()[-1].startswith("1 claim: 1 stated")


def test_claims_are_cached_by_content_hash_in_the_cache_folder(tmp_path):
    root = make_field(tmp_path / "f", NOTES)
    field = open_field(root)
    first = [c.to_json() for c in field_claims(field)]
    cache = field.cache_dir / claims_mod.CACHE_FILE
    header = json.loads(cache.read_bytes().split(b"\n")[0])
    assert header["schema"] == claims_mod.cache_schema() and header["python"] == signed_chunks.PYTHON
    fresh = claims_mod.ClaimCache()
    fresh.load(field.cache_dir)
    info = field.pages["notes/a.md"]
    assert fresh.get(info.sha256) == claims_mod.page_claims(field, "notes/a.md")
    assert [c.to_json() for c in field_claims(open_field(root))] == first


@pytest.mark.parametrize(
    "bad",
    [
        [[["%s", [(1, "text", "decided", False, "text", (), ())]]]],  # not a tag
        [[["%s", [("1", "text", "stated", False, "text", (), ())]]]],  # a line that is not a number
        [[["%s", [(1, "text", "stated", False, "text", ("x",), ())]]]],  # a citation that is not a number
        [[["%s", [(1, "text", "stated")]]]],  # too short
        [[["%s", {"a": 1}]]],
        [[{"%s": 1}]],
        ["not a chunk"],
        [[["%s"]]],
        "unsigned",
    ],
)
def test_a_damaged_claims_cache_is_read_again_from_the_pages(tmp_path, monkeypatch, bad):
    root = make_field(tmp_path / "f", {"notes/a.md": "- Deploy on Fridays [observed]\n"})
    field = open_field(root)
    expected = [c.to_json() for c in field_claims(field)]
    sha = field.pages["notes/a.md"].sha256
    cache = field.cache_dir / claims_mod.CACHE_FILE
    if bad == "unsigned":
        head = signed_chunks.header_line({"schema": claims_mod.cache_schema()})
        blob = marshal.dumps([(sha, [(1, "Deploy on Fridays", "stated", False, "deploy on fridays", (), ())])])
        cache.write_bytes(head + len(blob).to_bytes(4, "little") + bytes(32) + blob)
    else:
        chunks = json.loads(json.dumps(bad).replace("%s", sha))  # tuples become lists: the shape is still wrong
        signed_chunks.write(cache, {"schema": claims_mod.cache_schema()}, chunks)
    fresh = claims_mod.ClaimCache()
    fresh.load(field.cache_dir)
    assert fresh.get(sha) is None
    monkeypatch.setattr(claims_mod, "CACHE", fresh)  # as a new process would
    assert [c.to_json() for c in field_claims(open_field(root))] == expected
    again = claims_mod.ClaimCache()
    again.load(field.cache_dir)
    assert again.get(sha) == claims_mod.page_claims(field, "notes/a.md")  # written again, whole


# ------------------------------------------------------------------ the streamed pass (memtui check)


def _in_context_streamed(field) -> list:
    seen: list = []
    claims_mod.each_page_in_context(field, seen.extend)
    return sorted(json.dumps(c.to_json() | {"key": c.key, "new": c.new_citation}) for c in seen)


def _in_context_kept(field) -> list:
    return sorted(json.dumps(c.to_json() | {"key": c.key, "new": c.new_citation}) for c in field_claims(field))


CHAIN = {
    **NOTES,
    "notes/old.md": page("id: old\ntitle: Old queue", "# Old\n\n- Workers scale on queue depth [suggested]\n"),
    "notes/new.md": page(
        "id: new\ntitle: New queue\nsupersedes: [old]",
        "# New\n\n- Workers scale on queue depth [stated]\n- A [observed] line\n",
    ),
    "notes/empty.md": "# No claims here\n",
}


@pytest.mark.parametrize("cache_state", ["no file", "whole file", "file lacks a version", "damaged chunk", "unsigned"])
def test_the_streamed_pass_puts_every_page_in_context_as_the_kept_list_does(tmp_path, monkeypatch, cache_state):
    root = make_field(tmp_path / "f", CHAIN)
    init_repo(root)
    (root / "people/b.md").write_text(
        "Dana leads engineering (kickoff 2026-01-14). [stated]\nDana owns hiring [stated]\n", encoding="utf-8"
    )  # promoted since the commit
    monkeypatch.setattr(claims_mod, "CACHE", claims_mod.ClaimCache())
    field = open_field(root)
    expected = _in_context_kept(field)  # writes the cache file
    assert any('"promoted_from": "suggested"' in c for c in expected) and any("notes/new.md" in c for c in expected)
    cache = field.cache_dir / claims_mod.CACHE_FILE
    if cache_state == "no file":
        cache.unlink()
    elif cache_state == "file lacks a version":
        (root / "notes/a.md").write_text((root / "notes/a.md").read_text() + "- Added later [inferred]\n")
        field = open_field(root)
        expected = _in_context_kept(field)
        monkeypatch.setattr(claims_mod, "CACHE", claims_mod.ClaimCache())
        new = field.pages["notes/a.md"].sha256
        held, entries = claims_mod.CACHE.stream(field.cache_dir)
        kept = [(sha, claims) for sha, claims in entries if sha != new]
        claims_mod.write_entries(field.cache_dir, held - {new}, kept)  # as before the page changed
    elif cache_state == "damaged chunk":
        data = bytearray(cache.read_bytes())
        data[-5:] = b"\xff" * 5
        cache.write_bytes(bytes(data))
    elif cache_state == "unsigned":
        head, _, body = cache.read_bytes().partition(b"\n")
        cache.write_bytes(signed_chunks.header_line({"schema": claims_mod.cache_schema()}) + body)
    monkeypatch.setattr(claims_mod, "CACHE", claims_mod.ClaimCache())  # as in a new process
    before = cache.read_bytes() if cache.exists() else None
    assert _in_context_streamed(field) == expected
    assert claims_mod.CACHE.get(field.pages["notes/a.md"].sha256) is None  # nothing kept
    if cache_state == "damaged chunk":
        assert not cache.exists()  # found damaged during the pass: removed, so that the next pass writes it
        assert _in_context_streamed(field) == expected
    held, entries = claims_mod.CACHE.stream(field.cache_dir)
    assert held == {info.sha256 for info in field.pages.values()}
    assert {sha for sha, _ in entries} == held  # written again, whole, when it lacked something
    if cache_state == "whole file":
        assert cache.read_bytes() == before  # nothing lacked: not written again
    assert _in_context_streamed(field) == expected
