"""A command that fails (a bug) is said as an error in both surfaces and
the chat goes on; in headless mode, reading stdin that fails ends the run
with its error, after leaving - never a peer that reads no more lines and
runs for ever (real nodes on loopback)."""

import asyncio

import pytest

from chat_app import events as ev
from chat_app import headless
from chat_app.headless import Headless
from chat_app.node import Node
from chat_app.store import Store
from chat_app.tui.app import ChatApp

from .conftest import until
from .test_app import SIZE, started, texts, type_line


class Broken(Exception):
    pass


def failing_on_topic(data_dir):
    """A node factory whose nodes fail to set a topic."""
    class FailingNode(Node):
        def say(self, channel, text, kind="text"):
            if kind == "topic":
                raise Broken("a bug in /topic")
            return super().say(channel, text, kind)

    def make(emit):
        return FailingNode(Store(data_dir / "sds-chat.sqlite3"), nick="alice", channels=["general"], emit=emit,
                           host="127.0.0.1", discovery=False)

    return make


class Recording(Headless):
    def __init__(self, node_factory) -> None:
        self.said: list = []
        super().__init__(node_factory)

    def emit(self, event) -> None:
        self.said.append(event)
        super().emit(event)


def reading(monkeypatch, lines: list[bytes], then) -> None:
    """Headless mode's stdin: ``lines``, then whatever ``then()`` does."""
    source = iter(lines)

    async def line_source(stdin):
        async def readline() -> bytes:
            return next(source, None) or await then()
        return readline

    monkeypatch.setattr(headless, "_line_source", line_source)


@pytest.mark.asyncio
async def test_headless_says_a_failed_command_as_an_error_and_reads_on(tmp_path, monkeypatch, caplog):
    async def end_of_input() -> bytes:
        return b""

    reading(monkeypatch, [b"/join #ops\n", b"/topic plans\n", b"/join #dev\n"], end_of_input)
    run = Recording(failing_on_topic(tmp_path))
    assert await asyncio.wait_for(run.run(), 20) == 0
    said = [e for e in run.said if isinstance(e, ev.Joined | ev.Error | ev.Bye)]
    assert [type(e) for e in said] == [ev.Joined, ev.Error, ev.Joined, ev.Bye]
    assert "Broken: a bug in /topic" in said[1].reason and said[2].channel == "dev"
    assert "Traceback" in caplog.text and "a bug in /topic" in caplog.text  # the log has the details


@pytest.mark.asyncio
async def test_headless_leaves_and_raises_when_reading_stdin_fails(tmp_path, monkeypatch):
    async def broken_stdin() -> bytes:
        raise OSError("stdin went away")

    reading(monkeypatch, [b"/join #ops\n"], broken_stdin)
    run = Recording(failing_on_topic(tmp_path))
    with pytest.raises(OSError, match="stdin went away"):
        await asyncio.wait_for(run.run(), 20)  # before: it never returned
    assert [type(e) for e in run.said if isinstance(e, ev.Joined | ev.Bye)] == [ev.Joined, ev.Bye]


@pytest.mark.asyncio
async def test_the_client_shows_a_failed_command_as_an_error_and_goes_on(tmp_path):
    app = ChatApp(failing_on_topic(tmp_path), tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        await type_line(pilot, "/topic plans")
        await until(pilot, lambda: any("a bug in /topic" in text for text in texts(app)))
        await type_line(pilot, "still here")
        await until(pilot, lambda: "still here" in texts(app))
