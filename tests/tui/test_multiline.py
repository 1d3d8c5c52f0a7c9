"""Alt+Enter writes a message of several lines: the client sends it as one,
shows it under one nick, and the store, an export and ``verify`` keep it exactly."""

import json
import subprocess
import sys

import pytest

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


@pytest.mark.asyncio
async def test_ctrl_j_starts_a_new_line_where_the_terminal_reads_alt_enter_as_enter(make_app):
    """Most terminals send Alt+Enter as Escape and CR, which Textual reads as
    Enter; a line feed (Ctrl+J) is a key of its own on every terminal."""
    from textual._xterm_parser import XTermParser

    assert [e.key for e in XTermParser().feed("\n")] == ["ctrl+j"]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await pilot.press(*"one", "ctrl+j", *"two")
        assert app.chat.input.value == "one\ntwo"
