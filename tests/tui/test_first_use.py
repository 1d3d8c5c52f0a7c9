"""What a new user met trying the client in an 80x24 terminal: a question
left in the history once answered, Enter in the paste prompt, keys read with
a paste, a search's notices, a narrow terminal, a reply's quote after an
edit. Pilot against real nodes on loopback."""

import pytest
from textual import events
from textual.widgets import Button, Label

from chat_app.store import Store, StoredMessage
from chat_app.tui.history import shown_rows
from chat_app.tui.screens import ConfirmPaste

from .conftest import until
from .test_annotation_keys import row
from .test_app import SIZE, screen_text, started, texts, type_line
from .test_defects import send_at_once
from .test_hostile_text import drawn

ASKED = "delete this message for everyone? d again: yes; Esc: no"


async def said(pilot, app, *lines):
    await until(pilot, lambda: started(app))
    for line in lines:
        await type_line(pilot, line)
    await until(pilot, lambda: texts(app) == list(lines))


@pytest.mark.asyncio
@pytest.mark.parametrize("answer", ["d", "escape"], ids=["yes", "no"])
async def test_the_delete_question_goes_once_answered(make_app, answer):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await said(pilot, app, "first", "second")
        await pilot.press("alt+up", "d")
        assert texts(app)[-1] == ASKED
        await pilot.press(answer)
        await pilot.pause(0.1)
        assert ASKED not in texts(app)
        assert row(app, "second" if answer == "escape" else "(message deleted)") is not None


@pytest.mark.asyncio
async def test_a_second_delete_question_takes_the_place_of_the_first(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await said(pilot, app, "first", "second")
        await pilot.press("alt+up", "d", "up", "d")  # asked about "second", then about "first"
        assert texts(app).count(ASKED) == 1
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert texts(app) == ["first", "second"]


def paste_at_once(app, text: str, keys=()) -> None:
    """A bracketed paste and the keys after it, queued together as the driver
    queues what one read of the terminal returned."""
    event = events.Paste(text)
    event.set_sender(app)
    app._driver.send_message(event)
    send_at_once(app, keys)


@pytest.mark.asyncio
async def test_keys_read_with_a_paste_answer_its_prompt_then_are_typed(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await said(pilot, app, "hello")
        paste_at_once(app, "one\ntwo", ["o", *"hi"])  # o: as one message; then "hi" for the input
        await until(pilot, lambda: texts(app) == ["hello", "one\ntwo"])
        await until(pilot, lambda: app.chat.input.value == "hi")
        assert app.screen is app.chat and app.chat.input.has_focus


@pytest.mark.asyncio
@pytest.mark.parametrize("pasted, sent", [
    ("one\ntwo", ["one\ntwo"]),  # fits in one message: Enter sends it so
    ("word " * 999 + "word", ["word " * 799 + "word", "word " * 199 + "word"]),  # too long for one: as several
], ids=["lines", "too-long"])
async def test_enter_in_the_paste_prompt_sends_it_as_the_prompt_says(make_app, pasted, sent):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await said(pilot, app)
        paste_at_once(app, pasted)
        await until(pilot, lambda: isinstance(app.screen, ConfirmPaste))
        await pilot.pause(0.1)
        asked = str(app.screen.query_one(Label).render())
        assert "(Enter or " in asked and asked.split()[-1] in drawn(app)[0]  # all of it on screen
        await pilot.press("enter")
        await until(pilot, lambda: len(texts(app)) == len(sent))
        assert texts(app) == sent


@pytest.mark.asyncio
async def test_enter_on_the_cancel_button_cancels_the_paste(make_app):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await said(pilot, app, "hello")
        paste_at_once(app, "one\ntwo")
        await until(pilot, lambda: isinstance(app.screen, ConfirmPaste))
        await pilot.pause(0.1)
        await pilot.press("shift+tab", "enter")  # from "One message" back to "Cancel (Esc)"
        await until(pilot, lambda: app.screen is app.chat)
        await pilot.pause(0.2)
        assert texts(app) == ["hello"]


@pytest.mark.asyncio
async def test_a_search_without_match_says_so_once_on_its_bar(make_app):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await said(pilot, app, "hello", "world")
        search = app.chat.search
        await pilot.press("ctrl+f", *"xyz")
        await pilot.pause(0.2)
        assert not app._notifications  # no notice for each key
        assert search.border_subtitle == "no match for 'xyz'" and "no match for 'xyz'" in drawn(app)[0]
        await pilot.press("backspace", "backspace", "backspace", "w")  # "w" matches "world"
        await pilot.pause(0.1)
        assert not search.border_subtitle and "no match" not in drawn(app)[0]
        await pilot.press("enter")  # no older "w"
        await pilot.pause(0.1)
        assert search.border_subtitle == "no older match for 'w'" and not app._notifications
        await pilot.press("escape")
        assert not search.border_subtitle


@pytest.mark.asyncio
async def test_a_replys_quote_shows_its_parent_as_edited(make_app, bob_for, tmp_path):
    """Live, and read again from the store (a new start): the quote is of
    the text the parent has now, not of the text it had when answered."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await said(pilot, app, "see you at 5")
        parent = row(app, "see you at 5").message_id
        await type_line(pilot, f"/reply {parent} ok")
        await until(pilot, lambda: "ok" in texts(app))
        assert row(app, "ok").quote == "alice: see you at 5"
        await type_line(pilot, f"/edit {parent} see you at 6")
        await until(pilot, lambda: row(app, "ok").quote == "alice: see you at 6")
        await pilot.pause(0.1)
        assert "↪ alice: see you at 6" in screen_text(app)
    again = make_app()
    async with again.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(again) and "ok" in texts(again))
        assert row(again, "ok").quote == "alice: see you at 6"


def test_a_reply_read_from_the_store_quotes_its_parent_on_an_older_page_as_edited(tmp_path):
    """Only the reply is on the page read: its parent, read on its own, is derived too."""
    store = Store(tmp_path / "sds-chat.sqlite3")

    def stored(i, kind, text, about=None):
        return StoredMessage("general", f"{i:032x}", i, "d" * 32, "dave", kind, text, i, i, b"-", i, i, False,
                             about=about)

    parent = f"{1:032x}"
    page = [stored(2, "reply", "ok", parent), stored(3, "edit", "see you at 6", parent)]
    store.commit_step("general", None, [stored(1, "text", "see you at 5"), *page], 1)
    try:
        [reply] = shown_rows(store, "general", page[:1], frozenset())
    finally:
        store.close()
    assert reply.about == parent and reply.quote == "dave: see you at 6"


@pytest.mark.asyncio
async def test_a_narrow_terminal_keeps_the_channel_the_status_and_the_essential_keys(make_app):
    app = make_app()
    async with app.run_test(size=(40, 24)) as pilot:
        await until(pilot, lambda: started(app) and "in sync" in str(app.chat.status_bar.sync.render()))
        for width in (40, 60, 80, 40):
            await pilot.resize_terminal(width, 24)
            await pilot.pause(0.3)
            lines = drawn(app)[0].splitlines()
            title, status, keys = lines[0], lines[-2], lines[-1]
            assert "#general — alice" in title
            assert "0 peers" in status and "in sync" in status
            assert "Help" in keys and "Quit" in keys and "Search" in keys, (width, keys)
            assert ("palette" in keys) == (width >= 80)
            assert (str(app.data_dir)[:8] in status) == (width >= 60)  # where the data lives: if there is room


@pytest.mark.asyncio
async def test_a_click_on_a_channel_in_the_sidebar_opens_it_for_typing(make_app):
    app = make_app(channels=("general", "random"))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app) and len(app.chat.channel_list.options) == 2)
        await pilot.click("#channels", offset=(2, 1))  # the second line: #random
        await until(pilot, lambda: app.chat.state.current == "random")
        assert app.chat.input.has_focus
        await pilot.press(*"hi", "enter")
        await until(pilot, lambda: texts(app, "random") == ["hi"])


@pytest.mark.asyncio
async def test_the_paste_prompt_shows_every_answer_in_a_narrow_terminal(make_app):
    app = make_app()
    async with app.run_test(size=(40, 24)) as pilot:
        await said(pilot, app)
        paste_at_once(app, "one\ntwo")
        await until(pilot, lambda: isinstance(app.screen, ConfirmPaste))
        await pilot.pause(0.2)
        buttons = list(app.screen.query(Button))
        assert len(buttons) == 3 and all(b.region.right <= 40 and b.region.bottom <= 24 for b in buttons)
        await pilot.press("enter")
        await until(pilot, lambda: texts(app) == ["one\ntwo"])
