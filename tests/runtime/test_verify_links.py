"""A replication read's entries go through the verify pool as datagrams do
(``Runtime.stream_admit``, the signatures on worker threads,
``Runtime.stream_verified``): checked off the event loop's thread, taken in
the order they arrived, a bad signature refused with its reason, nothing
unverified handed to an engine, and nothing verified for a session that is
not open."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass

import pytest

from chat_app import events as ev
from chat_app.crypto import Identity, blind_id
from chat_app.io import verifying
from chat_app.io.peer import AsyncPeer
from chat_app.net.tcp import frame
from chat_app.runtime import Runtime
from chat_app.runtime.arrivals import verify_all
from chat_app.runtime.blind import datagram_set
from chat_app.store import Store
from sync.replication import log_id
from sync.replication import messages as m

from .conftest import texts

GENERAL = ("general",)
ROOM, PASS = "operations-room", "correct horse battery staple"


def wall_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Line:
    log: str  # the log it is in on a link: its author, or in a private channel its blind id
    entry: bytes  # as a link carries it
    signed: bytes  # the SDS bytes its signature covers (what the verifier and the engine see)
    text: str
    author: str


def first_lines(tmp_path, nicks: list[str], now: int, room: str = "general", bad: int | None = None) -> list[Line]:
    """Each author's first line in ``room``, as a replication link carries
    it; the ``bad``-th with its signature broken. In a private channel
    (``ROOM``) an entry is the datagram its author sent: its signed envelope,
    encrypted (the encryption holds: the signature is what fails). Nobody
    has heard anyone: each message names no other, so each can be delivered
    alone."""
    lines = []
    for i, nick in enumerate(nicks):
        author = Runtime(Store(tmp_path / f"{nick}.sqlite3"), nick=nick, identity=Identity.generate(),
                         passphrases={ROOM: PASS} if room == ROOM else None)
        author.start([] if room == ROOM else [room], 7000, ["127.0.0.1"], now)
        author.say(room, f"{nick} was here", "text", now)
        author.datagrams_to_send()
        (envelope,) = author.store.entries_after(room, author.peer_id, 0)
        if i == bad:
            envelope = envelope[:-1] + bytes((envelope[-1] ^ 1,))
        if room == ROOM:
            entry = author.envelopes.private[ROOM].encrypt(envelope)
            lines.append(Line(blind_id(entry), entry, envelope[35:-64], f"{nick} was here", author.peer_id))
        else:
            lines.append(Line(author.peer_id, envelope, envelope[35:-64], f"{nick} was here", author.peer_id))
    return lines


async def read_frame(reader: asyncio.StreamReader) -> m.Message:
    size = int.from_bytes(await reader.readexactly(4), "big")
    return m.decode(await reader.readexactly(size))


async def replicate_to(port: int, link: str, lines: list[Line], taken) -> None:
    """Play the side that dials: a log-height session on ``link`` (a
    channel's name on links) naming the lines' logs, then their entries and
    ``SyncDone`` in one write; hang up once ``taken()`` says they are in."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(frame(m.encode(m.Announce(wall_ms(), (link,))))
                 + frame(m.encode(m.SyncRequest(0, m.LOG_HEIGHT, (link,)))))
    assert isinstance(await read_frame(reader), m.Announce)
    while not isinstance(await read_frame(reader), m.Have):  # the runtime read its heights off the loop
        pass
    have = m.Have(0, tuple((line.log, log_id(link), 1) for line in lines))
    writer.write(b"".join(frame(m.encode(msg)) for msg in
                          (have, *(m.EntryMessage(0, line.entry) for line in lines), m.SyncDone(0, False))))
    await writer.drain()
    while not taken():
        await asyncio.sleep(0.02)
    writer.close()


@pytest.mark.parametrize("room", ["general", ROOM], ids=["public", "private"])
def test_a_reads_entries_are_verified_on_the_pool_in_order_and_a_bad_one_is_refused(tmp_path, monkeypatch, room):
    """Over a real TCP stream, four entries in one read, the second badly
    signed. In a datagram set it is dropped and the session goes on (a peer
    may relay a set's garbage unknowing); in a public channel it ends the
    link, as it always did (the peer lies about its log), and what followed
    it is not taken."""
    now = wall_ms()
    lines = first_lines(tmp_path, ["alice", "bob", "dave", "erin"], now, room, bad=1)
    kept = [lines[0], *lines[2:]] if room == ROOM else lines[:1]
    checked: list[tuple[threading.Thread, list[bytes]]] = []

    def recording(envelopes):
        checked.append((threading.current_thread(), [e.payload for e in envelopes]))
        return verify_all(envelopes)

    monkeypatch.setattr(verifying, "verify_all", recording)
    carol = Runtime(Store(tmp_path / "carol.sqlite3"), nick="carol", identity=Identity.generate(),
                    passphrases={ROOM: PASS} if room == ROOM else None)
    events: list = []
    received: list[bytes] = []

    async def run() -> None:
        peer = AsyncPeer(carol, events.append, store_path=tmp_path / "carol.sqlite3", host="127.0.0.1", port=0,
                         discovery=False, discovery_interface=None, clock=wall_ms)
        await peer.start([] if room == ROOM else [room])
        engine = carol.conversations[room].engine
        take = engine.receive_message

        def receive_message(parsed, at, source):
            received.append(parsed.data)
            return take(parsed, at, source)

        engine.receive_message = receive_message

        def taken() -> bool:
            return carol.stats["replicated_in"] + carol.stats["replication_bad_signature"] > len(kept)

        # a private channel goes by its datagram set on links (announced by its tag)
        link = datagram_set(bytes.fromhex(carol.announced_channels[0][1:])) if room == ROOM else room
        try:
            await asyncio.wait_for(replicate_to(peer.port, link, lines, taken), 20)
        finally:
            await peer.stop()

    asyncio.run(run())
    checked = [(thread, payloads) for thread, payloads in checked if payloads]  # reads that brought entries
    assert checked and all(thread is not threading.main_thread() for thread, _ in checked)  # not the loop's
    assert [p for _, payloads in checked for p in payloads] == [line.signed for line in lines]  # all, in order
    assert received == [line.signed for line in kept]  # in order; the bad one never
    assert sorted(texts(carol.store, room)) == [line.text for line in kept]
    refused = [e for e in events if isinstance(e, ev.DatagramRejected)]
    assert [e.kind for e in refused] == ["bad_signature"]
    assert refused[0].reason.startswith("replication entry from 127.0.0.1:")
    assert refused[0].reason.endswith(f": entry refused: bad_signature: signature does not match key {lines[1].author}")
    closed = [e.reason for e in events if isinstance(e, ev.ReplicationClosed)]
    assert closed == ([] if room == ROOM else [refused[0].reason.split(": ", 1)[1]])


@pytest.fixture
def carol(tmp_path):
    runtime = Runtime(Store(tmp_path / "carol.sqlite3"), nick="carol", identity=Identity.generate())
    runtime.start(list(GENERAL), 7001, ["127.0.0.1"], wall_ms())
    return runtime


def responding(carol: Runtime, lines: list[Line], now: int):
    """A link to ``carol`` in a log-height session on #general whose other
    side named the lines' logs: ready for their entries."""
    conn = carol.stream_opened(("127.0.0.1", 9), initiator=False, now=now)
    carol.stream_frames(conn, [m.encode(m.Announce(now, GENERAL)), m.encode(m.SyncRequest(0, m.LOG_HEIGHT, GENERAL))],
                        now)
    for link, wanted in carol.reads():
        carol.store_answered(link, wanted, carol.read_wanted(carol.store, wanted), now)
    carol.stream_frames(conn, [m.encode(m.Have(0, tuple((line.log, log_id("general"), 1) for line in lines)))], now)
    return conn


def test_no_entry_reaches_an_engine_before_its_verdict(tmp_path, carol):
    now = wall_ms()
    lines = first_lines(tmp_path, ["alice", "bob"], now)
    conn = responding(carol, lines, now)
    read = carol.stream_admit(conn, [m.encode(m.EntryMessage(0, line.entry)) for line in lines])
    assert len(read.to_verify) == 2 and carol.store.count("general") == 0  # admitted is not received
    with pytest.raises(ValueError):
        carol.stream_verified(conn, read, [True], now)  # a verdict short: nothing goes in
    assert carol.store.count("general") == 0
    carol.stream_verified(conn, read, [True, False], now)  # bob's failed its check
    assert texts(carol.store) == ["alice was here"]
    assert [e.kind for e in carol.events() if isinstance(e, ev.DatagramRejected)] == ["bad_signature"]


def test_an_entry_for_a_session_not_open_is_not_verified(tmp_path, carol):
    """As before the pool: an entry of no open session closes the link
    unchecked, costing no signature."""
    now = wall_ms()
    lines = first_lines(tmp_path, ["alice"], now)
    conn = responding(carol, lines, now)
    read = carol.stream_admit(conn, [m.encode(m.EntryMessage(7, lines[0].entry))])
    assert read.to_verify == []
    assert carol.stream_verified(conn, read, [], now)
    assert conn.closed == "message for unknown session 7"
    assert carol.store.count("general") == 0


def test_a_read_whose_signatures_are_checked_as_we_leave_ends_its_link_instead_of_holding_stop(tmp_path, monkeypatch):
    """A link whose read is on the pool as leaving is decided, its task not
    cancelled (a link we accepted; or one of ours whose cancellation
    ``asyncio.wait_for`` swallowed, as it did when the frames came with it):
    the verdict must still end the link. Before, it was dropped and the link
    waited for ever - and ``stop`` with it (a peer told to quit hung)."""
    now = wall_ms()
    lines = first_lines(tmp_path, ["alice", "bob", "dave", "erin"], now)  # more than INLINE: checked on the pool
    release = threading.Event()

    def held(envelopes):
        release.wait(10)
        return verify_all(envelopes)

    monkeypatch.setattr(verifying, "verify_all", held)
    carol = Runtime(Store(tmp_path / "carol.sqlite3"), nick="carol", identity=Identity.generate())

    async def run() -> tuple[bool, bool]:
        peer = AsyncPeer(carol, lambda event: None, store_path=tmp_path / "carol.sqlite3", host="127.0.0.1", port=0,
                         discovery=False, discovery_interface=None, clock=wall_ms)
        await peer.start(list(GENERAL))
        conn = responding(carol, lines, now)
        frames = [m.encode(m.EntryMessage(0, line.entry)) for line in lines]
        reading = asyncio.ensure_future(peer._take_read(conn, frames))
        await asyncio.sleep(0.05)  # the signatures are on the pool
        peer.quitting()
        release.set()
        try:
            while_checked = await asyncio.wait_for(reading, 5)
            after = await asyncio.wait_for(peer._take_read(conn, frames), 5)  # a read after leaving: not taken
        finally:
            release.set()
            await peer.stop()
        return while_checked, after

    assert asyncio.run(run()) == (True, True)
    assert carol.store.count("general") == 0  # neither read was taken
