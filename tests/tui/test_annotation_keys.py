"""Picking a message in the client and replying, reacting, editing and
deleting with keys: Pilot against real nodes on loopback."""

import pytest

from chat_app.annotations import NOT_EDITABLE
from chat_app.tui.widgets.channel_view import ChannelView

from .conftest import until
from .test_app import SIZE, bob_heard, screen_text, started, texts, type_line


def row(app, text):
    return next(e for e in app.chat.state.channels["general"].entries if e.text == text)


@pytest.mark.asyncio
async def test_keys_pick_a_message_then_react_reply_edit_and_delete(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = await bob_heard(app, pilot, bob_for)
        await type_line(pilot, "hello bob")
        await until(pilot, lambda: texts(app) == ["hi alice", "hello bob"])
        view = app.query_one(ChannelView)

        await pilot.press("up")  # in the input, Up still recalls what was sent
        assert app.chat.input.value == "hello bob" and view.selected is None
        app.chat.input.value = ""

        await pilot.press("alt+up")  # the newest message, the view focused
        assert view.selected == row(app, "hello bob").message_id and view.has_focus
        await pilot.press("up")
        assert view.selected == row(app, "hi alice").message_id
        await pilot.press("plus")  # +1 at once
        await until(pilot, lambda: row(app, "hi alice").reactions == "+1 1")
        bob.wait_for(lambda e: e["event"] == "changed" and e["reactions"] == [["+1", 1]])
        assert app.chat.input.has_focus and view.selected is None
        await pilot.pause(0.1)
        assert "+1 1" in screen_text(app)

        await pilot.press("alt+up", "up", "e")  # not ours: refused where it is typed
        assert app.chat.input.value == "" and "only its author may edit" in texts(app)[-1]
        await pilot.press("escape")

        await pilot.press("alt+up", "up", "up", "r")  # past our notice, to bob's message
        hi = row(app, "hi alice").message_id
        assert app.chat.input.value == f"/reply {hi} " and app.chat.input.has_focus
        app.chat.input.value += "yes, hi"
        await pilot.press("enter")
        await until(pilot, lambda: "yes, hi" in texts(app))
        assert row(app, "yes, hi").quote == "bob: hi alice"
        await pilot.pause(0.1)
        assert "↪ bob: hi alice" in screen_text(app)

        await pilot.press("alt+up", "up", "e")  # ours: the input holds its text
        mine = row(app, "hello bob").message_id
        assert app.chat.input.value == f"/edit {mine} hello bob"
        app.chat.input.value += "by"
        await pilot.press("enter")
        await until(pilot, lambda: app.chat.state.channels["general"].by_id[mine].edited)
        assert app.chat.state.channels["general"].by_id[mine].text == "hello bobby"
        bob.wait_for(lambda e: e["event"] == "changed" and e["text"] == "hello bobby" and e["edited"])
        await pilot.pause(0.1)
        assert "hello bobby  (edited)" in screen_text(app)

        await pilot.press("alt+up", "d")  # asks first
        assert "d again: yes" in texts(app)[-1]
        reply = row(app, "yes, hi").message_id
        assert view.selected == reply
        await pilot.press("d")
        await until(pilot, lambda: app.chat.state.channels["general"].by_id[reply].deleted)
        bob.wait_for(lambda e: e["event"] == "changed" and e["message_id"] == reply and e["deleted"])
        await pilot.pause(0.1)
        assert "(message deleted)" in screen_text(app)


@pytest.mark.asyncio
async def test_escape_leaves_the_selection_for_the_input(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await bob_heard(app, pilot, bob_for)
        view = app.query_one(ChannelView)
        await pilot.press("alt+up")
        assert view.selected is not None and view.has_focus
        await pilot.press("escape")
        assert view.selected is None and app.chat.input.has_focus
        await pilot.press("e")  # a letter typed again, not a key on a message
        assert app.chat.input.value == "e"


async def _select(pilot, view, message_id: str) -> None:
    """Alt+Up, then Up until ``message_id`` is selected (past notices in between)."""
    await pilot.press("alt+up")
    for _ in range(10):
        if view.selected == message_id:
            return
        await pilot.press("up")
    raise AssertionError(f"{message_id} never selected")


@pytest.mark.asyncio
async def test_a_file_message_is_replied_to_reacted_to_and_deleted_but_never_edited(make_app, bob_for, tmp_path):
    source = tmp_path / "notes.txt"
    source.write_text("hello")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = await bob_heard(app, pilot, bob_for)
        await type_line(pilot, f"/send {source}")
        shown = "[file] notes.txt (5 bytes, text/plain)"
        await until(pilot, lambda: shown in texts(app))
        offer = row(app, shown).message_id
        bob.wait_for(lambda e: e["event"] == "delivered" and e["message_id"] == offer)
        view = app.query_one(ChannelView)

        await _select(pilot, view, offer)
        await pilot.press("plus")
        await until(pilot, lambda: row(app, shown).reactions == "+1 1")
        bob.wait_for(lambda e: e["event"] == "changed" and e["message_id"] == offer and e["reactions"] == [["+1", 1]])
        assert row(app, shown).text == shown  # a reaction leaves the line as the offer reads

        await _select(pilot, view, offer)
        await pilot.press("e")  # ours, yet a file message: refused where it is typed
        assert app.chat.input.value == "" and texts(app)[-1] == NOT_EDITABLE
        await pilot.press("escape")
        await type_line(pilot, f"/edit {offer} other.txt")  # typed: the node refuses it too
        await until(pilot, lambda: texts(app).count(NOT_EDITABLE) == 2)

        await _select(pilot, view, offer)
        await pilot.press("r")
        assert app.chat.input.value == f"/reply {offer} "
        app.chat.input.value += "got it"
        await pilot.press("enter")
        await until(pilot, lambda: "got it" in texts(app))
        assert row(app, "got it").quote == f"alice: {shown}"
        bob.wait_for(lambda e: e["event"] == "delivered" and e.get("about") == offer and e["kind"] == "reply")

        await _select(pilot, view, offer)
        await pilot.press("d", "d")
        await until(pilot, lambda: app.chat.state.channels["general"].by_id[offer].deleted)
        assert app.chat.state.channels["general"].by_id[offer].text == "(message deleted)"
        bob.wait_for(lambda e: e["event"] == "changed" and e["message_id"] == offer and e["deleted"])


@pytest.mark.asyncio
async def test_after_picking_a_message_the_view_still_follows_and_counts_nothing_unread(make_app, bob_for):
    """Picking the newest message and going back (Esc, or r and a reply) does
    not scroll the view: it is still at the newest message, so what bob says
    next is followed, not counted unread under a "new messages" rule, and
    the channel is read to its end when the reader leaves it."""
    app = make_app("alice", channels=("general", "random"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = await bob_heard(app, pilot, bob_for)
        view = app.query_one(ChannelView)
        await pilot.press("alt+up", "escape")
        assert view.selected is None and app.chat.input.has_focus
        bob.say("are you there?")
        await until(pilot, lambda: "are you there?" in texts(app))
        await pilot.pause(0.2)
        assert view.following and view.marker_id is None and app.chat.state.channels["general"].unread == 0
        app.chat.switch_to("random")
        newest = app.chat.state.channels["general"].last_messages(1)[0]
        assert app.chat.state.read_markers.get("general") == newest.key
