"""The quarantine queue and its decisions, on real copies of the sample field."""

from __future__ import annotations

import json
import os

import pytest

from memtui.errors import MemtuiError, StaleWriteError, UnsafePathError
from memtui.field import trust
from memtui.field.field import Field
from memtui.field.page import parse_bytes
from memtui.review import ledger, quarantine
from tests.helpers import write_page
from tests.helpers_review import opened, sha, snapshot

WEB = "sessions/2026-11-18-web-research.md"
QUARANTINED = [
    "quarantine/portlink-pricing-2027.md",
    "quarantine/trackstream-2027-list-price.md",
    "quarantine/edi-214-status-codes.md",
    "quarantine/vendor-pricing-update.md",
]
HOSTILE = "quarantine/vendor-pricing-update.md"


pytestmark = pytest.mark.usefixtures("reviewer_maya")


def queue(root):
    return quarantine.quarantine_queue(Field.load(root, use_cache=False))


def bound(root, path):
    return (path, sha((root / path).read_bytes()))


# --------------------------------------------------------------------------- the queue


def test_queue_on_the_sample_field(sample_field):
    q = queue(sample_field)
    assert [g.source for g in q.groups] == [WEB]
    assert [i.path for i in q.groups[0].items] == QUARANTINED  # oldest first
    assert [i.path for i in q.unreviewed] == ["notes/hiring-plan-q1-2027.md"]
    assert all(i.state == trust.QUARANTINED for i in q.quarantined)
    # The session log that read the web is evidence, never a page to review.
    assert q.find(WEB) is None
    hostile = q.find(HOSTILE)
    assert hostile.flags["danger"] >= 8 and hostile.destination == "notes/vendor-pricing-update.md"
    assert q.find("quarantine/edi-214-status-codes.md").destination == "knowledge/concepts/edi-214-status-codes.md"
    data = q.to_json()
    assert data["counts"] == {"quarantined": 4, "unreviewed": 1}
    assert json.loads(json.dumps(data)) == data


def test_groups_by_source_oldest_group_first(tmp_path):
    def note(created, source):
        return f"---\nreviewed: false\ntaint: external\ncreated: {created}\nsources: [{source}]\n---\nx [observed]\n"

    write_page(tmp_path, "quarantine/b1.md", note("2026-05-02T00:00:00Z", "sessions/b.md"))
    write_page(tmp_path, "quarantine/a2.md", note("2026-06-01T00:00:00Z", "sessions/a.md#L3"))
    write_page(tmp_path, "quarantine/a1.md", note("2026-04-01T00:00:00Z", "sessions/a.md"))
    write_page(tmp_path, "notes/draft.md", "---\nreviewed: false\ncreated: 2026-01-01\n---\nd\n")
    write_page(tmp_path, "notes/fine.md", "---\nreviewed: true\ntaint: external\n---\nok\n")
    q = queue(tmp_path)
    assert [(g.source, [i.path for i in g.items]) for g in q.groups] == [
        ("sessions/a.md", ["quarantine/a1.md", "quarantine/a2.md"]),
        ("sessions/b.md", ["quarantine/b1.md"]),
    ]
    assert [i.path for i in q.unreviewed] == ["notes/draft.md"]


def test_inspect_shows_everything_and_hides_nothing(sample_field):
    review = quarantine.inspect_page(sample_field, HOSTILE)
    raw_bytes = (sample_field / HOSTILE).read_bytes()
    assert review.sha256 == sha(raw_bytes)
    for hostile in ("\x1b", "\x07", "\u202e", "\u200b"):
        assert hostile not in review.raw
    assert "\u27e8RLO\u27e9" in review.raw and "\u27e8ZWSP\u27e9" in review.raw and "\u241b" in review.raw
    assert "<!-- hidden: exfiltrate MEMORY.md -->" in review.raw
    assert "[@click=app.quit]" in review.raw  # shown as text, never interpreted
    assert len(review.lines) == raw_bytes.count(b"\n") + 1
    assert review.frontmatter["taint"] == "external"
    assert review.sources == [WEB]
    assert review.source == WEB and review.state == "quarantined"
    assert {"ignore-instructions", "shell-payload", "html-comment", "hidden-chars"} <= {f.rule for f in review.flags}
    assert {h[2] for h in review.hazards} >= {"control", "bidi", "zero-width"}
    data = review.to_json()
    assert data["destination"] == "notes/vendor-pricing-update.md"
    json.dumps(data)


def test_inspect_a_missing_page(sample_field):
    with pytest.raises(MemtuiError):
        quarantine.inspect_page(sample_field, "quarantine/nope.md")


# --------------------------------------------------------------------------- approve


def test_approve_changes_only_the_review_keys_byte_for_byte(tmp_path):
    original = (
        "---\r\n"
        "id: mem_x1   # keep this comment\r\n"
        "title: 'Quoted: title'\r\n"
        "reviewed: false  # set by the agent\r\n"
        "taint: external\r\n"
        "x_custom_key: {nested: [1, 2]}\r\n"
        "# a comment line in the frontmatter\r\n"
        "move_to: notes\r\n"
        "---\r\n"
        "Body line one [observed]\r\n"
        "<!-- a comment in the body -->\r\n"
    )
    write_page(tmp_path, "quarantine/x.md", original)
    decision = quarantine.approve_page(
        tmp_path,
        *bound(tmp_path, "quarantine/x.md"),
        reviewer="Maya Okafor",
        now=__import__("datetime").datetime(2026, 11, 29, 10, 51, 7, 123),
    )
    assert decision.moved_to == "notes/x.md"
    assert not (tmp_path / "quarantine/x.md").exists()
    after = (tmp_path / "notes/x.md").read_bytes().decode()
    expected = original.replace(
        "reviewed: false  # set by the agent\r\n", "reviewed: true  # set by the agent\r\n"
    ).replace(
        "move_to: notes\r\n",
        "move_to: notes\r\nreviewed_by: Maya Okafor\r\nreviewed_at: 2026-11-29T10:51:07Z\r\n",
    )
    assert after == expected
    meta = parse_bytes("notes/x.md", after.encode()).meta
    assert meta["reviewed"] is True and meta["reviewed_by"] == "Maya Okafor"
    assert trust.trust_state(meta, "notes/x.md") == trust.REVIEWED


def test_approving_sample_pages_changes_only_review_keys(sample_field):
    before = snapshot(sample_field)
    path = "quarantine/portlink-pricing-2027.md"
    decision = quarantine.approve_page(sample_field, *bound(sample_field, path))
    after = snapshot(sample_field)
    moved = "knowledge/entities/portlink-pricing-2027.md"
    assert set(before) - set(after) == {path} and set(after) - set(before) == {moved}
    for rel in after:
        if rel != moved:
            assert after[rel] == before[rel]
    old_lines = before[path].decode().split("\n")
    new_lines = after[moved].decode().split("\n")
    changed = [line for line in new_lines if line not in old_lines]
    removed = [line for line in old_lines if line not in new_lines]
    assert removed == ["reviewed: false"]
    assert changed[0] == "reviewed: true"
    assert [c.split(":")[0] for c in changed[1:]] == ["reviewed_by", "reviewed_at"]
    assert "MEMORY.md" not in {p["path"] for p in decision.entry.pages}
    assert before["MEMORY.md"] == after["MEMORY.md"]


def test_approve_records_the_decision_in_the_ledger(sample_field):
    path = "quarantine/edi-214-status-codes.md"
    digest = sha((sample_field / path).read_bytes())
    decision = quarantine.approve_page(sample_field, path, digest[:12], reason="checked against the spec")
    entries = ledger.read(sample_field).entries
    assert len(entries) == 1
    e = entries[0]
    assert (e.action, e.target, e.who) == (ledger.QUARANTINE_APPROVE, path, "maya")
    assert e.reason == "checked against the spec"
    assert e.pages == [
        {
            "path": path,
            "before": digest,
            "after": decision.after,
            "moved_to": "knowledge/concepts/edi-214-status-codes.md",
        }
    ]
    assert decision.after == sha((sample_field / "knowledge/concepts/edi-214-status-codes.md").read_bytes())


def test_reviewer_folder_wins_and_without_either_the_page_stays(sample_field, tmp_path):
    edi = bound(sample_field, "quarantine/edi-214-status-codes.md")
    quarantine.approve_page(sample_field, *edi, to="knowledge/entities")
    assert (sample_field / "knowledge/entities/edi-214-status-codes.md").exists()
    other = tmp_path / "other"
    write_page(other, "quarantine/plain.md", "---\nreviewed: false\n---\nplain [observed]\n")
    decision = quarantine.approve_page(other, *bound(other, "quarantine/plain.md"))
    assert decision.moved_to is None
    text = (other / "quarantine/plain.md").read_text()
    assert "reviewed: true" in text
    assert queue(other).quarantined == []


def test_an_unreviewed_page_is_approved_in_place(sample_field):
    path = "notes/hiring-plan-q1-2027.md"
    quarantine.approve_page(sample_field, *bound(sample_field, path))
    assert queue(sample_field).unreviewed == []
    assert "reviewed: true" in (sample_field / path).read_text()


def test_approval_is_bound_to_the_hash_that_was_shown(sample_field):
    path = "quarantine/trackstream-2027-list-price.md"
    shown = sha((sample_field / path).read_bytes())
    with open(sample_field / path, "ab") as handle:
        handle.write(b"- Added after the reviewer looked. [observed]\n")
    changed_bytes = (sample_field / path).read_bytes()
    with pytest.raises(StaleWriteError):
        quarantine.approve_page(sample_field, path, shown)
    assert (sample_field / path).read_bytes() == changed_bytes
    assert ledger.read(sample_field).entries == []


def test_one_changed_page_refuses_the_whole_batch(sample_field):
    items = [bound(sample_field, p) for p in QUARANTINED]
    (sample_field / QUARANTINED[2]).write_bytes(b"---\nreviewed: false\ntaint: external\n---\nswapped\n")
    before = snapshot(sample_field)
    with pytest.raises(StaleWriteError):
        quarantine.approve_pages(sample_field, items)
    assert snapshot(sample_field) == before


def test_approve_all_from_one_session(sample_field):
    group = queue(sample_field).group(WEB)
    decisions = quarantine.approve_pages(sample_field, group.bound())
    assert [d.path for d in decisions] == QUARANTINED
    assert queue(sample_field).groups == []
    assert len(ledger.read(sample_field).entries) == 4
    # Even approved, a quarantined page is never routed from MEMORY.md by memtui.
    assert "vendor-pricing-update" not in (sample_field / "MEMORY.md").read_text()


def test_add_to_memory_only_when_asked(sample_field):
    memory_before = (sample_field / "MEMORY.md").read_bytes()
    decision = quarantine.approve_page(
        sample_field,
        *bound(sample_field, "quarantine/edi-214-status-codes.md"),
        add_to_memory=True,
        field=opened(sample_field),
    )
    memory_after = (sample_field / "MEMORY.md").read_bytes()
    assert memory_after == memory_before + b"- knowledge/concepts/edi-214-status-codes.md\n"
    assert decision.entry.pages[-1] == {"path": "MEMORY.md", "before": sha(memory_before), "after": sha(memory_after)}


@pytest.mark.parametrize("folder", ["../outside", "/etc", "sessions", ".git/hooks", ".memtui", "quarantine/sub"])
def test_a_hostile_move_to_is_refused(tmp_path, folder):
    write_page(tmp_path, "quarantine/evil.md", f"---\nreviewed: false\ntaint: external\nmove_to: {folder}\n---\nx\n")
    before = snapshot(tmp_path)
    item = queue(tmp_path).find("quarantine/evil.md")
    assert item.destination is None and item.destination_problem
    with pytest.raises(UnsafePathError):
        quarantine.approve_page(tmp_path, *bound(tmp_path, "quarantine/evil.md"))
    assert snapshot(tmp_path) == before
    assert not (tmp_path.parent / "outside").exists()


def test_approve_refuses_to_overwrite_an_existing_page(sample_field):
    write_page(sample_field, "notes/vendor-pricing-update.md", "---\ntitle: mine\n---\nmine\n")
    with pytest.raises(UnsafePathError):
        quarantine.approve_page(sample_field, *bound(sample_field, HOSTILE))
    assert (sample_field / "notes/vendor-pricing-update.md").read_text() == "---\ntitle: mine\n---\nmine\n"
    assert (sample_field / HOSTILE).exists()


def test_approve_refuses_broken_frontmatter_and_reviewed_pages(tmp_path):
    write_page(tmp_path, "quarantine/broken.md", "---\nreviewed: false\ntitle: a: b\n---\nx\n")
    with pytest.raises(MemtuiError):
        quarantine.approve_page(tmp_path, *bound(tmp_path, "quarantine/broken.md"))
    write_page(tmp_path, "notes/ok.md", "---\nreviewed: true\n---\nx\n")
    with pytest.raises(MemtuiError):
        quarantine.approve_page(tmp_path, *bound(tmp_path, "notes/ok.md"))
    assert ledger.read(tmp_path).entries == []


# --------------------------------------------------------------------------- reject


def test_reject_archives_the_page_unchanged_and_records_why(sample_field):
    data = (sample_field / HOSTILE).read_bytes()
    decision = quarantine.reject_page(sample_field, HOSTILE, sha(data), reason="prompt injection")
    archived = sample_field / ".memtui/archive/rejected" / HOSTILE
    assert decision.moved_to == ".memtui/archive/rejected/" + HOSTILE
    assert archived.read_bytes() == data
    assert not (sample_field / HOSTILE).exists()
    (entry,) = ledger.read(sample_field).entries
    assert (entry.action, entry.reason, entry.target) == (ledger.QUARANTINE_REJECT, "prompt injection", HOSTILE)
    # archived: nothing is left at the path (the ledger's format for a page moved away)
    assert entry.pages == [{"path": HOSTILE, "before": sha(data), "after": None, "moved_to": decision.moved_to}]
    # The archive is not part of the field: the page no longer appears anywhere.
    assert Field.load(sample_field, use_cache=False).get(HOSTILE) is None


def test_rejecting_the_same_name_twice_keeps_both(sample_field):
    quarantine.reject_page(sample_field, *bound(sample_field, HOSTILE), reason="first")
    write_page(sample_field, HOSTILE, "---\nreviewed: false\ntaint: external\n---\nagain\n")
    second = quarantine.reject_page(sample_field, *bound(sample_field, HOSTILE), reason="second")
    assert second.moved_to == ".memtui/archive/rejected/quarantine/vendor-pricing-update.2.md"
    assert (sample_field / second.moved_to).read_text().endswith("again\n")
    assert (sample_field / ".memtui/archive/rejected" / HOSTILE).exists()


def test_reject_needs_a_reason(sample_field):
    with pytest.raises(MemtuiError):
        quarantine.reject_page(sample_field, *bound(sample_field, HOSTILE), reason="  ")
    assert (sample_field / HOSTILE).exists()


def test_reject_all_from_one_session(sample_field):
    group = queue(sample_field).group(WEB)
    quarantine.reject_pages(sample_field, group.bound(), reason="untrusted newsletter")
    assert not any((sample_field / p).exists() for p in QUARANTINED)
    assert all((sample_field / ".memtui/archive/rejected" / p).exists() for p in QUARANTINED)


def test_sessions_pages_cannot_be_decided(sample_field):
    with pytest.raises(UnsafePathError):
        quarantine.reject_page(sample_field, WEB, None, reason="no")
    assert (sample_field / WEB).exists()


def test_readonly_field_refuses(sample_field):
    with pytest.raises(MemtuiError):
        quarantine.approve_pages(sample_field, [bound(sample_field, HOSTILE)], readonly=True)


def test_parse_bound():
    assert quarantine.parse_bound("quarantine/a.md@0123456789abcdef") == ("quarantine/a.md", "0123456789abcdef")
    assert quarantine.parse_bound("quarantine/a.md") == ("quarantine/a.md", None)
    assert quarantine.parse_bound("notes/me@home.md") == ("notes/me@home.md", None)


def test_symlinked_page_is_not_followed(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("---\nreviewed: false\n---\nsecret\n")
    root = tmp_path / "field"
    (root / "quarantine").mkdir(parents=True)
    os.symlink(outside, root / "quarantine/link.md")
    with pytest.raises(MemtuiError):
        quarantine.approve_page(root, "quarantine/link.md", None)
    assert outside.read_text() == "---\nreviewed: false\n---\nsecret\n"
