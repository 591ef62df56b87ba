"""Trust state: quarantined, unreviewed, reviewed, or unknown (no review record); unexpected values fail safe."""

from __future__ import annotations

import pytest

from memtui.field.field import Field
from memtui.field.normal import NormalPage
from memtui.field.trust import (
    QUARANTINED,
    REVIEWED,
    STATES,
    UNKNOWN,
    UNREVIEWED,
    is_tainted,
    taint_source,
    trust_state,
)


@pytest.mark.parametrize(
    "meta, path, expected",
    [
        ({}, "notes/a.md", UNKNOWN),  # no review record: never claimed as reviewed
        ({"reviewed": True}, "notes/a.md", REVIEWED),
        ({"reviewed": "yes"}, "notes/a.md", REVIEWED),
        ({"reviewed": " True "}, "notes/a.md", REVIEWED),
        ({"reviewed": False}, "notes/a.md", UNREVIEWED),
        ({"reviewed": "no"}, "notes/a.md", UNREVIEWED),
        ({"reviewed": None}, "notes/a.md", UNREVIEWED),  # the key is there but says nothing
        ({"reviewed": "pending"}, "notes/a.md", UNREVIEWED),  # unexpected values fail safe
        ({"reviewed": 1}, "notes/a.md", UNREVIEWED),
        ({"reviewed": False, "taint": "external"}, "notes/a.md", QUARANTINED),
        ({"taint": "external"}, "notes/a.md", QUARANTINED),
        ({"taint": "External "}, "notes/a.md", QUARANTINED),
        ({"taint": "web"}, "notes/a.md", QUARANTINED),  # any taint taints
        ({"taint": True}, "notes/a.md", QUARANTINED),
        ({"taint": None}, "notes/a.md", UNKNOWN),
        ({"taint": "null"}, "notes/a.md", UNKNOWN),
        ({"taint": False}, "notes/a.md", UNKNOWN),
        ({"taint": "none"}, "notes/a.md", UNKNOWN),
        ({"origin": "external"}, "notes/a.md", QUARANTINED),
        ({"origin": "agent", "reviewed": False}, "notes/a.md", UNREVIEWED),
        ({}, "quarantine/a.md", QUARANTINED),  # the folder alone taints
        ({"reviewed": False}, "quarantine/sub/a.md", QUARANTINED),
        ({}, "notes/quarantine/a.md", UNKNOWN),  # only the top-level folder taints
        ({"reviewed": True, "taint": "external"}, "quarantine/a.md", REVIEWED),  # a human reviewed it
    ],
)
def test_trust_state(meta, path, expected):
    assert trust_state(meta, path) == expected
    assert expected in STATES


@pytest.mark.parametrize(
    "meta, norm, approved, expected",
    [
        ({}, {"reviewed": True}, False, REVIEWED),  # a format's own review field
        ({}, {"reviewed": False}, False, UNREVIEWED),
        ({}, {"tainted": True}, False, QUARANTINED),  # a format says the content came from outside
        ({}, {}, True, REVIEWED),  # these exact bytes approved in memtui's ledger
        ({"taint": "external"}, {}, True, REVIEWED),
        ({}, {"reviewed": None}, False, UNKNOWN),
    ],
)
def test_trust_rests_on_evidence(meta, norm, approved, expected):
    assert trust_state(meta, "notes/a.md", NormalPage.from_dict(norm), approved=approved) == expected


def test_is_tainted():
    assert is_tainted({"taint": "external"}, "a.md")
    assert is_tainted({}, "quarantine/a.md")
    assert not is_tainted({"taint": None, "origin": "agent"}, "notes/a.md")


@pytest.mark.parametrize(
    "meta, path, expected",
    [
        ({"tainted_by": "sessions/s1.md", "sources": ["x"]}, "q/a.md", "sessions/s1.md"),
        ({"session": "sessions/s2.md"}, "q/a.md", "sessions/s2.md"),
        ({"sources": ["sessions/s3.md#L4-L9", "other"]}, "q/a.md", "sessions/s3.md"),
        ({"sources": "sessions/s4.md#L1"}, "q/a.md", "sessions/s4.md"),
        ({"origin": "external"}, "q/a.md", "origin: external"),
        ({}, "quarantine/sub/a.md", "quarantine/sub"),
        ({}, "a.md", "(field root)"),
    ],
)
def test_taint_source_groups_the_quarantine_queue(meta, path, expected):
    assert taint_source(meta, path) == expected


def test_sample_field_trust_states(sample_field):
    field = Field.load(sample_field, use_cache=False)
    states = {path: field.trust(path) for path in field.pages}
    quarantined = sorted(p for p, s in states.items() if s == QUARANTINED)
    assert quarantined == [
        "quarantine/edi-214-status-codes.md",
        "quarantine/portlink-pricing-2027.md",
        "quarantine/trackstream-2027-list-price.md",
        "quarantine/vendor-pricing-update.md",
        "sessions/2026-11-18-web-research.md",  # the tainted session itself (evidence, never edited)
    ]
    assert sorted(p for p, s in states.items() if s == UNREVIEWED) == ["notes/hiring-plan-q1-2027.md"]
    assert states["decisions/public-api-trpc.md"] == REVIEWED
    groups = {taint_source(field.pages[p].meta, p) for p in quarantined if p.startswith("quarantine/")}
    assert groups == {"sessions/2026-11-18-web-research.md"}
