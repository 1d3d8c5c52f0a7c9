"""Day rules between messages of different days, kept right as messages
arrive late and older pages come in; a click tells a message's full date."""

import time

import pytest

from chat_app import events as ev
from chat_app.tui.widgets.channel_view import ChannelView

from .conftest import until
from .test_app import _full_layout, screen_text, started


def at(day: int, hour: int) -> int:
    """ms since the epoch of ``hour``:00 local time on 2026-11-``day``."""
    return int(time.mktime((2026, 11, day, hour, 0, 0, 0, 0, -1)) * 1000)


def said(text: str, when: int, message_id: str) -> ev.MessageDelivered:
    return ev.MessageDelivered("general", 0, message_id, "d" * 32, when, "dave", "text", text, 1, False)


@pytest.mark.asyncio
async def test_a_rule_marks_each_new_day_and_follows_late_messages(make_app):
    app = make_app()
    async with app.run_test(size=(110, 24)) as pilot:
        await until(pilot, lambda: started(app))
        view = app.query_one(ChannelView)
        for text, when, mid in [("friday morning", at(20, 10), "a"), ("friday noon", at(20, 12), "b"),
                                ("saturday", at(21, 9), "c")]:
            app.chat.node_event(said(text, when, mid))
            assert view.history_layout.offsets == _full_layout(view)
        await pilot.pause(0.1)
        shown = screen_text(app)
        assert shown.count("Friday 20 November 2026") == 1 and shown.count("Saturday 21 November 2026") == 1
        assert shown.index("Friday 20") < shown.index("friday noon") < shown.index("Saturday 21") < shown.index(
            "│ saturday")
        app.chat.node_event(said("saturday, early", at(21, 7), "b2"))  # late: now the day's first
        assert view.history_layout.offsets == _full_layout(view)
        await pilot.pause(0.1)
        shown = screen_text(app)
        assert shown.count("Saturday 21 November 2026") == 1
        lines = [line.rstrip() for line in shown.splitlines()]
        assert lines.index(next(x for x in lines if "Saturday 21" in x)) + 1 == lines.index(
            next(x for x in lines if x.endswith("│ saturday, early"))) < lines.index(
            next(x for x in lines if x.endswith("│ saturday")))
        app.chat.node_event(said("thursday", at(19, 23), "0"))  # a new first message, the day before
        assert view.history_layout.offsets == _full_layout(view)
        await pilot.pause(0.1)
        assert screen_text(app).count("November 2026") == 3


@pytest.mark.asyncio
async def test_a_click_on_a_message_tells_its_full_date(make_app):
    app = make_app()
    notes = []
    async with app.run_test(size=(110, 24)) as pilot:
        await until(pilot, lambda: started(app))
        app.notify = lambda message, **kw: notes.append(message)
        app.chat.node_event(said("when was this?", at(20, 10) + 42_000, "a"))
        await pilot.pause(0.1)
        view = app.query_one(ChannelView)
        row = next(y for y in range(view.size.height) if "when was this?" in view.render_line(y).text)
        await pilot.click(ChannelView, offset=(30, row))
        assert notes == ["dave: Friday 20 November 2026, 10:00:42"]


@pytest.mark.asyncio
async def test_a_resize_before_any_channel_is_shown(make_app):
    """The terminal may report its size before the node is ready."""
    app = make_app()
    async with app.run_test(size=(110, 24)) as pilot:
        view = app.query_one(ChannelView)
        view.model = None
        view.relayout()
        await pilot.resize_terminal(90, 20)
        await pilot.pause(0.1)
        assert app.is_running and view.history_layout.offsets[-1] == 0
