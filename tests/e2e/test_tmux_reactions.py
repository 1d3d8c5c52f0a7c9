"""The quick-reaction picker in a real terminal (tmux) at 80x24, between two
clients on hosts of the test LAN: its box stays square though emoji are two
columns wide (as tmux counts them), and a digit reacts at once, seen by the
other; the same again takes it back, Alt+Up, a, the digit and the text
after them sent as one burst. (Narrow layouts, where the choices
wrap, are laid out by Textual alike: tests/tui/test_reaction_picker.py.)"""

import ctypes
import locale
import shutil

import pytest

from .test_tmux import clients, screen, tmux, wait_screen  # noqa: F401 (clients: the fixture)
from .test_tmux_client import wait_gone

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")]

CORNERS = "╭╮╰╯│"


def cells(text: str) -> list[int]:
    """The column each character of a captured row starts at, counted as tmux
    counts it: with the C library's wcwidth ("❤️" is one column there, and
    two in Textual's reckoning)."""
    locale.setlocale(locale.LC_CTYPE, "C.UTF-8")
    wcwidth = ctypes.CDLL(None).wcwidth
    wcwidth.argtypes = [ctypes.c_wchar]
    starts, column = [], 0
    for char in text:
        starts.append(column)
        column += max(0, wcwidth(char))
    return starts


def picker_edges(shown: str) -> list[list[int]]:
    """For each row of the picker's box, the columns its border is drawn at."""
    rows = shown.splitlines()
    top = next(i for i, row in enumerate(rows) if "╭─ React" in row)
    bottom = next(i for i in range(top, len(rows)) if "╰" in rows[i])
    return [[column for column, char in zip(cells(row), row, strict=True) if char in CORNERS][-2:]
            for row in rows[top:bottom + 1]]


def pick(session: str, *then: str) -> None:
    """Alt+Up (the newest message picked), a, and ``then``, in one send-keys:
    one burst, which the client reads in the order typed."""
    tmux("send-keys", "-t", session, "M-Up", "a", *then)


def test_the_picker_is_square_at_80x24_and_a_digit_reacts_then_takes_it_back(clients):  # noqa: F811
    alice, bob = clients("alice"), clients("bob")
    for session in (alice, bob):
        tmux("resize-window", "-t", session, "-x", "80", "-y", "24")
    wait_screen(alice, "● bob")
    wait_screen(bob, "● alice")
    tmux("send-keys", "-t", bob, "hi alice", "Enter")
    wait_screen(alice, "bob │ hi alice")

    pick(alice)
    shown = wait_screen(alice, "╭─ React")
    edges = picker_edges(shown)
    assert len(edges) == 4 and all(row == edges[0] for row in edges), shown  # one row of choices, a hint
    assert "9 +1" in shown
    tmux("send-keys", "-t", alice, "2")
    wait_gone(alice, "╭─ React")
    wait_screen(bob, "│ ❤️ 1")  # under bob's message, at once

    pick(alice, "2", "s", "o")  # the same again: taken back; what follows is typed in the input
    wait_gone(bob, "│ ❤️ 1")
    wait_screen(alice, "▊  so ")
    assert "bob │ hi alice" in screen(bob)
