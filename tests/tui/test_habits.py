"""What a WeeChat, irssi or senpai user expects of the client: keys that
follow the sidebar, command output in the buffer, typing that ends with the
message, completion that survives a burst of keys."""

import pytest
from textual import events

from chat_app import events as ev
from chat_app.runtime.typing_indicator import TYPING_EXPIRES_MS
from chat_app.tui.chat_screen import now_ms

from .conftest import until

SIZE = (110, 24)
BOB = "b" * 32


def started(app):
    return app.bridge is not None and app.bridge.node is not None and app.chat.state.current is not None


@pytest.mark.asyncio
async def test_alt_digits_ctrl_pages_and_alt_arrows_follow_the_sidebar_not_the_order_of_creation(make_app):
    app = make_app(channels=("general",))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        chat = app.chat
        chat.node_event(ev.DmOpened(f"@{BOB}", BOB, "bob"))  # a conversation first...
        chat.node_event(ev.Joined("dev"))  # ...then a channel: the sidebar lists #dev before @bob
        assert chat.state.current == "dev"
        await pilot.press("alt+3")
        assert chat.state.current == f"@{BOB}"
        await pilot.press("alt+2")
        assert chat.state.current == "dev"
        await pilot.press("ctrl+pagedown")
        assert chat.state.current == f"@{BOB}"
        await pilot.press("ctrl+pagedown")  # round the end
        assert chat.state.current == "general"
        await pilot.press("alt+left")
        assert chat.state.current == f"@{BOB}"
        await pilot.press("alt+left", "alt+left")
        assert chat.state.current == "general"
        await pilot.press("alt+right")
        assert chat.state.current == "dev" and app.focused is app.query_one("#input")


@pytest.mark.asyncio
async def test_bobs_message_ends_his_typing_even_when_the_notice_is_told_after_it(make_app):
    """The runtime reads a typing notice and the message sent just after it
    in one step, and tells the message first: the notice is older."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        typing_line = app.query_one("#typing")
        step = now_ms()
        app.chat.node_event(ev.MessageDelivered("general", 1, "m" * 32, BOB, step, "bob", "text", "hi", 1, False))
        app.chat.node_event(ev.Typing("general", BOB, "bob", step + TYPING_EXPIRES_MS))
        await pilot.pause()
        assert "typing" not in str(typing_line.render())
        app.chat.node_event(ev.Typing("general", BOB, "bob", now_ms() + 50 + TYPING_EXPIRES_MS))  # typing again, later
        await pilot.pause()
        assert "bob is typing…" in str(typing_line.render())


@pytest.mark.asyncio
async def test_tab_read_with_the_letters_before_it_completes_them(make_app):
    """``bo`` and Tab in one read (a slow link): the Tab completes what the
    letters typed, not the field as it was before them."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        app.chat.node_event(ev.PeerJoined(BOB, "bobby", ("127.0.0.1", 9)))
        field = app.query_one("#input")
        for key, character in (("b", "b"), ("o", "o"), ("tab", "\t")):  # queued at once, as the parser does
            app.post_message(events.Key(key, character))
        await until(pilot, lambda: field.value == "bobby: ")
