"""Coming back to a channel: where the reader left it, with a rule above
what they have not seen, also after a restart."""

import pytest

from chat_app.store import Store, StoredMessage
from chat_app.tui.widgets.channel_view import ChannelView

from .conftest import until
from .test_app import screen_text, started

BASE = 1_700_000_000_000


def store_messages(data_dir, first: int, count: int, channel: str = "general") -> None:
    store = Store(data_dir / "sds-chat.sqlite3")
    rows = [StoredMessage(channel, f"{i:032x}", BASE + i, "d" * 32, "dave", "text", f"message number {i}", i + 1,
                          BASE + i, b"-", BASE + i, BASE + i, False) for i in range(first, first + count)]
    store.commit_step(channel, None, rows, BASE)
    store.close()


@pytest.mark.asyncio
async def test_each_channel_keeps_its_scroll_position(make_app, tmp_path):
    store_messages(tmp_path / "alice", 0, 100)
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=(110, 20)) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.state.channels["general"]) == 100)
        app.chat.switch_to("general")
        view = app.query_one(ChannelView)
        await pilot.pause(0.1)
        view.scroll_to(y=40, animate=False, immediate=True)
        await pilot.pause(0.1)
        top = screen_text(app).splitlines()[0]
        assert not view.following and "message number" in top
        app.chat.switch_to("random")
        await pilot.pause(0.1)
        app.chat.switch_to("general")
        await pilot.pause(0.1)
        assert screen_text(app).splitlines()[0] == top and not view.following
        view.scroll_end(animate=False, immediate=True)  # back at the newest: it stays there after a switch
        await pilot.pause(0.1)
        app.chat.switch_to("random")
        app.chat.switch_to("general")
        await pilot.pause(0.1)
        assert view.following and "message number 99" in screen_text(app)


@pytest.mark.asyncio
async def test_the_new_messages_rule_survives_a_restart(make_app, tmp_path):
    data = tmp_path / "alice"
    store_messages(data, 0, 5)
    app = make_app()
    async with app.run_test(size=(110, 20)) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.state.channels["general"]) == 5)
        await pilot.pause(0.1)
        assert "new messages" not in screen_text(app)
    store_messages(data, 5, 3)  # arrived while the client was closed
    again = make_app()
    async with again.run_test(size=(110, 20)) as pilot:
        await until(pilot, lambda: started(again) and len(again.chat.state.channels["general"]) == 8)
        await pilot.pause(0.2)
        lines = [line.strip("─ ") for line in screen_text(again).splitlines()]
        rule = lines.index("new messages")
        assert lines[rule - 1].endswith("message number 4") and lines[rule + 1].endswith("message number 5")


@pytest.mark.asyncio
async def test_entering_a_channel_with_unread_messages_marks_the_first(make_app, bob_for):
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=(110, 20)) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.state.channels) == 2)
        app.chat.switch_to("general")
        bob = bob_for(app, channels=("general", "random"))
        bob.say("seen before", channel="random")
        await until(pilot, lambda: len(app.chat.state.channels["random"]) == 1)
        app.chat.switch_to("random")
        app.chat.switch_to("general")
        bob.say("first new", channel="random")
        bob.say("second new", channel="random")
        await until(pilot, lambda: app.chat.state.channels["random"].unread == 2)
        app.chat.switch_to("random")
        await pilot.pause(0.1)
        lines = [line.strip("─ ") for line in screen_text(app).splitlines()]
        rule = lines.index("new messages")
        assert lines[rule - 1].endswith("seen before") and lines[rule + 1].endswith("first new")
