"""The quick-reaction picker (``a`` on a picked message): Pilot against real
nodes on loopback, the reactions checked where bob's node delivers them."""

from contextlib import asynccontextmanager

import pytest
from rich.cells import cell_len
from textual.containers import Grid

from chat_app.tui.reactions import QUICK, ReactionPicker, drawn
from chat_app.tui.widgets.channel_view import ChannelView

from .conftest import until
from .test_annotation_keys import row
from .test_app import SIZE, bob_heard, started


@asynccontextmanager
async def alice_and_bob(make_app, bob_for, size=SIZE):
    """Alice's client, and bob's node, whose "hi alice" she has."""
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: started(app))
        yield app, pilot, await bob_heard(app, pilot, bob_for)


def reacted(bob, message_id, reactions):
    """Wait until bob's node shows ``reactions`` on ``message_id``."""
    return bob.wait_for(lambda e: e["event"] == "changed" and e["message_id"] == message_id
                        and e["reactions"] == reactions)


@pytest.mark.asyncio
async def test_a_digit_or_the_arrows_and_enter_send_that_reaction_and_again_take_it_back(make_app, bob_for):
    async with alice_and_bob(make_app, bob_for) as (app, pilot, bob):
        hi = row(app, "hi alice").message_id
        view = app.query_one(ChannelView)

        await pilot.press("alt+up", "a")
        assert isinstance(app.screen, ReactionPicker) and view.selected == hi  # still marked behind it
        await pilot.press("3")
        await until(pilot, lambda: row(app, "hi alice").reactions == "😂 1")
        reacted(bob, hi, [["😂", 1]])
        assert app.screen is app.chat and app.chat.input.has_focus and view.selected is None

        await pilot.press("alt+up", "a", "right", "right", "left", "enter")  # the second: the heart
        await until(pilot, lambda: row(app, "hi alice").reactions == "😂 1  ❤️ 1")
        reacted(bob, hi, [["😂", 1], ["❤️", 1]])

        await pilot.press("alt+up", "a", "3")  # given already: taken back
        await until(pilot, lambda: row(app, "hi alice").reactions == "❤️ 1")
        reacted(bob, hi, [["❤️", 1]])

        await pilot.press("alt+up", "a", "9")  # the last is +1, as + sends it
        reacted(bob, hi, [["❤️", 1], ["+1", 1]])
        assert app.chat.input.value == ""


@pytest.mark.asyncio
async def test_a_click_on_a_choice_sends_it(make_app, bob_for):
    async with alice_and_bob(make_app, bob_for) as (app, pilot, bob):
        hi = row(app, "hi alice").message_id
        await pilot.press("alt+up", "a")
        await pilot.click(app.screen.choices[3])
        reacted(bob, hi, [["🎉", 1]])
        assert app.screen is app.chat and app.chat.input.has_focus


@pytest.mark.asyncio
async def test_escape_closes_the_picker_sending_nothing_and_the_input_has_the_focus(make_app, bob_for):
    async with alice_and_bob(make_app, bob_for) as (app, pilot, bob):
        hi = row(app, "hi alice").message_id
        view = app.query_one(ChannelView)

        await pilot.press("alt+up", "a", "right", "escape")
        assert app.screen is app.chat and app.chat.input.has_focus and view.selected is None
        assert app.chat.input.value == ""
        await pilot.press("a", "3")  # typed in the input now, not a picker's keys
        assert app.chat.input.value == "a3" and app.screen is app.chat

        app.chat.input.value = ""
        await pilot.press("alt+up", "plus")  # the next reaction is the first bob sees
        reacted(bob, hi, [["+1", 1]])
        assert not any(e["event"] == "changed" and e["reactions"] != [["+1", 1]] for e in bob.events)


@pytest.mark.asyncio
async def test_slash_leaves_the_reaction_to_type_in_the_input(make_app, bob_for):
    async with alice_and_bob(make_app, bob_for) as (app, pilot, bob):
        hi = row(app, "hi alice").message_id

        await pilot.press("alt+up", "a", "slash")
        assert app.screen is app.chat and app.chat.input.has_focus
        assert app.chat.input.value == f"/react {hi} "
        app.chat.input.value += "🚀"
        await pilot.press("enter")
        reacted(bob, hi, [["🚀", 1]])


@pytest.mark.asyncio
@pytest.mark.parametrize(("width", "rows"), [(80, 1), (40, 2), (24, 3)])
async def test_the_picker_fits_the_terminal_wrapping_its_choices_into_rows(make_app, bob_for, width, rows):
    async with alice_and_bob(make_app, bob_for, (width, 24)) as (app, pilot, _):
        await pilot.press("alt+up", "a")
        await pilot.pause(0.1)
        picker = app.screen
        grid = picker.query_one(Grid)
        assert grid.region.height == rows
        assert 0 <= picker.box.region.x and picker.box.region.right <= width
        assert all(0 <= label.region.x and label.region.right <= grid.region.right for label in picker.choices)
        assert app.chat.input.region.y >= picker.box.region.bottom  # above the input, not over it


def test_each_choice_is_drawn_as_wide_as_its_characters_add_up_to():
    """No choice is drawn with a sequence whose width terminals disagree on:
    "❤️" (a heart and U+FE0F) is two columns to Textual, one to tmux, which
    would pull the rest of the row out of line. It is sent as it is typed."""
    assert "❤️" in QUICK
    for emoji in QUICK:
        assert cell_len(drawn(emoji)) == sum(cell_len(char) for char in drawn(emoji)), emoji
