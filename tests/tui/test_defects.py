"""Defects a new user hit in the client, each reproduced with Pilot against
real nodes on loopback (what only a real terminal shows is in
tests/e2e/test_tmux_client.py)."""

import pytest
from textual import events

from chat_app.tui.screens import HelpScreen
from chat_app.tui.widgets.channel_list import ChannelList
from chat_app.tui.widgets.channel_view import ChannelView

from .conftest import until

SIZE = (110, 16)


def started(app):
    return app.bridge is not None and app.bridge.node is not None and app.chat.state.current is not None


def texts(app, channel="general"):
    return [e.text for e in app.chat.state.channels[channel].entries]


def sidebar_labels(app) -> list[str]:
    return [str(o.prompt) for o in app.query_one(ChannelList).options]


@pytest.mark.asyncio
async def test_pasting_one_line_puts_it_in_the_input(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        field = app.query_one("#input")
        field.value = "say: "
        field.cursor_position = 5
        field.post_message(events.Paste("hello there\n"))
        await pilot.pause(0.2)
        assert app.is_running and field.value == "say: hello there"
        await pilot.press("enter")
        await until(pilot, lambda: texts(app) == ["say: hello there"])


def send_at_once(app, keys) -> None:
    """Queue keys together, as the driver does with what one read returned."""
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else ("\r" if key == "enter" else None))
        event.set_sender(app)
        app._driver.send_message(event)


@pytest.mark.asyncio
async def test_keys_arriving_in_one_burst_act_in_key_order(make_app):
    """Keys read at once (a slow link, an unbracketed paste, fast typing):
    "one⏎two⏎" is two messages, and Up, Backspace and the arrows - bindings,
    which would run only once their key had bubbled up to the app - act
    before the keys typed after them."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        field = app.query_one("#input")
        send_at_once(app, [*"one", "enter", *"two", "enter"])
        await until(pilot, lambda: len(texts(app)) == 2)
        await pilot.pause(0.3)
        assert texts(app) == ["one", "two"] and field.value == ""
        send_at_once(app, ["up", "up", *" more", "enter", *"abc", "backspace", "d", "left", "x", "enter"])
        await until(pilot, lambda: len(texts(app)) == 4)
        await pilot.pause(0.3)
        assert texts(app) == ["one", "two", "one more", "abxd"] and field.value == ""


@pytest.mark.asyncio
async def test_scrolling_back_to_the_end_clears_the_unread_count(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        for i in range(30):
            bob.say(f"old {i}")
        await until(pilot, lambda: len(texts(app)) == 30)
        view = app.query_one(ChannelView)
        for _ in range(50):
            view.scroll_home(animate=False)
            await pilot.pause(0.1)
            if view.scroll_y == 0 and not view.following:
                break
        for i in range(3):
            bob.say(f"new {i}")
        await until(pilot, lambda: app.chat.state.channels["general"].unread == 3)
        assert sidebar_labels(app) != ["#general"]  # the count is shown
        await pilot.press("pagedown", "pagedown", "pagedown")  # the input has the focus: End is its own
        await until(pilot, lambda: view.following)
        await pilot.pause(0.1)
        assert app.chat.state.channels["general"].unread == 0 and sidebar_labels(app) == ["#general"]


@pytest.mark.asyncio
async def test_page_up_scrolls_the_history_while_the_input_has_the_focus(make_app, bob_for):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        bob = bob_for(app)
        for i in range(30):
            bob.say(f"line {i}")
        await until(pilot, lambda: len(texts(app)) == 30)
        view = app.query_one(ChannelView)
        await until(pilot, lambda: view.scroll_y == view.max_scroll_y > 0)
        assert app.focused is app.query_one("#input")
        await pilot.press("pageup")
        # under load the key can be handled a frame later than any fixed pause
        await until(pilot, lambda: view.scroll_y < view.max_scroll_y and not view.following)


@pytest.mark.asyncio
async def test_the_help_screen_scrolls_at_80_by_24(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: started(app))
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        scrollable = [w for w in app.screen.query("*") if w.max_scroll_y > 0]
        assert scrollable, "the help is cut off with no way to scroll"
        await pilot.press("end")
        await pilot.pause(0.1)
        assert scrollable[0].scroll_y == scrollable[0].max_scroll_y > 0


@pytest.mark.asyncio
async def test_a_narrow_terminal_folds_the_sidebar_and_f3_toggles_it(make_app):
    app = make_app()
    async with app.run_test(size=(60, 24)) as pilot:
        await until(pilot, lambda: started(app))
        view, sidebar = app.query_one(ChannelView), app.query_one("#sidebar")
        await pilot.pause(0.1)
        assert not sidebar.display and view.size.width >= 50
        await pilot.press("f3")
        await pilot.pause(0.1)
        assert sidebar.display
        await pilot.resize_terminal(110, 24)
        await pilot.pause(0.1)
        assert sidebar.display and view.size.width >= 70
        await pilot.press("f3")
        await pilot.pause(0.1)
        assert not sidebar.display and view.size.width >= 100


def test_the_status_bar_takes_an_update_before_it_is_composed_and_after_it_is_taken_down():
    """The node's events reach the screen on their own schedule: one came
    while the bar had no children yet (or no longer) and the client died."""
    from chat_app.tui.widgets.status_bar import StatusBar

    bar = StatusBar(id="status")
    bar.show(2, 3, 4, "/tmp/x")
    bar.show(1, 0, 4, "/tmp/x", replicating=1)
    assert "1 peer connected" in str(bar.peers.render())
    assert "catching up with 1 peer" in str(bar.sync.render())
