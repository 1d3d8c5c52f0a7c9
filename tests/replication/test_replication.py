"""Replication sessions wired in memory (both modes), and every message
type's encoding."""

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.replication import Closed, Connection, EntryReceived, ReplicationError, SessionFinished, decode, encode
from sync.replication import messages as m


class Logs:
    """A toy store: {channel: {author: {seq: entry}}}. Entries are b"channel|author|seq"."""

    def __init__(self, data=None):
        self.data = data or {}

    def add(self, channel, author, seq):
        self.data.setdefault(channel, {}).setdefault(author, {})[seq] = f"{channel}|{author}|{seq}".encode()

    def heights(self, channel):
        out = []
        for author, seqs in sorted(self.data.get(channel, {}).items()):
            height = 0
            while height + 1 in seqs:
                height += 1
            out.append((author, height))
        return out

    def entries_after(self, channel, author, seq):
        seqs = self.data.get(channel, {}).get(author, {})
        return [seqs[s] for s in sorted(seqs) if s > seq]

    def validate(self, channels, entry):
        try:
            channel, author, seq = entry.decode().split("|")
            int(seq)
        except ValueError:
            raise ReplicationError("entry is not channel|author|seq") from None
        if channel not in channels:
            raise ReplicationError(f"entry for {channel}, not requested")
        return channel

    def store(self, entry):
        channel, author, seq = entry.decode().split("|")
        self.add(channel, author, int(seq))


def pump(a: Connection, b: Connection, stores=None, rounds=20):
    """Carry messages both ways until quiet; store received entries."""
    events = {id(a): [], id(b): []}
    for _ in range(rounds):
        moved = False
        for src, dst in ((a, b), (b, a)):
            for data in src.messages_to_send():
                moved = True
                dst.receive(data)
            for event in dst.events():
                events[id(dst)].append(event)
                if stores and isinstance(event, EntryReceived):
                    stores[id(dst)].store(event.entry)
        if not moved:
            break
    return events[id(a)], events[id(b)]


def pair(store_a, store_b, channels_a=("general",), channels_b=("general",), live=False, mode=1):
    a = Connection(store_a, channels_a, store_a.validate, initiator=True, now=1, live=live, mode=mode)
    b = Connection(store_b, channels_b, store_b.validate, initiator=False, now=1, live=live)
    pump(a, b)  # exchange announcements
    return a, b


@pytest.mark.parametrize("mode", [0, 1], ids=["log-height", "set-reconciliation"])
def test_sync_brings_both_sides_to_the_union(mode):
    sa, sb = Logs(), Logs()
    for s in range(1, 6):
        sa.add("general", "alice", s)
    for s in range(1, 3):
        sb.add("general", "alice", s)
    for s in range(1, 4):
        sb.add("general", "bob", s)
    a, b = pair(sa, sb, mode=mode)
    assert a.sync() == 0
    ea, eb = pump(a, b, {id(a): sa, id(b): sb})
    assert sa.data == sb.data and sa.heights("general") == [("alice", 5), ("bob", 3)]
    (done_a,) = [e for e in ea if isinstance(e, SessionFinished)]
    assert (done_a.sent, done_a.received, done_a.live) == (3, 3, False)  # only what b lacked: alice 3..5


@pytest.mark.parametrize("mode", [0, 1], ids=["log-height", "set-reconciliation"])
def test_holes_are_filled_both_ways(mode):
    sa, sb = Logs(), Logs()
    for s in (1, 2, 4):
        sa.add("general", "carol", s)
    for s in (1, 2, 3):
        sb.add("general", "carol", s)
    a, b = pair(sa, sb, mode=mode)
    a.sync()
    pump(a, b, {id(a): sa, id(b): sb})
    assert sorted(sa.data["general"]["carol"]) == sorted(sb.data["general"]["carol"]) == [1, 2, 3, 4]


def test_requests_for_channels_not_announced_are_ignored_and_duplicates_too():
    sa, sb = Logs(), Logs()
    sa.add("secret", "alice", 1)
    a, b = pair(sa, sb, channels_a=("general", "secret"), channels_b=("general",))
    assert a.sync(["secret"]) is None  # b never announced it: a does not even ask
    b.receive(encode(m.SyncRequest(7, 0, ("secret",))))
    assert b.messages_to_send() == []  # ignored
    b.receive(encode(m.SyncRequest(8, 0, ("general",))))
    b.receive(encode(m.SyncRequest(9, 0, ("general",))))  # the same sync again: ignored
    assert [decode(x).TYPE for x in b.messages_to_send()] == [10]


def test_newer_announcements_replace_older_ones():
    sa, sb = Logs(), Logs()
    a, b = pair(sa, sb)
    b.receive(encode(m.Announce(50, ("general", "random"))))
    b.receive(encode(m.Announce(40, ())))  # older: ignored
    assert b.remote_channels == ("general", "random")
    b.receive(encode(m.Announce(60, ())))  # newer: "unannounce" everything
    assert b.remote_channels == ()


@pytest.mark.parametrize("mode", [0, 1], ids=["log-height", "set-reconciliation"])
def test_live_mode_streams_new_entries_until_syncdone_false(mode):
    sa, sb = Logs(), Logs()
    a, b = pair(sa, sb, live=True, mode=mode)
    a.sync()
    ea, eb = pump(a, b, {id(a): sa, id(b): sb})
    assert [e.live for e in ea if isinstance(e, SessionFinished)] == [True]
    sa.add("general", "alice", 1)
    a.push("general", sa.data["general"]["alice"][1])
    pump(a, b, {id(a): sa, id(b): sb})
    assert sb.data == sa.data
    a.stop_live()
    _, eb = pump(a, b)
    assert [e.live for e in eb if isinstance(e, SessionFinished)] == [False]
    a.push("general", b"general|alice|2")  # not live any more: nothing goes out
    assert a.messages_to_send() == []


@pytest.mark.parametrize("data, reason", [
    (b"\xff\xff", "not CBOR"),
    (cbor2.dumps({"a": 1}), "non-empty CBOR array"),
    (cbor2.dumps([99, 0]), "unknown message type 99"),
    (cbor2.dumps([1, -1, 0, []]), "session_id is not a u64"),
    (cbor2.dumps([3, 0]), "message type 3 with 1 fields"),
    (cbor2.dumps([2, 42, b"x", b""]), "unknown session 42"),
])
def test_bad_input_closes_with_a_reason(data, reason):
    a, _ = pair(Logs(), Logs())
    a.receive(data)
    (closed,) = [e for e in a.events() if isinstance(e, Closed)]
    assert reason in closed.reason and a.closed == closed.reason


def test_an_invalid_entry_closes_the_session_and_is_not_reported():
    sa, sb = Logs(), Logs()
    a, b = pair(sa, sb)
    sid = a.sync()
    a.receive(encode(m.Entry(sid, b"random|mallory|1")))  # session open, but not a requested channel
    events = a.events()
    assert not [e for e in events if isinstance(e, EntryReceived)]
    assert "not requested" in a.closed


ITEM = st.tuples(st.text(max_size=8), st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
SID = st.integers(0, 2**64 - 1)
MESSAGES = st.one_of(
    st.builds(m.Announce, st.integers(0, 2**64 - 1), st.lists(st.text(max_size=6)).map(tuple)),
    st.builds(m.SyncRequest, SID, st.sampled_from([0, 1]), st.lists(st.text(max_size=6)).map(tuple)),
    st.builds(m.Entry, SID, st.binary(), st.binary()),
    st.builds(m.SyncDone, SID, st.booleans()),
    st.builds(m.Have, SID, st.lists(ITEM).map(tuple)),
    st.builds(m.EmptySet, SID, st.booleans()),
    st.builds(m.LowerBound, SID, ITEM),
    st.builds(m.Payload, SID, ITEM),
    st.builds(m.Payload, SID, ITEM, st.booleans()),
    st.builds(m.Payload, SID, ITEM, st.booleans(), ITEM),
    st.builds(m.EmptyPayload, SID, ITEM),
    st.builds(m.Done, SID, ITEM),
    st.builds(m.Fingerprint, SID, st.binary(), ITEM),
    st.builds(m.Terminal, SID),
)


@settings(max_examples=300)
@given(MESSAGES)
def test_every_message_type_round_trips_as_the_specified_cbor_array(msg):
    data = encode(msg)
    assert decode(data) == msg
    assert cbor2.loads(data)[0] == msg.TYPE


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_decode_never_raises_anything_but_replication_error(data):
    try:
        decode(data)
    except ReplicationError:
        pass


def test_set_reconciliation_against_an_empty_peer_sends_everything():
    sa, sb = Logs(), Logs()
    for s in range(1, 4):
        sa.add("general", "alice", s)
    a, b = pair(sb, sa)  # the empty side opens: it sends EmptySet
    a.sync()
    first = [decode(x) for x in a.messages_to_send()]
    assert [type(x).__name__ for x in first] == ["SyncRequest", "EmptySet"]
    for data in map(encode, first):
        b.receive(data)
    pump(a, b, {id(a): sb, id(b): sa})
    assert sb.data == sa.data
