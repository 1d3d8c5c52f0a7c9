"""What a new user met trying the client in an 80x24 terminal: a question
left in the history once answered, Enter in the paste prompt, keys read with
a paste, a search's notices, a narrow terminal, a reply's quote after an
edit. Pilot against real nodes on loopback."""

import pytest
from textual import events


from .conftest import until
from .test_annotation_keys import row
from .test_app import SIZE, started, texts, type_line
from .test_defects import send_at_once

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
