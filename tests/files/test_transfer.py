"""Files carried between real listeners on 127.0.0.1: two real nodes, and
hostile holders - one that sends a wrong chunk, one that offers what it does
not hold, one too slow - each left for the next; a download cut off and
resumed by a restarted peer."""

import asyncio
import hashlib
import os
import socket

import cbor2
import pytest

from chat_app import events as ev
from chat_app.files import fetch, manager, serve
from chat_app.commands import Accept
from chat_app.files.chunks import read_chunk
from chat_app.files.events import FileOffered, FileProgress, FileReceived, FileSourceLeft
from chat_app.files.manager import Files
from chat_app.file_offer import FileOffer
from chat_app.files.wire import decode_request, encode_chunk, encode_none, encode_request
from chat_app.net.tcp import frame, read_frame
from chat_app.node import Node
from chat_app.payload import Payload
from chat_app.store import Store

PASSPHRASE = "a passphrase long enough for a private room"


async def _until(events: list, kind: type, timeout: float = 20.0):
    for _ in range(int(timeout / 0.02)):
        if found := [e for e in events if isinstance(e, kind)]:
            return found[-1]
        await asyncio.sleep(0.02)
    raise AssertionError(f"no {kind.__name__} in {events[-10:]}")


def _node(tmp_path, name, events, **kwargs) -> Node:
    return Node(Store(tmp_path / name / "db.sqlite3"), nick=name, emit=events.append, host="127.0.0.1",
                discovery=False, **kwargs)


@pytest.mark.parametrize("private", [False, True], ids=["public", "private"])
def test_two_nodes_carry_a_file_and_a_private_one_travels_sealed(tmp_path, private):
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(700_000))
    channel = "room"
    passphrases = {channel: PASSPHRASE} if private else None
    (tmp_path / "alice").mkdir()
    (tmp_path / "bob").mkdir()

    async def scenario():
        alice_events, bob_events = [], []
        alice = _node(tmp_path, "alice", alice_events, channels=[] if private else [channel],
                      passphrases=passphrases)
        await alice.start()
        bob = _node(tmp_path, "bob", bob_events, channels=[] if private else [channel],
                    static_peers=[("127.0.0.1", alice.port)], passphrases=passphrases)
        await bob.start()
        try:
            await alice.send_file(channel, str(source))
            offered = await _until(bob_events, FileOffered)
            assert (offered.file_name, offered.size, offered.own) == ("data.bin", 700_000, False)
            await bob.execute(Accept(offered.number), channel)
            received = await _until(bob_events, FileReceived)
            assert open(received.path, "rb").read() == source.read_bytes()
            # what anyone who asks alice's port for the first chunk is given
            root = FileOffer.parse(next(e for e in bob_events if isinstance(e, ev.MessageDelivered)
                                        and e.kind == "file").text).root
            reader, writer = await asyncio.open_connection("127.0.0.1", alice.port)
            writer.write(frame(encode_request(root, [0])))
            chunk = await read_frame(reader)
            writer.close()
            plain = source.read_bytes()[:256 * 1024]
            assert (plain in chunk) is not private
        finally:
            await bob.stop()
            await alice.stop()

    asyncio.run(scenario())


async def _holder(tmp_path, source, name="holder") -> tuple[Files, FileOffer]:
    (tmp_path / name).mkdir()
    files = Files(tmp_path / name, lambda e: None, lambda sender: [])
    return files, await files.offer(str(source), encrypted=False)


async def _listener(handle) -> tuple[asyncio.AbstractServer, tuple[str, int]]:
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[:2]


async def _serving(holder: Files) -> tuple[asyncio.AbstractServer, tuple[str, int]]:
    """A listener where ``holder`` answers file requests, as a node's replication port does."""

    async def honest(reader, writer):
        await holder.serve(reader, writer, await read_frame(reader))

    return await _listener(honest)


def _offered(files: Files, offer: FileOffer) -> None:
    files.observe(ev.MessageDelivered("general", 1, "m1", "sender", 1, "alice", "file", offer.text, 1, False,
                                      offer=offer))


def test_bad_holders_are_left_for_a_good_one(tmp_path, monkeypatch):
    monkeypatch.setattr(fetch, "SLOW_S", 0.5)
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(600_000))

    async def scenario():
        holder, offer = await _holder(tmp_path, source)
        held = holder.ledger.held(offer.root)

        async def wrong_chunks(reader, writer):  # a true manifest, then chunks flipped
            while (request := await read_frame(reader)) is not None:
                root, indexes = decode_request(request)
                if indexes is None:
                    writer.write(frame(cbor2.dumps(["manifest", held.manifest])))
                for index in indexes or ():
                    data = bytearray(read_chunk(source, index, offer.chunk_size, None))
                    data[0] ^= 0xFF
                    writer.write(frame(encode_chunk(index, bytes(data))))
            writer.close()

        async def not_holding(reader, writer):
            await read_frame(reader)
            writer.write(frame(encode_none("not held here")))
            await writer.drain()

        async def silent(reader, writer):
            await asyncio.sleep(5)

        servers = [await _listener(h) for h in (wrong_chunks, not_holding, silent)] + [await _serving(holder)]
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))  # bound, never listening: a refused connection
        addresses = [closed.getsockname()] + [address for _, address in servers]
        (tmp_path / "me").mkdir()
        events = []
        me = Files(tmp_path / "me", events.append, lambda sender: addresses)
        _offered(me, offer)
        me.accept(None)
        received = await _until(events, FileReceived)
        await me.stop()
        closed.close()
        for server, _ in servers:
            server.close()
        assert open(received.path, "rb").read() == source.read_bytes()
        reasons = [e.reason for e in events if isinstance(e, FileSourceLeft)]
        assert len(reasons) == 4, reasons
        assert reasons[0].startswith("cannot connect")
        assert reasons[1] == "sent a bad chunk, refused: chunk 0 does not match its hash"
        assert reasons[2] == "does not hold it (not held here)"
        assert reasons[3].startswith("too slow")

    asyncio.run(scenario())


def test_a_download_cut_off_resumes_after_a_restart_asking_only_for_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(manager, "RETRY_S", 60)  # the first run never tries again: it is cut off
    monkeypatch.setattr(fetch, "WINDOW", 2)
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(5 * 256 * 1024 + 7))

    async def scenario():
        holder, offer = await _holder(tmp_path, source)
        held = holder.ledger.held(offer.root)
        asked: list[int] = []
        real_read_chunk = serve.read_chunk

        def recorded(path, index, *args):
            asked.append(index)
            return real_read_chunk(path, index, *args)

        monkeypatch.setattr(serve, "read_chunk", recorded)

        async def hangs_up(reader, writer):  # the manifest and chunks 0 and 1, then it is gone
            while (request := await read_frame(reader)) is not None:
                indexes = decode_request(request)[1]
                if indexes is None:
                    writer.write(frame(cbor2.dumps(["manifest", held.manifest])))
                elif max(indexes) >= 2:
                    break
                for index in indexes or ():
                    writer.write(frame(encode_chunk(index, real_read_chunk(source, index, offer.chunk_size, None))))
            writer.close()

        first, first_address = await _listener(hangs_up)
        second, second_address = await _serving(holder)
        (tmp_path / "me").mkdir()
        events = []
        me = Files(tmp_path / "me", events.append, lambda sender: [first_address])
        _offered(me, offer)
        me.accept(None)
        await _until(events, FileSourceLeft)
        await me.stop()  # the peer quits mid-download
        assert not [e for e in events if isinstance(e, FileReceived)]

        again = Files(tmp_path / "me", events.append, lambda sender: [second_address])
        again.start()  # accepted and unfinished: it carries on by itself
        received = await _until(events, FileReceived)
        await again.stop()
        first.close()
        second.close()
        assert open(received.path, "rb").read() == source.read_bytes()
        assert hashlib.sha256(open(received.path, "rb").read()).hexdigest() == offer.sha256
        assert sorted(asked) == [2, 3, 4, 5], asked  # chunks 0 and 1 were verified before the cut
        assert [e for e in events if isinstance(e, FileProgress)][-1].done == offer.size

    asyncio.run(scenario())


@pytest.mark.parametrize("limit, fetched", [("1", True), ("0.5", False)])
def test_offers_under_the_size_limit_in_the_settings_are_fetched_without_asking(tmp_path, limit, fetched):
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(600_000))

    async def scenario():
        holder, offer = await _holder(tmp_path, source)
        server, address = await _serving(holder)
        (tmp_path / "me").mkdir()
        (tmp_path / "me" / "files.toml").write_text(f'auto_accept_mb = {limit}\ndownloads = "{tmp_path / "dl"}"\n')
        events = []
        me = Files(tmp_path / "me", events.append, lambda sender: [address])
        _offered(me, offer)
        assert [e.auto for e in events if isinstance(e, FileOffered)] == [fetched]
        if fetched:
            received = await _until(events, FileReceived)
            assert received.path == str(tmp_path / "dl" / "data.bin")
        else:
            await asyncio.sleep(0.3)
            assert not [e for e in events if isinstance(e, FileProgress | FileReceived)]
            me.accept(None)  # asked, then fetched
            await _until(events, FileReceived)
        await me.stop()
        server.close()

    asyncio.run(scenario())


def test_a_settings_file_that_does_not_fit_is_said_in_one_line(tmp_path):
    (tmp_path / "files.toml").write_text("auto_accept_mb = 'lots'\n")
    events = []

    async def scenario():
        files = Files(tmp_path, events.append, lambda sender: [])
        await files.stop()
        return files.settings

    settings = asyncio.run(scenario())
    assert settings.auto_accept_bytes == 0 and settings.downloads == tmp_path / "downloads"
    assert [e.reason for e in events] == ["files.toml: auto_accept_mb should be a number of megabytes, not 'lots'"]


def test_a_file_whose_chunks_match_but_whole_does_not_is_not_saved(tmp_path):
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(300_000))

    async def scenario():
        holder, offer = await _holder(tmp_path, source)
        server, address = await _serving(holder)
        (tmp_path / "me").mkdir()
        events = []
        me = Files(tmp_path / "me", events.append, lambda sender: [address])
        lying = FileOffer(offer.name, offer.size, offer.chunk_size, "0" * 64, offer.root, offer.media)
        _offered(me, lying)
        me.accept(None)
        error = await _until(events, ev.Error)
        await me.stop()
        server.close()
        assert "does not match the offer's SHA-256" in error.reason
        assert not [e for e in events if isinstance(e, FileReceived)]
        assert not list((tmp_path / "me" / "files-partial").iterdir())
        assert not (tmp_path / "me" / "downloads").exists()

    asyncio.run(scenario())


def test_a_local_name_the_wire_rule_refuses_is_offered_safe(tmp_path):
    source = tmp_path / "evil\x1b[2J\x07.txt"
    source.write_bytes(b"data")

    async def scenario():
        holder, offer = await _holder(tmp_path, source)
        await holder.stop()
        return offer

    offer = asyncio.run(scenario())
    assert offer.name == "evil_[2J_.txt"
    Payload("file", "alice", offer.text, 1, 0)  # travels


def test_a_file_offered_twice_is_fetched_and_saved_once(tmp_path, monkeypatch):
    source = tmp_path / "data.bin"
    source.write_bytes(os.urandom(900_000))
    asked: list[int] = []
    real_read_chunk = serve.read_chunk
    monkeypatch.setattr(serve, "read_chunk", lambda path, index, *args: asked.append(index) or real_read_chunk(
        path, index, *args))

    async def scenario():
        holder, offer = await _holder(tmp_path, source)
        server, address = await _serving(holder)
        (tmp_path / "me").mkdir()
        events = []
        me = Files(tmp_path / "me", events.append, lambda sender: [address])
        for message_id, channel in (("m1", "general"), ("m2", "random")):
            me.observe(ev.MessageDelivered(channel, 1, message_id, "s", 1, "alice", "file", offer.text, 1, False,
                                           offer=offer))
        me.accept(1)
        me.accept(2)  # while the first is under way
        for _ in range(500):
            if len([e for e in events if isinstance(e, FileReceived)]) == 2:
                break
            await asyncio.sleep(0.02)
        me.accept(2)
        await me.stop()
        server.close()
        return events

    events = asyncio.run(scenario())
    received = [e for e in events if isinstance(e, FileReceived)]
    assert [(e.number, e.channel) for e in received] == [(1, "general"), (2, "random")]
    assert received[0].path == received[1].path and sorted(asked) == [0, 1, 2, 3]
    assert list((tmp_path / "me" / "downloads").iterdir()) == [tmp_path / "me" / "downloads" / "data.bin"]
    assert [e.reason for e in events if isinstance(e, ev.Error)] == [
        f"file 2 is already saved as {received[0].path}"]
