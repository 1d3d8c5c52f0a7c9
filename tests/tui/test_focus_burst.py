"""Keys that move the focus, and the keys read with them in one burst (fast
typing, a slow link, tmux send-keys of both): each key after the move goes
where the move sent the focus. Pilot against a real node on loopback; the
keys are queued together, as the driver queues what one read returned."""

import pytest
from textual import events

from chat_app.tui.reactions import ReactionPicker
from chat_app.tui.screens import ConfirmPaste
from chat_app.tui.widgets.channel_view import ChannelView

from .conftest import until
from .test_annotation_keys import row
from .test_app import SIZE, started, texts, type_line
from .test_defects import send_at_once


async def said(pilot, app, text="hello"):
    await until(pilot, lambda: started(app))
    await type_line(pilot, text)
    await until(pilot, lambda: texts(app) == [text])


async def picked(pilot, app) -> ChannelView:
    """A message said, then picked (Alt+Up): the history, which has the focus."""
    await said(pilot, app)
    view = app.query_one(ChannelView)
    await pilot.press("alt+up")
    assert view.has_focus
    return view


async def typed_in_the_input(pilot, app, text):
    """The keys after the one that closed a picker, a prompt or the switcher went to the input."""
    await until(pilot, lambda: app.chat.input.value == text)
    assert app.screen is app.chat and app.chat.input.has_focus


@pytest.mark.asyncio
async def test_alt_up_and_a_in_one_burst_open_the_reaction_picker(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await said(pilot, app)
        send_at_once(app, ["alt+up", "a"])
        await until(pilot, lambda: isinstance(app.screen, ReactionPicker))
        assert app.query_one(ChannelView).selected == row(app, "hello").message_id
        assert app.chat.input.value == ""


@pytest.mark.asyncio
async def test_escape_and_text_in_one_burst_type_the_text_in_the_input(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await picked(pilot, app)
        send_at_once(app, ["escape", *"hi there"])
        await until(pilot, lambda: app.chat.input.value == "hi there")
        assert app.chat.input.has_focus and view.selected is None


@pytest.mark.asyncio
async def test_what_is_typed_after_r_finishes_the_reply_after_a_pause_or_in_one_burst(make_app):
    """The input gets the focus back holding "/reply <id> ", none of it
    selected (it was, and the first key replaced it); in one burst, the e
    of "yes" is typed, not taken for e (edit) on the picked message."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await said(pilot, app)
        hello = row(app, "hello").message_id
        await pilot.press("alt+up", "r")
        await until(pilot, lambda: app.chat.input.has_focus)
        await pilot.press(*"yes")
        assert app.chat.input.value == f"/reply {hello} yes"

        app.chat.input.value = ""
        send_at_once(app, ["alt+up", "r", *"yes, hi"])
        await until(pilot, lambda: app.chat.input.value.endswith("hi"))
        assert app.chat.input.value == f"/reply {hello} yes, hi" and app.chat.input.has_focus


@pytest.mark.asyncio
@pytest.mark.parametrize("keys, done", [
    (["x", "alt+up", "a", "3", *"ok"], lambda app: row(app, "hello").reactions == "😂 1"),  # the reaction picker
    (["x", "ctrl+k", *"rand", "enter", *"ok"], lambda app: app.chat.state.current == "random"),  # the switcher
], ids=["reaction", "switcher"])
async def test_an_answer_and_what_follows_in_one_burst(make_app, keys, done):
    """A digit sends that reaction, Enter switches to the channel found; the
    text before and after either is the input's."""
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=SIZE) as pilot:
        await said(pilot, app)
        send_at_once(app, keys)
        await until(pilot, lambda: done(app))
        await typed_in_the_input(pilot, app, "xok")


@pytest.mark.asyncio
async def test_ctrl_f_a_search_and_escape_in_one_burst_leave_the_rest_in_the_input(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await said(pilot, app)
        search = app.chat.search
        send_at_once(app, ["ctrl+f", *"hel"])
        await until(pilot, lambda: search.value == "hel")
        assert app.chat.input.value == "" and search.has_focus
        send_at_once(app, ["escape", *"ok"])
        await until(pilot, lambda: app.chat.input.value == "ok")
        assert not search.display and app.chat.input.has_focus


@pytest.mark.asyncio
async def test_the_paste_prompts_answer_and_what_follows_in_one_burst(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await said(pilot, app)
        event = events.Paste("one\ntwo")
        event.set_sender(app)
        app._driver.send_message(event)
        await until(pilot, lambda: isinstance(app.screen, ConfirmPaste))
        send_at_once(app, ["o", *"hi"])
        await until(pilot, lambda: texts(app) == ["hello", "one\ntwo"])
        await typed_in_the_input(pilot, app, "hi")


@pytest.mark.asyncio
async def test_typing_while_a_message_is_picked_writes_in_the_input_and_picks_nothing(make_app):
    """A key the history has no use for leaves the picking and is typed, with
    the keys after it: "/edit 2 a line" typed while a message is picked (after
    e on someone else's message, say) is that line in the input, not an edit
    for its e, a deletion question for its d and a reaction for its a and Enter."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await picked(pilot, app)
        await pilot.press(*"/edi")
        assert app.chat.input.value == "/edi" and app.chat.input.has_focus and view.selected is None

        app.chat.input.value = ""
        send_at_once(app, ["alt+up", *"/edit 2 a line"])
        await typed_in_the_input(pilot, app, "/edit 2 a line")
        assert view.selected is None and row(app, "hello").reactions == ""
