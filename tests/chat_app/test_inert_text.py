"""``inert``: any string from the network, made safe to show."""

import sys
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from chat_app.inert_text import _TREATED, inert

HOSTILE = ["\x1b", "\x07", "\r", "\b", "\x00", "\x7f", "\x9b", "\x9c", "\x85", "\t", "\n", "\u2028", "\u2029",
           "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200b",
           "\u200c", "\u200d", "\u200e", "\u200f", "\u2060", "\u2064", "\ufeff", "\u061c", "\u00ad", "\U000e0041",
           "\ud800", "\udfff", "\ufe0f", "\U0001f469", "\U0001f4bb", "\U0001f3fd"]
ANY_CHARACTER = st.characters(exclude_categories=())  # surrogates too: a str can hold them
TEXT = st.text(st.one_of(ANY_CHARACTER, st.sampled_from(HOSTILE)), max_size=60)
SHOWN_AS_IS = st.text(st.characters(exclude_categories=("Cc", "Cf", "Cs", "Zl", "Zp")), max_size=60)


def unsafe_characters(shown: str, lines: bool = False) -> list[str]:
    """What ``shown`` holds that could act on a terminal or reorder a line."""
    bad = []
    for at, char in enumerate(shown):
        category = unicodedata.category(char)
        if char == "\u200d":  # only inside an emoji sequence
            before, after = shown[at - 1:at], shown[at + 1:at + 2]
            if not (before and after and (before == "\ufe0f" or unicodedata.category(before) in ("So", "Sk"))
                    and unicodedata.category(after) == "So"):
                bad.append(char)
        elif category in ("Cc", "Cf", "Cs", "Zl", "Zp") and not (lines and char == "\n"):
            bad.append(char)
    return bad


@given(TEXT, st.booleans())
def test_nothing_that_acts_on_a_terminal_is_left(text, lines):
    assert unsafe_characters(inert(text, lines=lines), lines) == []


@given(SHOWN_AS_IS, st.booleans())
def test_printable_text_passes_unchanged(text, lines):
    assert inert(text, lines=lines) is text


@given(TEXT, st.booleans())
def test_inert_text_stays_as_it_is(text, lines):
    once = inert(text, lines=lines)
    assert inert(once, lines=lines) == once


@pytest.mark.parametrize("text, shown", [
    ("\x1b]0;owned\x07after", "␛]0;owned␇after"),  # OSC 0: a window title
    ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "␛]8;;http://x␛\\link␛]8;;␛\\"),  # OSC 8: a hidden link
    ("\x1b[31mred\x1b[0m", "␛[31mred␛[0m"),
    ("\x1b[2K\x1b[2J\x1b[H", "␛[2K␛[2J␛[H"),
    ("typed\rover", "typed␍over"),
    ("abc\b\b\bxyz", "abc␈␈␈xyz"),
    ("\x9b31m\x9d0;t\x9c", "\ufffd31m\ufffd0;t\ufffd"),  # C1: CSI, OSC, ST
    ("\x7f", "␡"),
    ("good \u202edab", "good dab"),  # the override goes; the letters stay in their order
    ("a\u2066b\u2069c\u200bd\ufeff", "abcd"),
    ("one\ntwo\u2028three", "one␊two␊three"),
    ("a\tb", "a   b"),
])
def test_each_kind_of_hostile_character_is_pictured_or_removed(text, shown):
    assert inert(text) == shown


def test_newlines_stay_where_several_lines_are_shown():
    assert inert("one\ntwo\u2029three\r", lines=True) == "one\ntwo\nthree␍"


@pytest.mark.parametrize("emoji", ["👩\u200d💻", "🏳\ufe0f\u200d🌈", "👩🏽\u200d🚀", "❤\ufe0f\u200d🔥"])
def test_a_joiner_inside_an_emoji_sequence_is_kept(emoji):
    assert inert(emoji) == emoji
    assert inert("a\u200db") == "ab" and inert("\u200d👩") == "👩" and inert("👩\u200d") == "👩"


def test_every_placeholder_takes_one_cell():
    for char in [chr(c) for c in (*range(0x20), 0x7F, 0x80, 0x9F) if c != 0x09]:  # a tab: spaces
        assert cell_len(inert(char)) == 1, hex(ord(char))


def test_every_control_format_and_separator_character_is_treated():
    """The pattern lists Unicode's format characters by hand (``re`` has no
    categories): it must cover every one this Python knows."""
    missed = [hex(code) for code in range(sys.maxunicode + 1)
              if unicodedata.category(chr(code)) in ("Cc", "Cf", "Cs", "Zl", "Zp") and not _TREATED.match(chr(code))]
    assert missed == []


def test_log_lines_are_written_inert():
    import logging

    from chat_app.cli import InertLines

    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "from %s: %s", ("mal\u202elory", "\x1b]0;t\x07\n2"),
                               None)
    assert InertLines("sds-chat: %(message)s").format(record) == "sds-chat: from mallory: ␛]0;t␇\n2"
