"""Headless mode reads commands until stdin closes. A command that fails
must end the run with its error, not leave a peer that reads no more lines
running for ever (a real node on loopback)."""

import asyncio

import pytest

from chat_app import events as ev
from chat_app import headless
from chat_app.commands import Topic
from chat_app.headless import Headless
from chat_app.node import Node
from chat_app.store import Store


class Broken(Exception):
    pass


def failing_on_topic(data_dir):
    class FailingNode(Node):
        async def execute(self, command, current):
            if isinstance(command, Topic):
                raise Broken("a bug in /topic")
            await super().execute(command, current)

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


@pytest.mark.asyncio
async def test_a_command_that_fails_ends_the_run_with_its_error_after_leaving(tmp_path, monkeypatch):
    lines = iter([b"/join #ops\n", b"/topic plans\n", b"never read\n"])  # and stdin stays open

    async def line_source(stdin):
        async def readline() -> bytes:
            return next(lines, None) or await asyncio.Event().wait()  # past the lines: waits, as an open stdin does
        return readline

    monkeypatch.setattr(headless, "_line_source", line_source)
    run = Recording(failing_on_topic(tmp_path))
    with pytest.raises(Broken):
        await asyncio.wait_for(run.run(), 20)
    names = [type(event) for event in run.said]
    assert ev.Joined in names and names[-1] is ev.Bye  # it left as on /quit, then said what failed
    assert next(lines) == b"never read\n"
