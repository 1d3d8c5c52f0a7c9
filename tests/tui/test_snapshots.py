"""How the main screens look (pytest-textual-snapshot; update with
`pytest tests/tui/test_snapshots.py --snapshot-update` after a deliberate change)."""

import shutil
import time
from pathlib import Path

import pytest
from textual.widgets import Input

from chat_app.identity import peer_id
from chat_app.payload import Payload
from chat_app.store import Store, StoredMessage
from chat_app.tui.app import ChatApp
from sync.sds import Channel, Delivered

from .conftest import node_factory

SIZE = (100, 28)
T0 = 1_767_225_600_000  # 2026-01-01 00:00 UTC


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setattr("chat_app.tui.model.FEW_COLOURS", False)  # the same picture whatever $TERM says
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def prepared(name: str) -> Path:
    """A data directory at a fixed path (the status bar shows it) holding a
    fixed identity and a short conversation, stored as the node stores it."""
    data = Path(f"/tmp/sds-chat-snapshot-{name}")
    shutil.rmtree(data, ignore_errors=True)
    store = Store(data / "sds-chat.sqlite3")
    store._set_meta("secret", b"snapshot".ljust(32, b"."))
    alice_id = peer_id(store.keys.secret())
    people = {"alice": alice_id, "bob": "b0b" + "0" * 29, "carol": "ca401" + "0" * 27}
    chans = {nick: Channel("general", pid, T0) for nick, pid in people.items()}
    lines = [("bob", "text", "morning all"), ("carol", "text", "hi bob! is the build green again?"),
             ("alice", "text", "it is, I pushed the fix last night"), ("bob", "me", "does a little dance"),
             ("carol", "text", "alice: can you review my change before the standup?"),
             ("alice", "text", "sure, give me ten minutes")]
    rows = []
    for i, (nick, kind, text) in enumerate(lines):
        now = T0 + i * 60_000
        chans[nick].send(Payload(kind, nick, text, i + 1, now).encode(), now)
        for wire in (out.data for out in chans[nick].datagrams_to_send(now)):
            for other, ch in chans.items():
                if other != nick:
                    ch.receive(wire, now)
                    ch.datagrams_to_send(now)
    for e in chans["alice"].events():
        if isinstance(e, Delivered):
            p = Payload.decode(e.content)
            rows.append(StoredMessage("general", e.message_id, e.lamport, e.sender_id, p.nick, p.kind, p.text,
                                      p.seq, p.sent_at, e.wire, e.lamport, e.lamport, e.own))
    store.commit_step("general", None, rows, T0)
    store.join("general", T0)
    store.close()
    return data


def app_for(name: str) -> ChatApp:
    data = prepared(name)
    return ChatApp(node_factory(data, "alice"), data, bell=False)


async def settle(pilot) -> None:
    app = pilot.app
    deadline = time.monotonic() + 10
    while not (app.chat.state.current and len(app.chat.state.channels["general"]) == 6):
        assert time.monotonic() < deadline
        await pilot.pause(0.05)
    app.chat.refresh_status()
    for line in app.query(Input):  # a blinking cursor would make the picture depend on timing
        line.cursor_blink = False
    await pilot.pause(0.3)


def test_main_screen(snap_compare):
    assert snap_compare(app_for("main"), terminal_size=SIZE, run_before=settle)


def test_help_screen(snap_compare):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("f1")
        await pilot.pause(0.3)

    assert snap_compare(app_for("help"), terminal_size=SIZE, run_before=run_before)


def test_search(snap_compare):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("ctrl+f", *"build")
        await pilot.pause(0.3)

    assert snap_compare(app_for("search"), terminal_size=SIZE, run_before=run_before)
