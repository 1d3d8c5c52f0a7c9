"""The client and headless mode run a typed line the same way: the same
command value reaches the same ``Node.execute``, about the same current
channel (real nodes on loopback: the client's on its thread, headless mode's
in this loop)."""

import asyncio

import pytest

from chat_app.commands import Typing
from chat_app.headless import Headless
from chat_app.node import Node
from chat_app.store import Store
from chat_app.tui.app import ChatApp

from .conftest import until
from .test_app import SIZE, started, type_line

LINES = ["hello", "/me waves", "//not a command", "/topic plans", "/topic", "/away lunch", "/away", "/nick alicia",
         "/whois bob", "/trust bob ab12 cd34", "/ignore mallory", "/ignore", "/msg bob hi there", "/query bob",
         "/peers", "/join #ops", "from ops", "/part", "/join #dev+svs", "/part #dev", "back in general"]


def recording(data_dir, executed: list):
    """A node factory whose nodes keep each (command, current) they execute."""
    class RecordingNode(Node):
        async def execute(self, command, current):
            executed.append((command, current))
            await super().execute(command, current)

    def make(emit):
        return RecordingNode(Store(data_dir / "sds-chat.sqlite3"), nick="alice", channels=["general"], emit=emit,
                             host="127.0.0.1", discovery=False)

    return make


async def headless_runs(data_dir) -> tuple[list, list]:
    """What headless mode executes for LINES, and its current channel after each."""
    executed, currents = [], []
    headless = Headless(recording(data_dir, executed), read_stdin=False)
    running = asyncio.ensure_future(headless.run())
    while headless.current is None:
        await asyncio.sleep(0.01)
    for line in LINES:
        await headless.command(line)
        currents.append(headless.current)
    headless._quit()
    await running
    return executed, currents


@pytest.mark.asyncio
async def test_a_typed_line_is_the_same_command_run_by_the_same_execute_in_both(tmp_path):
    by_headless, currents = await headless_runs(tmp_path / "headless")
    assert [type(c).__name__ for c, _ in by_headless] == [
        "Say", "Say", "Say", "Topic", "Topic", "Away", "Away", "Nick", "Whois", "Trust", "Ignore", "Ignore", "Msg",
        "Query", "Peers", "Join", "Say", "Part", "Join", "Part", "Say"]
    assert currents[-6:] == ["ops", "ops", "general", "dev", "general", "general"]

    by_client: list = []
    app = ChatApp(recording(tmp_path / "client", by_client), tmp_path / "client")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: started(app))
        for count, (line, current) in enumerate(zip(LINES, currents, strict=True), 1):
            await type_line(pilot, line)
            await until(pilot, lambda count=count: len(typed(by_client)) == count)
            await until(pilot, lambda current=current: app.chat.state.current == current)
            if line == "/peers":
                await pilot.press("escape")
    assert typed(by_client) == by_headless


def typed(executed: list) -> list:
    """What the lines asked for: the client also says it is typing while a line is written."""
    return [(command, current) for command, current in executed if not isinstance(command, Typing)]
