"""Offering a file hashes the whole of it first, which takes seconds for a
big one: ``/send`` returns at once, what is typed next goes out meanwhile,
and the offer follows when the hash is done. A real node on 127.0.0.1; the
hash is held back until the line typed after ``/send`` is delivered."""

import asyncio
import threading

from chat_app import events as ev
from chat_app.commands import Say, Send
from chat_app.files import manager
from chat_app.node import Node
from chat_app.store import Store


def test_what_is_typed_after_send_does_not_wait_for_the_hash(tmp_path, monkeypatch):
    source = tmp_path / "big.bin"
    source.write_bytes(b"x" * 300_000)
    said = threading.Event()
    describe = manager.describe

    def slow_describe(*args, **kwargs):  # on the files' worker thread, as the real hash is
        said.wait(10)
        return describe(*args, **kwargs)

    monkeypatch.setattr(manager, "describe", slow_describe)
    events: list = []

    async def scenario():
        node = Node(Store(tmp_path / "alice" / "db.sqlite3"), nick="alice", channels=["room"], emit=events.append,
                    host="127.0.0.1", discovery=False)
        await node.start()
        try:
            await asyncio.wait_for(node.execute(Send(str(source)), "room"), 2)
            await asyncio.wait_for(node.execute(Say("typed while it hashes"), "room"), 2)
            for _ in range(500):
                delivered = [e for e in events if isinstance(e, ev.MessageDelivered)]
                if delivered and not said.is_set():
                    said.set()  # the line is out: the hash may finish now
                if any(e.kind == "file" for e in delivered):
                    break
                await asyncio.sleep(0.02)
        finally:
            said.set()
            await node.stop()

    asyncio.run(scenario())
    delivered = [(e.kind, e.text.splitlines()[0]) for e in events if isinstance(e, ev.MessageDelivered)]
    assert delivered == [("text", "typed while it hashes"), ("file", "big.bin")]
