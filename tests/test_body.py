"""The page body: source tags, claim lines, inline history, wikilinks, citations, sources lists."""

from __future__ import annotations

import pytest

from memtui.field import body as body_mod
from memtui.field.body import inline_chains, parse_body, parse_claim


def kinds(text: str, first_line: int = 1) -> dict[int, str]:
    return {line.number: line.kind for line in parse_body(text, first_line).lines}


def test_source_tags_are_counted_case_insensitively():
    body = parse_body(
        "Maya said the renewal is signed today. [Stated]\n"
        "The log shows three retries per hour. [observed]\n"
        "So the retry budget is too small overall. [INFERRED]\n"
        "We could raise the budget to ten. [suggested]\n"
    )
    assert body.tag_counts == {"stated": 1, "observed": 1, "inferred": 1, "suggested": 1}
    assert [line.tags for line in body.lines] == [["stated"], ["observed"], ["inferred"], ["suggested"]]
    assert body.untagged_claim_lines == []


def test_claim_lines_without_a_tag_are_listed_with_file_line_numbers():
    text = "# Pilot\n\nWeekly check-in on Thursdays with Luis.\nShort.\n- Tagged claim about the pilot [stated]\n"
    body = parse_body(text, first_line=10)
    assert body.untagged_claim_lines == [12]
    assert kinds(text, 10) == {10: "heading", 11: "blank", 12: "claim", 13: "note", 14: "claim"}
    assert body.claim_line_count == 2


def test_navigation_and_sources_sections_are_not_claims():
    text = (
        "Context: [[Harbor]], [[Maya Okafor]]\n"
        "Decision records are listed below:\n"
        "## See also\n"
        "- Other pages worth reading about this topic\n"
        "## Sources\n"
        "1. sessions/2026-01-14-kickoff.md#L3 the kickoff transcript\n"
    )
    assert parse_body(text).untagged_claim_lines == []


def test_fenced_code_is_data_not_claims_tags_or_links():
    text = (
        "Real claim with enough words here [stated]\n"
        "```yaml\n"
        "- a code line that looks like a claim [stated] [[Not A Link]] [cite:9]\n"
        "~~~\n"
        "```\n"
        "~~~\n"
        "[[Also code]]\n"
        "~~~\n"
        "After the fences, a line linking [[Real Link]]\n"
    )
    body = parse_body(text)
    assert body.tag_counts["stated"] == 1
    assert [link.target for link in body.links] == ["Real Link"]
    assert body.citations == []
    assert [k for k in kinds(text).values()] == [
        "claim",
        "fence",
        "code",
        "code",
        "fence",
        "fence",
        "code",
        "fence",
        "claim",
    ]


def test_quotes_tables_rules_and_html_comments_are_not_untagged_claims():
    text = (
        "> A quoted line from the customer email here\n"
        "| col a | col b |\n"
        "|-------|-------|\n"
        "---\n"
        "<!-- a hidden comment with several words -->\n"
        "![an image with alt text](img.png)\n"
    )
    body = parse_body(text)
    assert [line.kind for line in body.lines] == ["quote", "table", "table", "rule", "note", "note"]
    assert body.untagged_claim_lines == []


def test_crlf_bodies_give_the_same_lines_without_carriage_returns():
    lf = "# T\n\nA claim with enough words [stated]\n- ~~Key: old [stated] (a 2026-01-01)~~ superseded 2026-02-01\n"
    crlf = lf.replace("\n", "\r\n")
    a, b = parse_body(lf), parse_body(crlf)
    assert [(x.number, x.kind, x.text) for x in a.lines] == [(x.number, x.kind, x.text) for x in b.lines]
    assert a.claims == b.claims
    assert not any("\r" in line.text for line in b.lines)


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "Public API: tRPC [stated] (planning 2026-08-20)",
            ("Public API", "tRPC", "stated", "planning 2026-08-20", "2026-08-20"),
        ),
        ("Release cadence: weekly, Tuesdays [Stated]", ("Release cadence", "weekly, Tuesdays", "stated", None, None)),
        ("A plain sentence with no key [observed]", (None, "A plain sentence with no key", "observed", None, None)),
        ("Meeting at 10:30 moved to noon", (None, "Meeting at 10:30 moved to noon", None, None, None)),
        (
            "Owner: Dana (from 2026-01-01 to 2026-03-01)",
            ("Owner", "Dana", None, "from 2026-01-01 to 2026-03-01", "2026-03-01"),
        ),
    ],
)
def test_parse_claim_splits_key_value_tag_and_source(text, expected):
    claim = parse_claim(text, line=7, struck=False, superseded_on=None)
    assert (claim.key, claim.value, claim.tag, claim.source, claim.source_date) == expected
    assert claim.line == 7


@pytest.mark.parametrize(
    "line, superseded_on",
    [
        ("- ~~Public API: REST [stated] (kickoff 2026-01-14)~~ superseded 2026-04-03", "2026-04-03"),
        ("* ~~Public API: REST [stated]~~ Superseded on 2026-04-03.", "2026-04-03"),
        ("1. ~~Public API: REST [stated]~~ superseded: 2026-04-03", "2026-04-03"),
        ("~~Public API: REST [stated]~~ (dropped)", None),
    ],
)
def test_struck_lines_are_history_with_their_date(line, superseded_on):
    body = parse_body(line + "\n")
    assert body.lines[0].kind == "struck"
    (claim,) = body.claims
    assert claim.struck and claim.key == "Public API" and claim.value == "REST" and claim.tag == "stated"
    assert claim.superseded_on == superseded_on


HARBOR_DECISIONS = (
    "## Standing decisions\n"
    "- ~~Public API: REST [stated] (kickoff 2026-01-14)~~ superseded 2026-04-03\n"
    "- ~~Public API: GraphQL [stated] (arch review 2026-04-03)~~ superseded 2026-08-20\n"
    "- Public API: tRPC [stated] (planning 2026-08-20)\n"
    "- ~~Release cadence: weekly, Tuesdays [stated] (kickoff 2026-01-14)~~ superseded 2026-05-04\n"
    "- Release cadence: every other Tuesday [stated] (all-hands 2026-05-04)\n"
    "- Hosting: Fly.io, two regions [stated]\n"
)


def test_inline_chains_group_struck_lines_with_their_live_line_by_key():
    chains = inline_chains(parse_body(HARBOR_DECISIONS).claims)
    assert [[(c.value, c.struck) for c in chain] for chain in chains] == [
        [("REST", True), ("GraphQL", True), ("tRPC", False)],
        [("weekly, Tuesdays", True), ("every other Tuesday", False)],
    ]  # Hosting has no history, so it is not a chain


def test_inline_chain_keys_compare_case_insensitively():
    text = "- ~~public api: REST [stated]~~ superseded 2026-04-03\n- Public API: tRPC [stated]\n"
    (chain,) = inline_chains(parse_body(text).claims)
    assert [c.value for c in chain] == ["REST", "tRPC"]


def test_keyless_struck_lines_join_the_next_live_line():
    text = (
        "- ~~We ship every Tuesday morning [stated]~~ superseded 2026-05-04\n"
        "- Release cadence: every other Tuesday [stated]\n"
        "- ~~Standups happen at nine daily [stated]~~ superseded 2026-06-01\n"
        "- Standups happen at ten daily now [stated]\n"
    )
    chains = inline_chains(parse_body(text).claims)
    assert [[c.line for c in chain] for chain in chains] == [[1, 2], [3, 4]]


def test_a_struck_line_joins_the_next_line_only_when_it_says_it_was_superseded():
    """An unrelated live line below a struck item is not its new version (seen in a real
    vault: a dropped item "replaced" by the next bullet, reported as its current value)."""
    text = (
        "- ~~Daily standup~~ removed (replaced by [[new1]])\n"
        "- Retro moved to Friday\n"
        "\n"
        "- ~~Deploys on Mondays [stated]~~ superseded 2026-05-04\n"
        "\n"
        "- Deploys on Thursdays [stated]\n"
        "- ~~Office: Lisbon [stated]~~\n"
        "- Office: Porto [stated]\n"
    )
    chains = inline_chains(parse_body(text).claims)
    assert [[c.line for c in chain] for chain in chains] == [[1], [4], [7, 8]]


def test_a_struck_line_with_no_successor_is_still_history():
    (chain,) = inline_chains(parse_body("- ~~Dropped idea about caching [suggested]~~\n").claims)
    assert len(chain) == 1 and chain[0].struck


def test_wikilinks_with_labels_sections_and_columns():
    body = parse_body("See [[Harbor]] and [[decisions/public-api-trpc|the decision]] and [[TrackStream#Pricing]].\n")
    assert [(link.target, link.label, link.section, link.line, link.column) for link in body.links] == [
        ("Harbor", None, None, 1, 5),
        ("decisions/public-api-trpc", "the decision", None, 1, 20),
        ("TrackStream", None, "Pricing", 1, 67),
    ]


def test_citations_single_and_multiple_and_markdown_links():
    body = parse_body(
        'Claim one [cite:1] and two [cite: 2, 3] and [CITE:4]. [stated]\nSee [docs](https://x.example/a "t").\n'
    )
    assert [(c.number, c.line) for c in body.citations] == [(1, 1), (2, 1), (3, 1), (4, 1)]
    assert [(m.text, m.target, m.line) for m in body.markdown_links] == [("docs", "https://x.example/a", 2)]


def test_numbered_sources_list_under_a_sources_heading():
    text = (
        "1. not a source: this list is not under a Sources heading\n"
        "## Sources\n"
        "1. sessions/2026-01-14-kickoff.md#L16-L18\n"
        "2) sessions/2026-04-03-arch-review.md\n"
        "[3]: https://example.net/post\n"
        "- an unnumbered note in the sources section\n"
        "## References\n"
        "1. nas://box/journal.md\n"
    )
    assert parse_body(text).numbered_sources == [
        "sessions/2026-01-14-kickoff.md#L16-L18",
        "sessions/2026-04-03-arch-review.md",
        "https://example.net/post",
        "nas://box/journal.md",
    ]


def test_headings_are_recorded_with_level_and_section_names():
    body = parse_body("# Title #\n## Why it changed (again)\ntext with several words [stated]\n")
    assert body.headings == [(1, 1, "Title"), (2, 2, "Why it changed (again)")]
    assert body.lines[2].section == "why it changed again"


def test_source_tags_constant_matches_the_format():
    assert body_mod.SOURCE_TAGS == ("stated", "observed", "inferred", "suggested")


@pytest.mark.parametrize(
    "line",
    ["x" * 100_000, "x y" * 30_000, "` " * 50_000, "[[ " * 30_000, "( " * 50_000],
    ids=["one word", "short words", "backticks", "brackets", "parentheses"],
)
def test_one_very_long_line_is_read_in_linear_time(line):
    """A page of one long word (a base64 blob, minified JSON) took seconds per 20,000 characters:
    the three-words test backtracked from every position. Quadratic at 100,000 characters is
    over a minute; linear is milliseconds: the bound only tells the two apart."""
    import time

    started = time.process_time()
    body = parse_body(f"- {line} [stated]\n", 1)
    assert body.lines and time.process_time() - started < 5.0


def test_conflict_markers_are_found_outside_code_only_when_complete():
    from memtui.field.body import conflict_markers

    text = (
        "intro\n<<<<<<< HEAD\nours\n||||||| base\nold\n=======\ntheirs\n>>>>>>> topic\n"  # diff3 style: lines 2-8
        "~~~\n<<<<<<< a\n=======\n>>>>>>> b\n~~~\n"  # in a fence: not one
        "<<<<<<< only a start\nno end\n"  # incomplete: not one
        "Heading\n=======\n"  # a setext heading
    )
    assert conflict_markers(text) == [(2, 8)]
    assert conflict_markers(text, first_line=10) == [(11, 17)]
    assert conflict_markers("<<<<<<<<< eight\n=======\n>>>>>>>>> eight\n") == []
