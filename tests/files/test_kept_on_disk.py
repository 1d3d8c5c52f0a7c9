"""A fetched chunk is recorded as verified only once it is on disk, and the
record is written once a window, not once a chunk: each record is a commit
on the event loop, and 4,000 of them for a 1 GB file, with its writeback
piling up, held the chat for seconds. Two real nodes on 127.0.0.1."""

import asyncio
import os

from chat_app.commands import Accept
from chat_app.files import fetch
from chat_app.files.events import FileOffered, FileReceived
from chat_app.files.ledger import Ledger
from chat_app.file_offer import CHUNK_SIZE
from chat_app.node import Node
from chat_app.store import Store

from .test_transfer import _until


def test_chunks_are_recorded_a_window_at_a_time_after_they_are_synced(tmp_path, monkeypatch):
    chunks = 2 * fetch.WINDOW + 3
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(chunks * CHUNK_SIZE - 1000))
    happened: list[str] = []
    fdatasync, update = os.fdatasync, Ledger.update

    def synced(fd):
        happened.append("sync")
        return fdatasync(fd)

    def recorded(self, number, **fields):
        if "verified" in fields and fields["verified"] is not None:
            happened.append(f"record {bin(int.from_bytes(fields['verified'], 'little')).count('1')}")
        return update(self, number, **fields)

    monkeypatch.setattr(fetch.os, "fdatasync", synced)
    monkeypatch.setattr(Ledger, "update", recorded)

    async def scenario():
        alice_events, bob_events = [], []
        alice = Node(Store(tmp_path / "alice" / "db.sqlite3"), nick="alice", channels=["room"],
                     emit=alice_events.append, host="127.0.0.1", discovery=False)
        await alice.start()
        bob = Node(Store(tmp_path / "bob" / "db.sqlite3"), nick="bob", channels=["room"], emit=bob_events.append,
                   host="127.0.0.1", discovery=False, static_peers=[("127.0.0.1", alice.port)])
        await bob.start()
        try:
            await alice.send_file("room", str(source))
            offered = await _until(bob_events, FileOffered)
            await bob.execute(Accept(offered.number), "room")
            received = await _until(bob_events, FileReceived)
            assert open(received.path, "rb").read() == source.read_bytes()
        finally:
            await bob.stop()
            await alice.stop()

    asyncio.run(scenario())
    w = fetch.WINDOW
    assert happened == ["sync", f"record {w}", "sync", f"record {2 * w}", "sync", f"record {chunks}"]
