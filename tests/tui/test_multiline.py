"""Alt+Enter writes a message of several lines - also as most terminals send
it, ESC CR - and the client sends it as one, shows it under one nick, and the
store, an export and ``verify`` keep it exactly."""

import json
import subprocess
import sys

import pytest
from textual import events
from textual._xterm_parser import XTermParser

from chat_app.tui.widgets.channel_view import ChannelView

from .conftest import until
from .test_app import SIZE, bob_heard, screen_text, started, texts

TEXT = "first line\n  second, indented\nthird ⏎ as typed"


@pytest.mark.asyncio
@pytest.mark.slow  # a local Spark
async def test_a_multi_line_message_survives_the_wire_export_and_verify_exactly(make_app, bob_for, tmp_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = await bob_heard(app, pilot, bob_for)
        field = app.chat.input
        for line, new_line in (("first line", "alt+enter"), ("  second, indented", "shift+enter")):
            await pilot.press(*line, new_line)
        await pilot.press(*"third ")
        field.insert_text_at_cursor("⏎ as typed")  # a ⏎ of the text itself (pasted): the message keeps it
        assert field.value == TEXT and "first line⏎  second" in field.render_line(0).text
        await pilot.press("enter")
        await until(pilot, lambda: texts(app)[-1:] == [TEXT])
        got = bob.wait_for(lambda e: e["event"] == "delivered" and e["text"] == TEXT)
        assert field.value == ""
        await pilot.pause(0.1)
        shown = screen_text(app).splitlines()
        first = next(i for i, line in enumerate(shown) if "alice │ first line" in line)
        assert shown[first + 1].rstrip().endswith("│   second, indented")
        assert "│ third ⏎ as typed  " in shown[first + 2]  # then its delivery mark
        assert app.query_one(ChannelView).selected is None
    bob.thread.stop()
    exports = []
    for name in ("alice", "bob"):
        out = tmp_path / f"{name}.jsonl"
        run = subprocess.run([sys.executable, "-m", "chat_app.cli", "export", "--data-dir", str(tmp_path / name),
                              "--out", str(out)], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [r["content"] for r in rows if r["message_id"] == got["message_id"]] == [TEXT]
        exports.append(str(out))
    report = tmp_path / "report.json"
    run = subprocess.run([sys.executable, "-m", "chat_app.cli", "verify", *exports, "--report", str(report)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert json.loads(report.read_text())["verdict"] == "consistent"


def keys_read(data: str) -> list[str]:
    """The keys Textual's parser reads in ``data``, sent by the terminal at once
    and then nothing (so an Escape with nothing after it is read)."""
    parser = XTermParser()
    return [e.key for e in [*parser.feed(data), *parser.feed("")] if isinstance(e, events.Key)]


@pytest.mark.asyncio
async def test_alt_enter_sent_as_escape_and_cr_starts_a_new_line_and_escape_stays_escape(make_app):
    """xterm, tmux, GNOME Terminal and most others send Alt+Enter as ESC CR:
    one new line in the message, not Enter (which would send half of it).
    A terminal with the kitty keyboard protocol sends Alt+Enter and
    Shift+Enter as keys of their own. Escape alone, or before a key other
    than Enter, reads as it did."""
    app = make_app()
    typed = keys_read("first\x1b\rsecond\x1b[13;2uthird\x1b[13;3ufourth")
    assert typed == [*"first", "alt+enter", *"second", "shift+enter", *"third", "alt+enter", *"fourth"]
    assert keys_read("\x1b") == ["escape"] and keys_read("\x1b\x1b") == ["escape", "escape"]
    assert keys_read("\x1b2") == ["alt+2"] and keys_read("\r") == keys_read("\x1b[13u") == ["enter"]
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await pilot.press(*typed)
        assert app.chat.input.value == "first\nsecond\nthird\nfourth"
        await pilot.press(*keys_read("\r"))
        await until(pilot, lambda: texts(app)[-1:] == ["first\nsecond\nthird\nfourth"])
        assert app.chat.input.value == ""


@pytest.mark.asyncio
async def test_ctrl_j_starts_a_new_line_on_every_terminal(make_app):
    """A line feed (Ctrl+J) is a key of its own on every terminal, alone or after Escape."""
    assert keys_read("\n") == ["ctrl+j"] and keys_read("\x1b\n") == ["ctrl+j"]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await pilot.press(*"one", "ctrl+j", *"two")
        assert app.chat.input.value == "one\ntwo"
