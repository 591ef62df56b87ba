"""Issue 12, item 10: no string from a field reaches the terminal as control sequences, on any screen.

The diff header (proposal queue, three-way view, the editor's "Show diff") was
built from the raw page path, and the command palette showed a page's ``id:``
raw: an escape sequence in a file name wrote to the clipboard (OSC 52), made
hyperlinks or set the title. This test fills a field with such strings (file and
folder names, ids, titles, subjects, dates, sources, supersedes, links, a
proposal's job, rationale, evidence and pages, a reviewer's name and reason)
and walks every screen, checking every character Textual would send to the
terminal as text.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from memtui.tui.screens.dialogs import ChoiceDialog, TextDialog
from memtui.tui.screens.editor import EditorScreen, MergeScreen
from memtui.tui.screens.history import HistoryScreen
from memtui.tui.screens.page import PageScreen
from memtui.tui.screens.proposals import ProposalsScreen, ThreeWayScreen
from memtui.tui.screens.quarantine import QuarantineScreen
from tests.helpers import write_page
from tests.helpers_review import approve_proposal, sha, staging_proposal
from tests.helpers_tui import SIZE, make_app, search_results, wait_ready

# What a hostile name or value carries: a clipboard write (OSC 52), a window title, a
# hyperlink, clear-screen, an 8-bit CSI, a bell, a right-to-left override.
PAYLOAD = "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b]8;;https://evil.example\x1b\\\x1b[2J\x9b31m\u202e"
# The same inside YAML double quotes.
YAML_PAYLOAD = "\\e]52;c;cHduZWQ=\\a\\e]0;owned\\a\\e]8;;https://evil.example\\e\\\\\\e[2J\\x9b31m\\u202e"
# Anything of this kind in the text Textual sends to the terminal is a leak.
LEAK = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

NAME = PAYLOAD.replace("/", "")  # a file name holds anything but "/"
PAGE = f"notes/evil{NAME}.md"
FOLDER_PAGE = f"evil{NAME}dir/inside.md"
QUARANTINED = f"quarantine/q{NAME}.md"
TRANSCRIPT = f"sessions/t{NAME}.md"
CITING = f"notes/cites{NAME}.md"
PROPOSAL = "2026-12-01-evil-01"
STALE = "2026-12-01-evil-02"


def frontmatter(title: str, **extra: str) -> str:
    lines = [
        "---",
        f'id: "mem{YAML_PAYLOAD}"',
        f'title: "{title}{YAML_PAYLOAD}"',
        f'subject: "topic/{YAML_PAYLOAD}"',
        f'kind: "semantic{YAML_PAYLOAD}"',
        f'origin: "agent{YAML_PAYLOAD}"',
        f'valid_from: "2026{YAML_PAYLOAD}"',
        f'valid_to: "2027{YAML_PAYLOAD}"',
        f'sources: ["sessions/s{YAML_PAYLOAD}.md#L1"]',
        f'supersedes: ["mem_old{YAML_PAYLOAD}"]',
        *(f"{key}: {value}" for key, value in extra.items()),
        "---",
    ]
    return "\n".join(lines) + "\n"


BODY = (
    f"# Heading {PAYLOAD}\n\n"
    f"- A claim {PAYLOAD} [cite:1] [stated]\n"
    f"- See [[target{PAYLOAD}]] and [docs](https://evil.example/{PAYLOAD}) [observed]\n"
)


@pytest.fixture
def hostile_field(sample_field: Path, monkeypatch) -> Path:
    monkeypatch.setenv("MEMTUI_REVIEWER", f"maya{PAYLOAD}")
    write_page(sample_field, PAGE, frontmatter("Evil page") + BODY)
    write_page(sample_field, FOLDER_PAGE, frontmatter("Inside an evil folder") + BODY)
    write_page(sample_field, f"notes/old{NAME}.md", frontmatter("Older") + BODY)
    write_page(
        sample_field,
        QUARANTINED,
        frontmatter("Quarantined", taint="external", reviewed="false", move_to=f'"notes{YAML_PAYLOAD}"') + BODY,
    )
    write_page(sample_field, TRANSCRIPT, f"# Transcript {PAYLOAD}\n\n- said {PAYLOAD}\n- and {PAYLOAD}\n")
    yaml_name = YAML_PAYLOAD.replace("/", "")
    write_page(
        sample_field,
        CITING,
        f'---\ntitle: "Cites{YAML_PAYLOAD}"\nsources: ["sessions/t{yaml_name}.md#L3-L4"]\n---\n'
        f"- A claim {PAYLOAD} [cite:1] [stated]\n",
    )
    old = (sample_field / PAGE).read_bytes()
    staging_proposal(
        sample_field,
        PROPOSAL,
        job=f"dedupe{PAYLOAD}",
        rationale=f"Because {PAYLOAD}",
        files={PAGE: old + f"- proposed {PAYLOAD} [stated]\n".encode(), f"notes/new{NAME}.md": BODY.encode()},
        base={PAGE: sha(old), f"notes/new{NAME}.md": None},
    )
    staging_proposal(
        sample_field, STALE, job="expire", files={PAGE: old + b"- stale [stated]\n"}, base={PAGE: "0" * 64}
    )
    # An approved clean proposal, decided by a reviewer with a hostile name and reason.
    approve_proposal(sample_field, "2026-11-27-dedupe-01", reason=f"fine {PAYLOAD}")
    return sample_field


def sent_to_terminal(app) -> str:
    """Every character Textual would write to the terminal as text for the current screen
    (cursor movements and styles, which Textual makes itself, left out)."""
    update = app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    console = Console(width=SIZE[0], height=SIZE[1], file=io.StringIO(), force_terminal=True, legacy_windows=False)
    return "".join(segment.text for segment in console.render(update) if not segment.control)


def assert_inert(app, where: str) -> None:
    text = sent_to_terminal(app)
    leaks = sorted({f"U+{ord(m.group()):04X}" for m in LEAK.finditer(text)})
    assert not leaks, f"{where}: {leaks} would reach the terminal"
    title = f"{app.title} {app.sub_title} {app.screen.title or ''} {app.screen.sub_title or ''}"
    assert not LEAK.search(title), f"{where}: the title holds a control character"


async def settle(app, pilot, screen_type=None, *, rounds: int = 100) -> None:
    """Wait for ``screen_type`` (if given), then for the work it started; a worker waiting
    on a dialog is left waiting."""
    for _ in range(rounds):
        await pilot.pause(0.02)
        if screen_type is None or isinstance(app.screen, screen_type):
            break
    for _ in range(rounds):
        busy = [
            w
            for w in app.workers
            if w.is_running and "dialog" not in w.group and "save" not in w.group and "decide" not in w.group
        ]
        if not busy:
            break
        await pilot.pause(0.02)
    await pilot.pause()


async def show_review(app, pilot, screen, proposal_id: str) -> None:
    """Highlight a proposal as a user's cursor would and wait for its review."""
    screen._highlight(proposal_id)
    for _ in range(200):
        await settle(app, pilot)
        if screen.review is not None and screen.review.proposal.id == proposal_id:
            return
    raise AssertionError(f"the review of {proposal_id} never showed")


async def test_every_screen_shows_hostile_names_ids_and_paths_as_inert_text(hostile_field: Path) -> None:
    app = make_app(hostile_field, use_index=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot, index=True)
        assert PAGE in app.session.field.pages and QUARANTINED in app.session.field.pages
        assert_inert(app, "browse list")
        await pilot.press("v")
        await settle(app, pilot)
        tree = app.screen.query_one("PageTree")
        for node in list(tree._walk(tree.root)):
            node.expand()
        await settle(app, pilot)
        assert_inert(app, "browse tree")
        await pilot.press("v")

        for page in (PAGE, FOLDER_PAGE, QUARANTINED):
            app.open_page(page)
            await settle(app, pilot, PageScreen)
            assert_inert(app, f"page view of {page!r}")
            await pilot.press("r")
            await settle(app, pilot)
            assert_inert(app, f"raw view of {page!r}")
            await pilot.press("h")
            await settle(app, pilot, HistoryScreen)
            assert_inert(app, f"history of {page!r}")
            await pilot.press("escape")
            await settle(app, pilot)
            await pilot.press("escape")
            await settle(app, pilot)

        # A citation of a transcript with a hostile name: the claim beside its evidence.
        from memtui.tui.screens.provenance import ProvenanceScreen

        assert TRANSCRIPT in app.session.field.pages
        app.open_page(CITING)
        await settle(app, pilot, PageScreen)
        app.screen.follow_link(next(i for i, link in enumerate(app.screen.links) if link.kind == "cite"))
        await settle(app, pilot, ProvenanceScreen)
        assert isinstance(app.screen, ProvenanceScreen) and app.screen.path == TRANSCRIPT
        assert_inert(app, "a claim beside its evidence")
        await pilot.press("i")
        await settle(app, pilot)
        assert_inert(app, "a claim beside its evidence, with the side panel")
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)

        # A link with an escape sequence in its URL: the confirmation shows it inert.
        app.open_page(PAGE)
        await settle(app, pilot, PageScreen)
        page_screen = app.screen
        opened: list[str] = []
        app.open_url = lambda url, **kw: opened.append(url)
        url = next(i for i, link in enumerate(page_screen.links) if link.kind == "url")
        page_screen.follow_link(url)
        await settle(app, pilot)
        assert_inert(app, "link dialog")
        await pilot.press("escape")
        await settle(app, pilot)
        assert opened == []

        # The editor, and the three-way view after someone else changed the same line.
        await pilot.press("e")
        await settle(app, pilot, EditorScreen)
        assert_inert(app, "editor")
        editor = app.screen
        claim = f"- A claim {PAYLOAD} [cite:1] [stated]"
        editor.area.text = editor.area.text.replace("[cite:1] [stated]", "[cite:1] [observed]", 1)
        on_disk = (hostile_field / PAGE).read_bytes()
        (hostile_field / PAGE).write_bytes(
            on_disk.replace(claim.encode(), f"- A claim changed by an agent {PAYLOAD} [stated]".encode(), 1)
        )
        await pilot.press("ctrl+s")
        await settle(app, pilot, MergeScreen)
        assert_inert(app, "editor: both sides changed the same line (three-way view)")
        await pilot.press("escape")
        await settle(app, pilot)
        editor.saved_text = editor.area.text  # leave without the unsaved-edits question
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("escape")
        await settle(app, pilot)

        # The command palette, searching by a hostile id and path.
        await pilot.press("ctrl+p")
        await settle(app, pilot)
        await pilot.press(*"mem")
        await settle(app, pilot, rounds=30)
        assert_inert(app, "command palette (ids)")
        await pilot.press(*" evil")
        await settle(app, pilot, rounds=30)
        assert_inert(app, "command palette (paths)")
        await pilot.press("escape")
        await settle(app, pilot)

        # Search results.
        app.action_open_search()
        await settle(app, pilot)
        app.screen.query_one("#query").value = "claim"
        await search_results(pilot, "claim")
        await settle(app, pilot)
        assert any("evil" in hit.path for hit in app.screen.hits), "the hostile pages are found"
        assert_inert(app, "search results")

        app.switch_mode("overview")
        await settle(app, pilot)
        assert type(app.screen).__name__ == "OverviewScreen"
        assert_inert(app, "overview")

        app.switch_mode("quarantine")
        await settle(app, pilot, QuarantineScreen)
        for _ in range(100):
            if app.screen.queue is not None:
                break
            await pilot.pause(0.02)
        app.screen._highlight(QUARANTINED)
        await settle(app, pilot)
        assert_inert(app, "quarantine queue")
        await pilot.press("x")
        await settle(app, pilot, TextDialog)
        assert_inert(app, "quarantine reject dialog")
        await pilot.press("escape")
        await settle(app, pilot)

        app.switch_mode("proposals")
        await settle(app, pilot, ProposalsScreen)
        screen = app.screen
        for _ in range(100):
            if screen.queue is not None:
                break
            await pilot.pause(0.02)
        for proposal_id in (PROPOSAL, STALE):
            await show_review(app, pilot, screen, proposal_id)
            assert_inert(app, f"proposal {proposal_id} (unified)")
            await pilot.press("s")
            await settle(app, pilot)
            assert_inert(app, f"proposal {proposal_id} (side by side)")
            await pilot.press("s")
        await pilot.press("a")  # the stale one: the three-way view comes first
        await settle(app, pilot, ThreeWayScreen)
        assert_inert(app, "three-way view")
        await pilot.press("escape")
        await settle(app, pilot)
        await pilot.press("d")  # decided proposals: the hostile reviewer name and reason
        await settle(app, pilot)
        await show_review(app, pilot, screen, "2026-11-27-dedupe-01")
        assert_inert(app, "an approved proposal")
        await pilot.press("u")  # revert shows what it changes first
        await settle(app, pilot, ChoiceDialog)
        assert_inert(app, "revert dialog")
        await pilot.press("escape")
        await settle(app, pilot)

        await pilot.press("question_mark")
        await settle(app, pilot)
        assert_inert(app, "help")
        await pilot.press("escape")
        await settle(app, pilot)

        # A notification naming a hostile path (a page changed on disk).
        (hostile_field / FOLDER_PAGE).write_bytes((hostile_field / FOLDER_PAGE).read_bytes() + b"- more [stated]\n")
        app.session.reload_paths([FOLDER_PAGE])
        await settle(app, pilot)
        assert_inert(app, "notification")
        assert app.is_running
