"""Real nodes on loopback for the client: the app under test runs its own
(via NodeThread), and "bob" is a second, in-process node with real sockets."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from chat_app.node import Node
from chat_app.store import Store
from chat_app.tui.app import ChatApp
from chat_app.tui.bridge import NodeThread


def node_factory(data_dir: Path, nick: str, channels=("general",), peers=()):
    store = Store(data_dir / "sds-chat.sqlite3")

    def make(emit):
        return Node(store, nick=nick, channels=list(channels), emit=emit, host="127.0.0.1", port=0,
                    static_peers=list(peers), discovery=False)

    return make


class Bob:
    """A second peer in this process: real node, real UDP, real SQLite."""

    def __init__(self, data_dir: Path, peers, channels=("general",)) -> None:
        self.events: list[dict] = []  # as headless mode would print them
        self.thread = NodeThread(node_factory(data_dir, "bob", channels, peers),
                                 lambda event: self.events.append(event.to_json()))
        self.node = self.thread.start()

    def call(self, fn, *args):
        return self.thread.call(fn, *args).result(5)

    def say(self, text: str, channel: str = "general") -> str:
        return self.call(self.node.say, channel, text)

    def wait_for(self, predicate, timeout: float = 10.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in list(self.events):
                if predicate(event):
                    return event
            time.sleep(0.02)
        raise AssertionError(f"bob: timed out; events: {self.events[-5:]}")


@pytest.fixture
def make_app(tmp_path):
    def make(nick="alice", channels=("general",), **kwargs) -> ChatApp:
        data = tmp_path / nick
        return ChatApp(node_factory(data, nick, channels), data, **kwargs)

    return make


@pytest.fixture
def bob_for(tmp_path):
    bobs: list[Bob] = []

    def make(app: ChatApp, channels=("general",)) -> Bob:
        bob = Bob(tmp_path / "bob", [("127.0.0.1", app.bridge.node.port)], channels)
        bobs.append(bob)
        return bob

    yield make
    for bob in bobs:
        bob.thread.stop()


async def until(pilot, predicate, timeout: float = 10.0, step: float = 0.05) -> None:
    """Let the app run until ``predicate()`` holds, looking every ``step`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await pilot.pause(step)
