"""Getting around from the keyboard: channel switching, the quick switcher,
input history."""

import pytest

from chat_app.tui.switcher import QuickSwitcher, ranked

from .conftest import until

SIZE = (110, 24)


def started(app):
    return app.bridge is not None and app.bridge.node is not None and app.chat.state.current is not None


def test_ranked_matches_letters_in_order_and_puts_unread_first_among_equals():
    channels = [("general", 0), ("random", 0), ("dev", 0), ("devops", 3)]
    assert ranked("gnl", channels) == ["general"]
    assert ranked("#dev", channels)[:2] == ["dev", "devops"]  # the exact name first
    assert ranked("", channels) == ["general", "random", "dev", "devops"]
    assert ranked("xyz", channels) == []
    assert ranked("ops", channels) == ["devops"]


@pytest.mark.asyncio
async def test_alt_digits_and_ctrl_page_keys_switch_channels(make_app):
    app = make_app(channels=("general", "random", "dev"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.state.channels) == 3)
        first, second, third = app.chat.state.channels  # as the sidebar lists them
        await pilot.press("alt+3")
        assert app.chat.state.current == third
        await pilot.press("ctrl+pageup")
        assert app.chat.state.current == second
        await pilot.press("ctrl+pagedown", "ctrl+pagedown")  # past the end: round to the first
        assert app.chat.state.current == first
        await pilot.press("alt+9")  # no ninth channel: stays
        assert app.chat.state.current == first and app.focused is app.query_one("#input")


@pytest.mark.asyncio
async def test_ctrl_k_finds_a_channel_by_a_few_letters(make_app):
    app = make_app(channels=("general", "random", "devops"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.state.channels) == 3)
        app.query_one("#input").value = "half a message"
        await pilot.press("ctrl+k")
        assert isinstance(app.screen, QuickSwitcher)
        await pilot.press(*"dps", "enter")
        assert app.chat.state.current == "devops" and not isinstance(app.screen, QuickSwitcher)
        assert app.query_one("#input").value == "half a message"  # Ctrl+K did not cut the line
        await pilot.press("ctrl+k", "down", "enter")  # no letters: every channel, in sidebar order
        assert app.chat.state.current == list(app.chat.state.channels)[1]
        before = app.chat.state.current
        await pilot.press("ctrl+k", *"zzz", "enter", "escape")  # nothing matches: nothing changes
        assert app.chat.state.current == before and not isinstance(app.screen, QuickSwitcher)


@pytest.mark.asyncio
async def test_up_and_down_recall_what_was_sent(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        field = app.query_one("#input")
        for line in ("first", "second", "/nick alicia"):
            field.value = line
            await pilot.press("enter")
        # the two messages (the new nick adds a line of its own, not a message)
        await until(pilot, lambda: len(app.chat.state.channels["general"].last_messages(3)) == 2)
        await pilot.press(*"draft")
        await pilot.press("up")
        assert field.value == "/nick alicia" and field.cursor_position == len(field.value)
        await pilot.press("up", "up")
        assert field.value == "first"
        await pilot.press("up")  # the oldest stays
        assert field.value == "first"
        await pilot.press("down")
        assert field.value == "second"
        await pilot.press("down", "down")  # past the newest: what was being typed
        assert field.value == "draft"
        field.value = ""
        await pilot.press("up", "enter")  # sent again
        await until(pilot, lambda: app.chat.state.nick == "alicia")
