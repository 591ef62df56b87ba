"""Editing text maps back to the exact bytes, changing only the lines that were edited."""

from __future__ import annotations

import pytest

from memtui.errors import MemtuiError
from memtui.store.edit_buffer import hidden_positions, open_buffer, to_bytes

ROUND_TRIP = [
    b"",
    b"no newline at the end",
    b"a\nb\n",
    b"a\r\nb\r\n",
    b"\xef\xbb\xbf---\r\nx: 1\r\n---\r\nbody\r\n",
    b"mixed\r\nendings\nhere\r\n",
    b"invalid \xff\xfe utf-8\n",
    "bidi \u202e and zero\u200bwidth\n".encode(),
    b"esc \x1b[2J osc \x1b]0;t\x07 del \x7f c1 \xc2\x9b\n",
    b"lone\rcarriage return\n",
    "separators \u2028 and \u2029 inside\n".encode(),
    "circled ① ② used as text\n".encode(),
]


@pytest.mark.parametrize("data", ROUND_TRIP)
def test_untouched_text_gives_the_same_bytes(data: bytes) -> None:
    buffer = open_buffer(data)
    assert to_bytes(buffer, buffer.text) == data


@pytest.mark.parametrize("data", ROUND_TRIP)
def test_editor_text_has_no_terminal_controls(data: bytes) -> None:
    text = open_buffer(data).text
    assert not any(ord(ch) < 0x20 and ch not in "\t\n" for ch in text)
    assert not any(0x80 <= ord(ch) < 0xA0 for ch in text)
    assert "\u202e" not in text and "\u200b" not in text and "\u2028" not in text
    assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)


def test_only_the_edited_line_changes_and_keeps_its_ending() -> None:
    data = b"\xef\xbb\xbfone\r\ntwo\nthree \x1b[1m\r\nfour"
    buffer = open_buffer(data)
    edited = buffer.text.replace("two", "TWO")
    assert to_bytes(buffer, edited) == b"\xef\xbb\xbfone\r\nTWO\nthree \x1b[1m\r\nfour"


def test_hidden_characters_in_an_edited_line_come_back() -> None:
    data = "keep \u202e this\n".encode()
    buffer = open_buffer(data)
    assert to_bytes(buffer, buffer.text.replace("keep", "KEEP")) == "KEEP \u202e this\n".encode()


def test_new_lines_take_the_dominant_ending() -> None:
    buffer = open_buffer(b"a\r\nb\r\nc\n")
    assert to_bytes(buffer, "a\nnew\nb\nc\n") == b"a\r\nnew\r\nb\r\nc\n"


def test_a_page_using_its_own_placeholder_literally_is_refused() -> None:
    with pytest.raises(MemtuiError) as error:
        open_buffer("\u241b and a real \x1b\n".encode())
    assert error.value.hint


def test_hidden_positions_name_what_is_hidden() -> None:
    buffer = open_buffer("x\u202ey\x1bz\n".encode())
    where = hidden_positions(buffer, buffer.text)
    assert [(line, column) for line, column, _ in where] == [(1, 2), (1, 4)]
    assert "RLO" in where[0][2] and where[1][2] == "\u241b"
