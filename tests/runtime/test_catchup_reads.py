"""A replication link hands the runtime every frame one read of the socket
brought, and the entries of those frames are committed in one step: a late
joiner pays one SQLite commit per read, not one per message. The frames are
split by the real ``FrameReader`` over a real TCP connection."""

from __future__ import annotations

import asyncio

import pytest

from chat_app import events as ev
from chat_app.net.tcp import MAX_FRAME, FrameError, FrameReader, frame
from chat_app.store import Store

from .conftest import Net, texts


class CountingStore(Store):
    """A real store that counts its commits."""

    commits = 0

    def commit_step(self, *args, **kwargs):
        self.commits += 1
        return super().commit_step(*args, **kwargs)


def test_the_entries_of_one_read_are_committed_once(tmp_path):
    net = Net(tmp_path)
    alice = net.add("alice")
    carol_store = CountingStore(tmp_path / "carol.sqlite3")
    carol = net.add("carol", store=carol_store)
    away = net.address(carol)
    del net.nodes[away]  # carol hears nothing while alice talks
    for i in range(40):
        alice.say("general", f"a{i}", "text", net.now)
        net.pump()
    net.nodes[away] = carol
    dialer = carol.stream_opened(net.address(alice), initiator=True, now=net.now)
    listener = alice.stream_opened(away, initiator=False, now=net.now)
    commits_per_read = []  # of each read that brought carol messages
    for _ in range(50):  # a round: each side's store reads answered, then all it queued is one read
        for rt, conn, other, other_conn in ((carol, dialer, alice, listener), (alice, listener, carol, dialer)):
            for wanted_conn, wanted in rt.reads():
                rt.store_answered(wanted_conn, wanted, rt.read_wanted(rt.store, wanted), net.now)
            if frames := [out.data for out in conn.datagrams_to_send(net.now)]:
                before, held = carol_store.commits, len(texts(carol_store))
                other.stream_frames(other_conn, frames, net.now)
                if len(texts(carol_store)) > held:
                    commits_per_read.append((len(frames), carol_store.commits - before))
        if len(texts(carol_store)) == 40:
            break
    net.pump()
    assert texts(carol_store) == texts(alice.store) and len(texts(carol_store)) == 40
    finished = [e for e in net.seen(carol) if isinstance(e, ev.CatchupFinished)]
    assert finished and finished[-1].received == 40
    # the 40 entries came in one read of 40-odd frames: one commit for it, not 40
    (frames, commits), = commits_per_read
    assert frames >= 40 and commits == 1


def _read_all(chunks: list[bytes]) -> list[list[bytes] | None]:
    """What a FrameReader makes of ``chunks`` written one by one to a real TCP stream."""

    async def run() -> list[list[bytes] | None]:
        got: list[list[bytes] | None] = []
        done = asyncio.Event()

        async def serve(reader, writer):
            stream = FrameReader(reader)
            try:
                while (frames := await stream.frames()) is not None:
                    got.append(frames)
                got.append(None)
            except FrameError as exc:
                got.append([str(exc).encode()])
            writer.close()
            done.set()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        for chunk in chunks:
            writer.write(chunk)
            await writer.drain()
            await asyncio.sleep(0.05)  # each chunk its own read on the other side
        writer.close()
        await asyncio.wait_for(done.wait(), 5)
        server.close()
        return got

    return asyncio.run(run())


def test_frames_are_split_whole_however_the_bytes_arrive():
    one, two, three = frame(b"alpha"), frame(b"b" * 70_000), frame(b"")
    stream = one + two + three
    # the first read ends inside the second frame's length, the next inside its body
    got = _read_all([stream[:len(one) + 2], stream[len(one) + 2:len(one) + 40_000], stream[len(one) + 40_000:]])
    assert got == [[b"alpha"], [b"b" * 70_000, b""], None]


def test_a_read_of_several_frames_hands_them_on_together_and_a_cut_frame_is_dropped():
    got = _read_all([frame(b"x") + frame(b"y") + frame(b"z"), frame(b"never finished")[:-3]])
    assert got == [[b"x", b"y", b"z"], None]


@pytest.mark.parametrize("length", [MAX_FRAME + 1, 0xFFFFFFFF])
def test_an_oversized_frame_ends_the_stream(length):
    got = _read_all([frame(b"fine") + length.to_bytes(4, "big") + b"junk"])
    assert got == [[b"fine"], [f"frame of {length} bytes exceeds {MAX_FRAME}".encode()]]
