"""Scanning a field, the page cache, refresh/rescan, and resolving references between pages."""

from __future__ import annotations

import json
import marshal
import os
import time
from pathlib import Path

import pytest

from memtui.dialects.open import open_field
from memtui.errors import FieldNotFoundError
from memtui.field import field as field_mod
from memtui.field import page_cache
from memtui.field.checks import run_checks
from memtui.field.field import Field, scan, slug
from memtui.store import signed_chunks
from memtui.store.locations import default_cache_dir
from tests.helpers import write_page
from tests.helpers_field import make_field, page, rule_paths, settle_change_times

HOUR_AGO_NS = time.time_ns() - 3600 * 10**9


def _age(root: Path) -> None:
    """Give every file an old mtime, so no page counts as just written (see RACY_WINDOW_NS)."""
    for folder, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(folder, name), ns=(HOUR_AGO_NS, HOUR_AGO_NS))


@pytest.fixture
def count_reads(monkeypatch):
    """Count the pages Field reads from disk (wrapping the real reader)."""
    calls: list[str] = []
    real = field_mod.read_page

    def counting(root, rel):
        calls.append(rel)
        return real(root, rel)

    monkeypatch.setattr(field_mod, "read_page", counting)
    return calls


# --------------------------------------------------------------------------- scanning


def test_scan_lists_markdown_pages_sorted_and_skips_tool_folders(tmp_path):
    make_field(
        tmp_path,
        {
            "b.md": "# B\n",
            "a/z.md": "# Z\n",
            "notes.txt": "not a page",
            "README": "not a page",
            ".git/HEAD.md": "x",
            ".memtui/cache/x.md": "x",
            ".dream/proposals/p/files/notes/x.md": "x",
            "deep/.git/x.md": "x",
            "deep/.memtui/x.md": "x",
            ".hidden-top/x.md": "x",
            "node_modules/pkg/readme.md": "x",
            "deep/.hidden-nested/ok.md": "# nested dot folders below the top are pages\n",
        },
    )
    entries, problems = scan(tmp_path)
    assert [e.path for e in entries] == ["a/z.md", "b.md", "deep/.hidden-nested/ok.md"]
    assert problems == []
    assert entries[1].size == len("# B\n")


def test_symlinks_are_never_followed_and_leaving_ones_are_reported(tmp_path):
    outside = make_field(tmp_path / "outside", {"o.md": "# Outside\n", "dir/p.md": "# P\n"})
    root = make_field(tmp_path / "f", {"real.md": "# Real\n", "sub/inner.md": "# Inner\n"})
    os.symlink(outside / "o.md", root / "out.md")
    os.symlink(outside / "dir", root / "outdir")
    os.symlink(root / "real.md", root / "alias.md")
    os.symlink(root / "sub", root / "subalias")
    os.symlink("../../outside", root / "sub" / "up")  # relative link leaving the field
    entries, problems = scan(root)
    assert [e.path for e in entries] == ["real.md", "sub/inner.md"]
    assert sorted((p.rule, p.path) for p in problems) == [
        ("symlink-outside", "out.md"),
        ("symlink-outside", "outdir"),
        ("symlink-outside", "sub/up"),
        ("symlink-skipped", "alias.md"),
    ]


def test_a_field_reached_through_a_symlink_is_scanned(tmp_path):
    root = make_field(tmp_path / "real", {"a.md": "# A\n"})
    os.symlink(root, tmp_path / "link")
    entries, problems = scan(tmp_path / "link")
    assert [e.path for e in entries] == ["a.md"] and problems == []


def test_a_folder_that_cannot_be_listed_is_reported(tmp_path, monkeypatch):
    root = make_field(tmp_path / "f", {"a.md": "# A\n", "sub/b.md": "# B\n"})
    real_scandir = os.scandir

    def swap_folder_then_list(path):
        # The folder is replaced by a file after it was found (a hook, not a mock).
        if os.fspath(path).endswith("sub") and (root / "sub").is_dir():
            (root / "sub" / "b.md").unlink()
            (root / "sub").rmdir()
            (root / "sub").write_text("now a file")
        return real_scandir(path)

    monkeypatch.setattr(field_mod, "scandir", swap_folder_then_list)
    entries, problems = scan(root)
    assert [e.path for e in entries] == ["a.md"]
    assert [(p.rule, p.path) for p in problems] == [("folder-unreadable", "sub")]


def test_load_refuses_a_missing_folder_or_a_file(tmp_path):
    with pytest.raises(FieldNotFoundError) as missing:
        Field.load(tmp_path / "nope")
    assert missing.value.hint
    (tmp_path / "file.md").write_text("x")
    with pytest.raises(FieldNotFoundError, match="not a folder"):
        Field.load(tmp_path / "file.md")


# --------------------------------------------------------------------------- page cache


def test_second_load_reads_nothing_and_a_changed_file_is_picked_up(tmp_path, count_reads):
    root = make_field(tmp_path / "f", {"a.md": "# Alpha\n", "b.md": "# Beta\n", "c.md": "# Gamma\n"})
    _age(root)
    first = Field.load(root)
    assert sorted(count_reads) == ["a.md", "b.md", "c.md"]
    assert (default_cache_dir(root) / page_cache.CACHE_FILE).is_file()
    assert not (root / ".memtui").exists()  # caches stay out of the field

    count_reads.clear()
    second = Field.load(root)
    assert count_reads == []
    assert second.pages == first.pages

    write_page(root, "b.md", "# Beta, edited\n")
    (root / "c.md").unlink()
    write_page(root, "d.md", "# Delta\n")
    third = Field.load(root)
    assert sorted(count_reads) == ["b.md", "d.md"]
    assert third.pages["b.md"].title == "Beta, edited"
    assert sorted(third.pages) == ["a.md", "b.md", "d.md"]


def test_a_same_size_rewrite_in_the_same_timestamp_tick_is_not_missed(tmp_path, count_reads):
    # The page is read just after it was written; it is then rewritten with the same
    # size and (as on a file system with coarse timestamps) the same mtime.
    root = make_field(tmp_path / "f", {"a.md": "# version A\n"})
    mtime = (root / "a.md").stat().st_mtime_ns
    assert Field.load(root).pages["a.md"].title == "version A"
    write_page(root, "a.md", "# version B\n")
    os.utime(root / "a.md", ns=(mtime, mtime))
    assert Field.load(root).pages["a.md"].title == "version B"


def test_use_cache_false_neither_reads_nor_writes_the_cache(tmp_path, count_reads):
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    _age(root)
    Field.load(root, use_cache=False)
    assert not (root / ".memtui").exists()
    Field.load(root)
    count_reads.clear()
    Field.load(root, use_cache=False)
    assert count_reads == ["a.md"]


def test_an_explicit_cache_dir_is_used_instead_of_the_field(tmp_path):
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    Field.load(root, cache_dir=tmp_path / "elsewhere")
    assert (tmp_path / "elsewhere" / page_cache.CACHE_FILE).is_file()
    assert not (root / ".memtui").exists()


def _write_signed(path: Path, chunks, **header) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    signed_chunks.write(path, {**page_cache.header(), **header}, chunks)


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"[]",
        b"\xff\xfe\x00",
        b'{"schema": 7, "version": "0.1.0"}\n{"path": "a.md", "size": 4, "meta": []}\n',
        "unsigned",
        "signed, cut short",
        "signed, not marshal",
        "altered after signing",
        "signed, not a list of rows",
        "signed for another reading",
        "a chunk from another cache file",
    ],
)
def test_a_damaged_cache_is_ignored_and_rewritten(tmp_path, content):
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    _age(root)
    good = list(page_cache.rows(Field.load(root, use_cache=False).pages.values()))
    cache = default_cache_dir(root) / page_cache.CACHE_FILE
    cache.parent.mkdir(parents=True, exist_ok=True)
    if content == "unsigned":
        head = signed_chunks.header_line(page_cache.header())
        blob = marshal.dumps(good[0])
        cache.write_bytes(head + len(blob).to_bytes(4, "little") + bytes(32) + blob)
    elif content == "signed, cut short":
        _write_signed(cache, good)
        cache.write_bytes(cache.read_bytes()[:-3])
    elif content == "signed, not marshal":
        from memtui.store import signing

        head = signed_chunks.header_line(page_cache.header())
        junk = b"\xff" * 20
        mac = signed_chunks._mac(signing.signing_key()[0], head, 0, junk)  # signed by memtui, yet not marshal
        cache.write_bytes(head + len(junk).to_bytes(4, "little") + mac + junk)
    elif content == "altered after signing":
        _write_signed(cache, good)
        data = bytearray(cache.read_bytes())
        data[-20:] = b"\xff" * 20  # the bytes change under a valid length: the HMAC no longer matches
        cache.write_bytes(bytes(data))
    elif content == "signed, not a list of rows":
        _write_signed(cache, [{"a.md": 1}])
    elif content == "signed for another reading":
        _write_signed(cache, good, reader="obsidian")
    elif content == "a chunk from another cache file":
        _write_signed(tmp_path / "other.bin", good)
        head = signed_chunks.header_line(page_cache.header())
        cache.write_bytes(head + (tmp_path / "other.bin").read_bytes().partition(b"\n")[2])
    else:
        cache.write_bytes(content)
    assert page_cache.read_infos(cache.parent) == {}
    field = Field.load(root)
    assert field.pages["a.md"].title == "A"
    assert json.loads(cache.read_bytes().split(b"\n")[0])["schema"] == page_cache.cache_schema()
    assert set(page_cache.read_infos(cache.parent)) == {"a.md"}


@pytest.mark.parametrize(
    "bad",
    [
        {"links": 5},  # not a list of pairs
        {"links": [("target", 1, "extra")]},
        {"citations": [[1, 2]]},
        {"meta": ["not", "a", "mapping"]},
        {"size": "4"},
        {"path": "other.md"},  # an entry for another page
        {"unknown_field": 1},  # a row one field too wide
    ],
)
def test_a_cache_entry_with_matching_stat_but_wrong_shape_is_reread(tmp_path, bad):
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    _age(root)
    info = Field.load(root, use_cache=False).pages["a.md"]
    values = {name: getattr(info, name) for name in page_cache.FIELDS}
    values["norm"] = info.norm.to_dict()  # the cache holds the normalised page flat
    values.update(sha256="x", **bad)
    cache = default_cache_dir(root) / page_cache.CACHE_FILE
    _write_signed(cache, [[tuple(values.values())]])
    assert "a.md" not in page_cache.read_infos(cache.parent)
    info = Field.load(root).pages["a.md"]
    assert info.title == "A" and info.sha256 != "x"


def test_the_cache_keeps_every_field_of_a_summary_and_shares_repeated_keys(tmp_path):
    pages = {f"p{n}.md": f"---\ntitle: P{n}\nkind: preference\n---\n# P{n}\nSee [[p{n + 1}]]. [^1]\n" for n in range(5)}
    root = make_field(tmp_path / "f", pages)
    _age(root)
    settle_change_times(root)  # the change time (not settable) older than the racy window: cached with its ident
    fresh = Field.load(root).pages
    cached = page_cache.read_infos(default_cache_dir(root))
    assert cached == fresh
    first, second = cached["p0.md"], cached["p1.md"]
    key = next(k for k in first.meta if k == "kind")
    assert key is next(k for k in second.meta if k == "kind")
    assert first.meta["kind"] is second.meta["kind"]


# --------------------------------------------------------------------------- refresh and rescan


def test_refresh_page_reports_what_happened(tmp_path):
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    field = Field.load(root, use_cache=False)
    generation = field.generation
    assert field.refresh_page("a.md") == "same"
    assert field.generation == generation
    write_page(root, "a.md", "# A2\n")
    assert field.refresh_page("a.md") == "changed"
    assert field.pages["a.md"].title == "A2"
    assert field.generation > generation
    write_page(root, "b.md", "# B\n")
    assert field.refresh_page("b.md") == "added"
    (root / "b.md").unlink()
    assert field.refresh_page("b.md") == "removed"
    assert field.refresh_page("b.md") == "same"
    for not_a_page in ("notes.txt", ".git/x.md", "sessions/../.memtui/x.md", ".dream/x.md"):
        assert field.refresh_page(not_a_page) == "same"
    assert sorted(field.pages) == ["a.md"]


def test_a_read_taken_after_a_newer_one_changes_nothing(tmp_path):
    """The app reads changed pages on a thread (read_page) and installs them later (take_read);
    meanwhile its own write may have read the page again: the older reading must not win."""
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    field = Field.load(root, use_cache=False)
    write_page(root, "a.md", "# Old\n")
    old = field.read_page("a.md")
    assert field.pages["a.md"].title == "A"  # reading changed nothing yet
    write_page(root, "a.md", "# New\n")
    assert field.refresh_page("a.md") == "changed"
    assert field.take_read(old) == "same"
    assert field.pages["a.md"].title == "New"
    write_page(root, "a.md", "# Newer\n")
    first, second = field.read_page("a.md"), field.read_page("a.md")
    assert field.take_read(first) == "changed"
    assert field.take_read(second) == "same"  # the same bytes, read later: installed, no change
    assert field.take_read(first) == "same" and field.pages["a.md"].title == "Newer"
    (root / "a.md").unlink()
    gone = field.read_page("a.md")
    assert gone.info is None and field.take_read(gone) == "removed" and "a.md" not in field.pages


def test_refresh_page_does_not_follow_a_symlink(tmp_path):
    write_page(tmp_path, "secret.md", "# Secret\n")
    root = make_field(tmp_path / "f", {})
    field = Field.load(root, use_cache=False)
    os.symlink(tmp_path / "secret.md", root / "link.md")
    assert field.refresh_page("link.md") == "same"
    assert "link.md" not in field.pages


def test_rescan_brings_the_field_in_line_with_the_disk(tmp_path):
    root = make_field(tmp_path / "f", {"a.md": "# A\n", "b.md": "# B\n"})
    field = Field.load(root, use_cache=False)
    write_page(root, "a.md", "# A changed and longer\n")
    (root / "b.md").unlink()
    write_page(root, "c/new.md", "# New\n")
    assert field.rescan() == {"added": ["c/new.md"], "changed": ["a.md"], "removed": ["b.md"]}
    assert field.rescan() == {"added": [], "changed": [], "removed": []}


# --------------------------------------------------------------------------- resolution


@pytest.fixture
def linked(tmp_path) -> Field:
    root = make_field(
        tmp_path / "f",
        {
            "people/dana-ruiz.md": page("id: mem_dana\ntitle: Dana Ruiz", "# Dana\n"),
            "decisions/public-api-trpc.md": page(
                "uuid: 0b6f6c5e-1c2d-4c4e-9a51-3f1c1c9f0a11\ntitle: 'Public API decision: tRPC'", "body\n"
            ),
            "knowledge/concepts/edi-214.md": "# EDI 214 status messages\n",
            "knowledge/entities/brightline.md": page("title: Brightline Freight", "body\n"),
            "knowledge/entities/notes.md": "# Local notes\n",
            "notes.md": "# Top notes\n",
        },
    )
    return Field.load(root, use_cache=False)


@pytest.mark.parametrize(
    "target, near, expected",
    [
        ("Dana Ruiz", None, "people/dana-ruiz.md"),  # title
        ("dana ruiz", None, "people/dana-ruiz.md"),  # title, any case
        ("mem_dana", None, "people/dana-ruiz.md"),  # id
        ("0b6f6c5e-1c2d-4c4e-9a51-3f1c1c9f0a11", None, "decisions/public-api-trpc.md"),  # uuid
        ("dana-ruiz", None, "people/dana-ruiz.md"),  # file stem
        ("edi-214", None, "knowledge/concepts/edi-214.md"),  # stem (title comes from the heading only)
        ("people/dana-ruiz.md", None, "people/dana-ruiz.md"),  # relative path
        ("people/dana-ruiz", None, "people/dana-ruiz.md"),  # path without .md
        ("./people/dana-ruiz.md", None, "people/dana-ruiz.md"),
        ("../../people/dana-ruiz.md", "knowledge/entities/brightline.md", "people/dana-ruiz.md"),
        ("notes", "knowledge/entities/brightline.md", "knowledge/entities/notes.md"),  # near folder first
        ("notes", None, "notes.md"),
        ("Public API decision: tRPC", None, "decisions/public-api-trpc.md"),
        ("Brightline Freight#Contacts", None, "knowledge/entities/brightline.md"),  # section dropped
        ("[[Dana Ruiz|Dana]]", None, "people/dana-ruiz.md"),  # as written in frontmatter (Obsidian)
        ("DANA-RUIZ.md", None, "people/dana-ruiz.md"),
    ],
)
def test_resolve_finds_pages_by_every_kind_of_name(linked, target, near, expected):
    hit = linked.resolve(target, near=near)
    assert hit is not None and hit.path == expected


@pytest.mark.parametrize(
    "target",
    [
        "",
        "   ",
        "Nobody",
        "../outside.md",
        "/etc/passwd",
        "people",
        "public-api-decision-trpc",  # a slug of the title: lossy, never a match
        "EDI_214",  # a slug of the stem edi-214
    ],
)
def test_resolve_returns_none_for_no_match(linked, target):
    assert linked.resolve(target) is None


def test_resolve_source_ignores_urls_and_strips_anchors_and_revisions(linked):
    assert linked.resolve_source("nas://home-box/agents/people/dana-ruiz.md") is None
    assert linked.resolve_source("https://example.com/people/dana-ruiz.md") is None
    assert linked.resolve_source("people/dana-ruiz.md#L12-L18").path == "people/dana-ruiz.md"
    assert linked.resolve_source("people/dana-ruiz.md@9f2c1de#L3").path == "people/dana-ruiz.md"
    assert linked.resolve_source("#L3") is None


def test_a_backslash_is_a_folder_separator_or_part_of_a_file_name(tmp_path):
    root = make_field(
        tmp_path / "field", {"notes/plain.md": "# Plain\n", "notes/a\\b.md": "# A backslash in its name\n"}
    )
    field = Field.load(root, use_cache=False)
    assert field.resolve("notes\\plain.md").path == "notes/plain.md"  # written on Windows
    assert field.resolve("notes/a\\b.md").path == "notes/a\\b.md"  # the name as it is
    assert field.resolve_source("notes/a\\b.md#L1").path == "notes/a\\b.md"


def test_wikilinks_of_every_form_resolve_in_the_checks(tmp_path):
    root = make_field(
        tmp_path / "f",
        {
            "people/dana-ruiz.md": page("id: mem_dana\ntitle: Dana Ruiz", "# Dana\n"),
            "decisions/trpc.md": page("uuid: 0b6f6c5e-0000-4000-8000-000000000001\ntitle: 'Public API decision: tRPC'"),
            "knowledge/projects/harbor.md": (
                "Title [[Dana Ruiz]], id [[mem_dana]], uuid [[0b6f6c5e-0000-4000-8000-000000000001]]. [observed]\n"
                "Stem [[dana-ruiz]], path [[../../people/dana-ruiz.md]], slug [[public-api-decision-trpc]]. [observed]\n"
                "Labelled [[Dana Ruiz|Dana]] and sectioned [[decisions/trpc#Rollout]]; broken [[Nobody Here]]. [observed]\n"
            ),
        },
    )
    field = Field.load(root, use_cache=False)
    found = [(f.rule, f.path, f.line, f.message) for f in run_checks(field)]
    assert found == [
        ("link-broken", "knowledge/projects/harbor.md", 2, "[[public-api-decision-trpc]] matches no page"),
        ("link-broken", "knowledge/projects/harbor.md", 3, "[[Nobody Here]] matches no page"),
    ]  # a slug of a title is not a name: never resolved by a lossy slug
    assert len(field.backlinks("people/dana-ruiz.md")) == 5
    assert len(field.backlinks("decisions/trpc.md")) == 2


def test_slug():
    assert slug("Public API decision: tRPC") == "public-api-decision-trpc"
    assert slug("  --Hello__World--  ") == "hello-world"
    assert slug("Obsidian 官方同步简介") == "obsidian-官方同步简介"  # letters of every script are kept
    assert slug("Поисковая система") == "поисковая-система"


def test_backlinks_by_wikilink_and_by_source(tmp_path):
    root = make_field(
        tmp_path / "f",
        {
            "people/dana.md": page("title: Dana Ruiz", "# Dana\nSee [[Dana Ruiz]] for self.\n"),
            "projects/harbor.md": "Owner is [[Dana Ruiz]] today.\nAlso [[dana]].\n",
            "decisions/x.md": page("sources: [people/dana.md#L2]", "body\n"),
            "sessions/s.md": "raw\n",
        },
    )
    field = Field.load(root, use_cache=False)
    assert sorted(field.backlinks("people/dana.md")) == [
        ("decisions/x.md", 0),
        ("projects/harbor.md", 1),
        ("projects/harbor.md", 2),
    ]
    assert field.backlinks("sessions/s.md") == []


def test_memory_pointers_find_wikilinks_markdown_links_and_bare_paths(tmp_path):
    root = make_field(
        tmp_path / "f",
        {
            "MEMORY.md": (
                "# MEMORY\n"
                "- Identity: [[IDENTITY]]\n"
                "- Dana: people/dana.md and [the decision](decisions/x.md#why)\n"
                "- Web: https://example.com/page.md and folders like daily/\n"
            ),
        },
    )
    field = Field.load(root, use_cache=False)
    assert field.memory_pointers() == [("IDENTITY", 2), ("decisions/x.md", 3), ("people/dana.md", 3)]


def test_citations_count_frontmatter_sources_or_a_numbered_sources_list(tmp_path):
    root = make_field(
        tmp_path / "f",
        {
            "notes/fm.md": page(
                "sources:\n  - sessions/a.md\n  - sessions/b.md", "Two sources [cite:2] fine [stated]\n"
            ),
            "notes/list.md": (
                "Cited from a list [cite:2] and out of range [cite:3] [stated]\n\n"
                "## Sources\n1. sessions/a.md\n2. sessions/b.md\n"
            ),
            "notes/both.md": page(
                "sources: [sessions/a.md]",
                "Frontmatter wins [cite:2] [stated]\n\n## Sources\n1. sessions/a.md\n2. sessions/b.md\n",
            ),
            "sessions/a.md": "raw\n",
            "sessions/b.md": "raw\n",
        },
    )
    field = Field.load(root, use_cache=False)
    assert field.pages["notes/list.md"].citation_sources == ["sessions/a.md", "sessions/b.md"]
    found = sorted((f.rule, f.path, f.line) for f in run_checks(field))
    assert found == [("cite-broken", "notes/both.md", 4), ("cite-broken", "notes/list.md", 1)]


def test_open_field_on_a_folder_is_writable(tmp_path):
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    field = open_field(root)
    assert not field.readonly and field.source == root and len(field) == 1
    assert [info.path for info in field] == ["a.md"]
    assert field.get("a.md").title == "A" and field.get("zzz.md") is None
    assert field.trust("a.md") == "unknown"  # no review record: never claimed as reviewed


def test_vanished_and_symlink_findings_reach_the_checks(tmp_path, monkeypatch):
    root = make_field(tmp_path / "f", {"a.md": "# A\n", "b.md": "# B\n"})
    os.symlink(root / "a.md", root / "c.md")
    real = field_mod.read_page

    def vanish(root_arg, rel):
        if rel == "b.md":
            (Path(root_arg) / rel).unlink()
        return real(root_arg, rel)

    monkeypatch.setattr(field_mod, "read_page", vanish)
    assert rule_paths(run_checks(Field.load(root, use_cache=False))) == {
        ("page-vanished", "b.md"),
        ("symlink-skipped", "c.md"),
    }


def test_relative_links_join_as_a_path_join_does() -> None:
    """``_path_forms`` joins a link with the linking page's folder in strings; the result is what
    ``PurePosixPath(near).parent / target`` normalised gives, for any parts."""
    import os
    import random
    from pathlib import PurePosixPath

    from memtui.field.field import Field

    field = Field.__new__(Field)
    field.reader = type("R", (), {"link_prefixes": ()})()
    rng = random.Random(15)
    parts = ["a", "b c", "..", ".", "", "é", "x.md", "/", "//", "~"]
    for _ in range(3000):
        near = "/".join(rng.choice(parts[:3] + parts[5:7]) or "a" for _ in range(rng.randint(2, 4)))
        target = "/".join(rng.choice(parts) for _ in range(rng.randint(1, 4))) or "t"
        plain = target[2:] if target.startswith("./") else target  # as _path_forms begins
        joined = os.path.normpath((PurePosixPath(near).parent / plain).as_posix())
        expected = [joined] if not joined.startswith("..") else []
        assert list(field._path_forms(target, near))[: len(expected)] == expected, (near, target)


def test_a_reference_never_resolves_to_a_page_outside_its_keys(sample_field: Path) -> None:
    """``reference_keys`` may name more than ``resolve`` looks up, never fewer: the index skips
    resolving a reference whose keys miss every changed page, so a miss must mean no hit."""
    import random

    from memtui.dialects.open import open_field as open_dialects
    from memtui.field.lookup import table_entries

    field = open_dialects(sample_field)
    rng = random.Random(15)
    targets = {target for info in field.pages.values() for target, _ in info.links}
    for path, info in field.pages.items():
        stem = path.rsplit("/", 1)[-1]
        title = info.text_of("title") or ""
        targets.update(
            {
                path,
                path.upper(),
                path[:-3],
                "./" + stem,
                "../" + path,
                "/" + path,
                stem,
                stem[:-3].upper(),
                title,
                title.lower(),
                f" {title} ",
                f"{title}#Heading",
                f"{title}|label",
                "#Heading",
                path.replace("/", "\\"),
                *info.ids,
                *(ident.upper() for ident in info.ids),
                *info.aliases,
                "/".join(path.split("/")[-2:])[:-3],
            }
        )
    nears = [*rng.sample(sorted(field.pages), 12), None, "x.md"]
    resolved = 0
    for target in sorted(t for t in targets if t):
        for near in nears:
            hit = field.resolve(target, near=near)
            if hit is None:
                continue
            resolved += 1
            held = set(table_entries(hit.path, hit)) | {("self", hit.path)}
            assert not field.reference_keys(target, near=near).isdisjoint(held), (target, near, hit.path)
    assert resolved > 1000


def test_a_pages_stem_is_what_a_path_object_says() -> None:
    import random
    from pathlib import PurePosixPath

    from memtui.field.page import path_stem

    rng = random.Random(22)
    parts = ["a", "..", "b.md", ".md", "x.tar.gz", "é.MD", "c.", ".hidden", "d..md", "...", "e f.md"]
    for _ in range(5000):
        path = "/".join(rng.choice(parts) for _ in range(rng.randint(1, 4)))
        assert path_stem(path) == PurePosixPath(path).stem, path
