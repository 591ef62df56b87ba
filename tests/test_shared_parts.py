"""Equal parts of page summaries held once (``memtui.field.shared_parts``), and that sharing
them changes nothing a reader of the field sees."""

from __future__ import annotations

import os
import time
import unicodedata

import pytest

from memtui.field import page_cache
from memtui.field.field import Field
from memtui.field.lookup import lookup_key
from memtui.field.page import read_page
from memtui.field.shared_parts import LIST_FIELDS, SHORT, PartPool
from memtui.store.locations import default_cache_dir
from tests.helpers_field import make_field, settle_change_times

HOUR_AGO_NS = time.time_ns() - 3600 * 10**9

PAGE = (
    "---\ntitle: P{n}\nkind: preference\nupdated: 2026-01-0{n}\n---\n"
    "# P{n}\n\nSee [[shared]] and [[p{n}-own]] [cite: 1].\n\n## Sources\n\n1. https://example.com/{n}\n"
)


def _aged_field(tmp_path, count=3):
    root = make_field(tmp_path / "f", {f"p{n}.md": PAGE.format(n=n + 1) for n in range(count)} | {"empty.md": ""})
    for name in os.listdir(root):
        os.utime(root / name, ns=(HOUR_AGO_NS, HOUR_AGO_NS))
    settle_change_times(root)  # cached with each page's identity
    return root


def test_equal_parts_of_different_pages_become_one_object(tmp_path):
    root = _aged_field(tmp_path)
    pool = PartPool()
    one, two = (pool.share(read_page(root, name)) for name in ("p1.md", "p2.md"))
    assert one.key_lines == two.key_lines and one.key_lines is two.key_lines
    assert one.tag_counts is two.tag_counts
    assert one.norm is two.norm and one.norm.to_dict() == {}
    kind_key = next(key for key in one.meta if key == "kind")
    assert kind_key is next(key for key in two.meta if key == "kind")
    assert one.meta["kind"] is two.meta["kind"]
    assert one.meta is not two.meta  # frontmatter values differ: a dict of its own
    shared_link = next(link for link in one.links if link[0] == "shared")
    assert shared_link is next(link for link in two.links if link[0] == "shared")
    assert one.citations == [(1, 8)] and one.citations[0] is two.citations[0]
    for name in LIST_FIELDS:
        value = getattr(one, name)
        assert value or value == (), f"{name}: an empty list is held as ()"


def test_a_pair_is_shared_only_with_a_pair_of_the_same_types():
    pool = PartPool()
    ones = pool.pairs([(1, 2)])
    trues = pool.pairs([(True, 2)])
    assert type(ones[0][0]) is int and type(trues[0][0]) is bool
    floats = pool.pairs([(1, 2.0)])
    assert type(floats[0][1]) is float
    assert pool.pairs([(1, 2)])[0] is ones[0]
    assert pool.pairs([]) == ()


def test_a_dict_is_shared_whole_only_when_its_values_are_all_ints():
    pool = PartPool()
    first = pool.mapping({"a": 1, "b": 2}, whole=True)
    assert pool.mapping({"a": 1, "b": 2}, whole=True) is first
    assert pool.mapping({"a": True, "b": 2}, whole=True) is not first  # True == 1, but not the same table
    assert pool.mapping({"a": 1, "b": 2}, whole=False) is not first
    text = pool.mapping({"a": "x"}, whole=True)
    assert pool.mapping({"a": "x"}, whole=True) is not text  # a str value: never shared whole
    long_value = "y" * (SHORT + 1)
    assert pool.mapping({"k": long_value})["k"] is long_value


def test_writing_the_cache_leaves_the_fields_own_summaries_alone(tmp_path):
    root = _aged_field(tmp_path)
    info = read_page(root, "p1.md")
    before = {name: getattr(info, name) for name in page_cache.FIELDS}
    kinds = {name: type(value) for name, value in before.items()}
    list(page_cache.rows([info]))
    assert {name: getattr(info, name) for name in page_cache.FIELDS} == before
    assert {name: type(getattr(info, name)) for name in page_cache.FIELDS} == kinds
    assert all(getattr(info, name) is value for name, value in before.items())


def test_a_summary_from_the_cache_is_the_summary_a_fresh_read_makes(tmp_path):
    root = _aged_field(tmp_path)
    fresh = Field.load(root).pages  # read, and the cache written
    assert fresh["empty.md"].problems  # the empty page has a problem to compare
    cached = page_cache.read_infos(default_cache_dir(root))
    assert cached == fresh
    again = Field.load(root, use_cache=False).pages
    assert again == fresh


def test_a_page_refreshed_unchanged_is_the_same_after_a_cached_open(tmp_path):
    root = _aged_field(tmp_path)
    Field.load(root)
    field = Field.load(root)  # summaries from the cache
    generation = field.generation
    for path in ("p1.md", "empty.md"):
        os.utime(root / path)  # touched, bytes unchanged
        assert field.refresh_page(path) == "same"
    assert field.generation == generation
    (root / "p1.md").write_text(PAGE.format(n=9), encoding="utf-8")
    assert field.refresh_page("p1.md") == "changed"
    refreshed = field.pages["p1.md"]
    assert refreshed.hazards == () and refreshed.links == [("shared", 8), ("p9-own", 8)]


def test_an_empty_summary_list_cannot_be_changed_for_every_page_at_once(tmp_path):
    root = _aged_field(tmp_path)
    field = Field.load(root, use_cache=False)
    one, two = field.pages["p1.md"], field.pages["p2.md"]
    assert one.hazards == () and two.hazards == ()
    with pytest.raises(AttributeError):
        one.hazards.append(("x", 1))  # type: ignore[attr-defined]
    assert two.hazards == ()


def test_a_lookup_key_already_its_own_key_is_the_same_string():
    name = "notes/already-lower.md"
    assert lookup_key(name) is name
    assert lookup_key("Notes/Mixed.md") == "notes/mixed.md"
    decomposed = unicodedata.normalize("NFD", "café.md")
    assert lookup_key(decomposed) == "café.md" and lookup_key(decomposed) != decomposed
    assert lookup_key("STRASSE ß") == "strasse ss"


def test_summaries_compare_by_their_items_whether_held_as_lists_or_tuples(tmp_path):
    root = _aged_field(tmp_path)
    plain = read_page(root, "p1.md")
    shared = PartPool().share(read_page(root, "p1.md"))
    assert plain.hazards == [] and shared.hazards == ()
    assert plain == shared and shared == plain
    other = read_page(root, "p2.md")
    assert plain != other
    shared.links = [("elsewhere", 8)]
    assert plain != shared


def test_a_build_helpers_records_arrive_sharing_their_parts_and_read_the_same(tmp_path):
    import pickle

    from memtui.index.records import read_page_doc, share_parts

    root = _aged_field(tmp_path)
    docs = [read_page_doc(root, f"p{n}.md", None) for n in (0, 1, 2)]
    plain = [(d.record.meta, d.record.tag_counts, d.record.norm, d.record.trust) for d in docs]
    sent = pickle.loads(pickle.dumps(share_parts([d.record for d in docs]), protocol=pickle.HIGHEST_PROTOCOL))
    assert [(r.meta, r.tag_counts, r.norm, r.trust) for r in sent] == plain
    one, two = sent[0], sent[1]
    assert one.tag_counts is two.tag_counts  # one table for every page with the same counts
    assert next(k for k in one.meta if k == "kind") is next(k for k in two.meta if k == "kind")
    light = one.page_info()
    assert light.meta == one.meta and light.title == "P1" and light.kind == "preference"
    assert light.links == () and light.problems == () and light.key_lines == {}
    assert light.hazards is sent[2].page_info().hazards


def test_a_heading_that_repeats_the_title_is_held_once_and_one_that_differs_is_kept(tmp_path):
    root = make_field(
        tmp_path / "f",
        {
            "same.md": "---\ntitle: Door Down\n---\n# Door Down\n\nText.\n",
            "other.md": "---\ntitle: Door Down\n---\n# Door Up\n\nText.\n",
        },
    )
    for name in ("same.md", "other.md"):
        os.utime(root / name, ns=(HOUR_AGO_NS, HOUR_AGO_NS))
    settle_change_times(root)
    fresh = Field.load(root).pages
    cached = page_cache.read_infos(default_cache_dir(root))
    for pages in (fresh, cached):
        same, other = pages["same.md"], pages["other.md"]
        assert same.heading_title == "Door Down" and same.heading_title is same.meta["title"]
        assert other.heading_title == "Door Up" and other.meta["title"] == "Door Down"
    assert cached == fresh
