"""Issue 12, item 11: every invisible character is shown, legitimate joiners are left alone.

The text-safety table missed U+2061-2064, U+3164, U+115F, U+034F, U+17B4-17B5,
U+180B-180D, variation selectors and U+2028/2029. It now covers every format
character (Unicode category Cf) plus the known fillers; joiners and variation
selectors count only where they can hide text.
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest

from memtui.field.checks import run_checks
from memtui.field.field import Field
from memtui.store.edit_buffer import open_buffer, to_bytes
from memtui.textsafety import find_hazards, has_hazards, one_line, visible
from tests.helpers import write_page
from tests.helpers_tui import SIZE, make_app, rendered_text, wait_ready

MISSED = {
    "function application": "\u2061",
    "invisible times": "\u2062",
    "invisible separator": "\u2063",
    "invisible plus": "\u2064",
    "hangul filler": "\u3164",
    "hangul choseong filler": "\u115f",
    "hangul jungseong filler": "\u1160",
    "halfwidth hangul filler": "\uffa0",
    "combining grapheme joiner": "\u034f",
    "khmer inherent vowel aq": "\u17b4",
    "khmer inherent vowel aa": "\u17b5",
    "mongolian fvs1": "\u180b",
    "mongolian fvs3": "\u180d",
    "variation selector 16": "\ufe0f",
    "variation selector 17": "\U000e0100",
    "line separator": "\u2028",
    "paragraph separator": "\u2029",
    "deprecated format": "\u206a",
    "interlinear annotation": "\ufff9",
}

# Real text that needs the same characters: never a finding.
LEGITIMATE = {
    "persian zwnj": "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # می‌خواهم
    "bengali zwj": "\u0995\u09cd\u200d\u09b7",
    "devanagari zwnj": "\u0915\u094d\u200c\u0937",
    "emoji zwj family": "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "emoji vs16 and zwj": "\u2764\ufe0f\u200d\U0001f525",
    "skin tone zwj": "\U0001f469\U0001f3fd\u200d\U0001f4bb",
    "keycap": "1\ufe0f\u20e3",
    "text-style heart": "\u2764\ufe0e",
    "ideographic variation": "\u8fbb\U000e0100",
    "mongolian fvs": "\u1820\u180b",
}


@pytest.mark.parametrize("name", sorted(MISSED))
def test_missed_invisibles_are_hazards(name: str) -> None:
    char = MISSED[name]
    text = f"pay{char}pal"
    assert has_hazards(text)
    shown = visible(text)
    assert char not in shown and "\u27e8" in shown
    (hazard,) = find_hazards(text)
    assert (hazard.line, hazard.column, hazard.kind) == (1, 4, "zero-width")


def test_every_format_character_of_this_python_is_covered() -> None:
    missing = [
        f"U+{code:04X}"
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) == "Cf" and not has_hazards(f"a{chr(code)}a")
    ]
    assert missing == []


@pytest.mark.parametrize("name", sorted(LEGITIMATE))
def test_legitimate_joiners_and_selectors_are_left_alone(name: str) -> None:
    text = f"word {LEGITIMATE[name]} word"
    assert not has_hazards(text)
    assert visible(text) == text == one_line(text)
    assert find_hazards(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "pass\u200cword",  # a joiner between Latin letters hides nothing legitimate
        "\u0645\u200c\u200c\u200c\u0645",  # a run of joiners can encode a hidden message
        "\U0001f600" + "".join(chr(0xE0100 + b) for b in b"ignore previous"),  # emoji smuggling
        "a\ufe0f",  # a variation selector after a Latin letter
        "\u200dstart",
    ],
)
def test_joiners_and_selectors_that_can_hide_text_are_hazards(text: str) -> None:
    assert has_hazards(text)
    assert "\u27e8" in visible(text)


def test_a_page_with_invisibles_gets_a_finding_per_character(tmp_path: Path) -> None:
    root = tmp_path / "field"
    hidden = "".join(MISSED.values())
    write_page(
        root, "notes/a.md", f"---\ntitle: A\n---\n- Send{hidden} it [stated]\n- {LEGITIMATE['persian zwnj']} [stated]\n"
    )
    found = [f for f in run_checks(Field.load(root, use_cache=False)) if f.rule == "zero-width"]
    assert len(found) == len(MISSED) and all(f.line == 4 for f in found)


def test_the_editor_shows_invisibles_as_placeholders_and_keeps_every_byte() -> None:
    text = f"- Send\u2061 it \u3164 now [stated]\n- {LEGITIMATE['persian zwnj']} {LEGITIMATE['emoji vs16 and zwj']}\n"
    buffer = open_buffer(text.encode())
    first, second = buffer.text.split("\n")[:2]
    assert "\u2061" not in first and "\u3164" not in first and buffer.hidden_count == 2
    assert second == f"- {LEGITIMATE['persian zwnj']} {LEGITIMATE['emoji vs16 and zwj']}"
    assert to_bytes(buffer, buffer.text) == text.encode()
    edited = buffer.text.replace("now", "today")
    assert to_bytes(buffer, edited) == text.replace("now", "today").encode()


async def test_the_page_view_shows_every_invisible(tmp_path: Path) -> None:
    root = tmp_path / "field"
    hidden = "".join(MISSED.values())
    write_page(root, "notes/a.md", f"---\ntitle: Pay{hidden}pal\n---\n- Send{hidden} it [stated]\n")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_page("notes/a.md")
        await pilot.pause()
        body = rendered_text(app.screen.query_one("#page-body"), width=400)
        for char in MISSED.values():
            assert char not in body
        assert "\u27e8FA\u27e9" in body and "\u27e8HF\u27e9" in body and "\u27e8LSEP\u27e9" in body
        assert all(char not in app.screen.title for char in MISSED.values())
