"""Replication sessions wired in memory (both modes), and every message
type's encoding."""

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.core import LocalProtocolError
from sync.replication import (
    Closed,
    Connection,
    EntriesWanted,
    EntryKey,
    EntryReceived,
    HeightsWanted,
    RemoteAnnounced,
    ReplicationError,
    SessionFinished,
    decode,
    encode,
)
from sync.replication import messages as m
from tests.replication.checking import checking


def validate_toy_entry(channels: tuple[str, ...], entry: bytes) -> EntryKey:
    """A toy entry is b"channel|author|seq" for one of ``channels``. It stands
    for the runtime's check (``CatchUp.check``); test_entry_checks.py holds
    both to the same contract and says why the entries differ."""
    try:
        channel, author, seq = entry.decode().split("|")
        key = EntryKey(channel, author, int(seq))
    except ValueError:
        raise ReplicationError("entry is not channel|author|seq") from None
    if channel not in channels:
        raise ReplicationError(f"entry for {channel}, not requested")
    return key


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
        return validate_toy_entry(channels, entry)

    def store(self, entry):
        channel, author, seq = entry.decode().split("|")
        self.add(channel, author, int(seq))


T = 1_000


def serve(conn: Connection, store: Logs, event) -> None:
    """Answer the connection's store requests the way a runtime does."""
    if isinstance(event, HeightsWanted):
        conn.provide_heights(event.session_id, {c: store.heights(c) for c in event.channels})
    elif isinstance(event, EntriesWanted):
        conn.provide_entries(event.session_id, [e for channel, author, above in event.wants
                                                for e in store.entries_after(channel, author, above)])


def sent(conn: Connection) -> list[bytes]:
    return [out.data for out in conn.datagrams_to_send(T)]


def pump(a: Connection, b: Connection, stores=None, rounds=20):
    """Carry messages both ways until quiet: answer store requests (from
    ``stores``, keyed by id(connection), else from empty logs) and store
    received entries."""
    events = {id(a): [], id(b): []}
    stores = stores or {id(a): Logs(), id(b): Logs()}
    for _ in range(rounds):
        moved = False
        for src, dst in ((a, b), (b, a)):
            for event in src.events():
                moved = True
                events[id(src)].append(event)
                serve(src, stores[id(src)], event)
                if isinstance(event, EntryReceived):
                    stores[id(src)].store(event.entry)
            for data in sent(src):
                moved = True
                dst.receive(data, T)
        if not moved:
            break
    return events[id(a)], events[id(b)]


def pair(store_a, store_b, channels_a=("general",), channels_b=("general",), live=False, mode=1):
    a = checking(channels_a, store_a.validate, initiator=True, now=1, live=live, mode=mode)
    b = checking(channels_b, store_b.validate, initiator=False, now=1, live=live)
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
    b.receive(encode(m.SyncRequest(7, 0, ("secret",))), T)
    assert sent(b) == [] and list(b.events()) == []  # ignored
    b.receive(encode(m.SyncRequest(8, 0, ("general",))), T)
    b.receive(encode(m.SyncRequest(9, 0, ("general",))), T)  # the same sync again: ignored
    (wanted,) = b.events()
    assert wanted == HeightsWanted(8, ("general",))
    serve(b, sb, wanted)
    assert [decode(x).TYPE for x in sent(b)] == [10]


def test_newer_announcements_replace_older_ones():
    sa, sb = Logs(), Logs()
    a, b = pair(sa, sb)
    b.receive(encode(m.Announce(50, ("general", "random"))), T)
    b.receive(encode(m.Announce(40, ())), T)  # older: ignored
    assert b.remote_channels == ("general", "random")
    b.receive(encode(m.Announce(60, ())), T)  # newer: "unannounce" everything
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
    assert sent(a) == []


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
    a.receive(data, T)
    (closed,) = [e for e in a.events() if isinstance(e, Closed)]
    assert reason in closed.reason and a.closed == closed.reason


def test_an_invalid_entry_closes_the_session_and_is_not_reported():
    sa, sb = Logs(), Logs()
    a, b = pair(sa, sb)
    sid = a.sync()
    a.receive(encode(m.EntryMessage(sid, b"random|mallory|1")), T)  # session open, but not a requested channel
    events = a.events()
    assert not [e for e in events if isinstance(e, EntryReceived)]
    assert "not requested" in a.closed


ITEM = st.tuples(st.text(max_size=8), st.integers(0, 2**64 - 1), st.integers(0, 2**64 - 1))
SID = st.integers(0, 2**64 - 1)
MESSAGES = st.one_of(
    st.builds(m.Announce, st.integers(0, 2**64 - 1), st.lists(st.text(max_size=6)).map(tuple)),
    st.builds(m.SyncRequest, SID, st.sampled_from([0, 1]), st.lists(st.text(max_size=6)).map(tuple)),
    st.builds(m.EntryMessage, SID, st.binary(), st.binary()),
    st.builds(m.SyncDone, SID, st.booleans()),
    st.builds(m.Have, SID, st.lists(ITEM).map(tuple)),
    st.builds(m.EmptySet, SID, st.booleans()),
    st.builds(m.LowerBound, SID, ITEM),
    st.builds(m.ItemPayload, SID, ITEM),
    st.builds(m.ItemPayload, SID, ITEM, st.booleans()),
    st.builds(m.ItemPayload, SID, ITEM, st.booleans(), ITEM),
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
    for event in a.events():
        serve(a, sb, event)
    first = [decode(x) for x in sent(a)]
    assert [type(x).__name__ for x in first] == ["SyncRequest", "EmptySet"]
    for data in map(encode, first):
        b.receive(data, T)
    pump(a, b, {id(a): sb, id(b): sa})
    assert sb.data == sa.data


# ----------------------------------------------------------------- the store is asked, never called


@pytest.mark.parametrize("mode", [0, 1], ids=["log-height", "set-reconciliation"])
def test_nothing_is_sent_for_a_session_until_the_runtime_answers_and_late_answers_work(mode):
    """The runtime may read SQLite off the event loop: the connection waits
    for its answers, whatever arrives meanwhile, then carries on."""
    sa, sb = Logs(), Logs()
    for s in range(1, 4):
        sa.add("general", "alice", s)
    sb.add("general", "bob", 1)
    a, b = pair(sa, sb, mode=mode)
    sid = a.sync()
    assert list(a.events()) == [HeightsWanted(sid, ("general",))]
    for data in sent(a):  # only the SyncRequest
        b.receive(data, T)
    (wanted_b,) = b.events()
    assert isinstance(wanted_b, HeightsWanted) and sent(b) == []
    assert b.get_timer() is None  # waiting on its own runtime: no idle timeout
    serve(a, sa, HeightsWanted(sid, ("general",)))  # a answers first; b much later
    for data in sent(a):
        b.receive(data, T)
    assert sent(b) == [] and list(b.events()) == []  # b holds what came before its heights
    serve(b, sb, wanted_b)
    ea, eb = pump(a, b, {id(a): sa, id(b): sb})
    assert sa.data == sb.data
    assert [type(e).__name__ for e in ea].count("EntriesWanted") == 1


def test_entries_can_be_provided_in_chunks():
    sa, sb = Logs(), Logs()
    for s in range(1, 6):
        sa.add("general", "alice", s)
    a, b = pair(sa, sb, mode=0)
    sid = a.sync()
    eb = []
    for _ in range(6):
        early = []
        for event in a.events():
            if isinstance(event, EntriesWanted):
                assert event.wants == (("general", "alice", 0),)
                entries = sa.entries_after("general", "alice", 0)
                a.provide_entries(sid, entries[:2], done=False)
                early = sent(a)
                assert [decode(x).TYPE for x in early] == [2, 2]  # entries, no SyncDone yet
                a.provide_entries(sid, entries[2:])
            else:
                serve(a, sa, event)
        for data in early + sent(a):
            b.receive(data, T)
        for event in b.events():
            eb.append(event)
            serve(b, sb, event)
            if isinstance(event, EntryReceived):
                sb.store(event.entry)
        for data in sent(b):
            a.receive(data, T)
    assert sb.data == sa.data
    assert [(e.sent, e.received) for e in eb if isinstance(e, SessionFinished)] == [(0, 5)]


def test_answers_nobody_asked_for_are_the_callers_mistake():
    a, b = pair(Logs(), Logs())
    with pytest.raises(LocalProtocolError):
        a.provide_heights(0, {})
    sid = a.sync()
    list(a.events())
    a.provide_heights(sid, {})
    with pytest.raises(LocalProtocolError):
        a.provide_heights(sid, {})  # answered already
    with pytest.raises(LocalProtocolError):
        a.provide_entries(sid, [])
    a.close("going away")
    a.provide_heights(sid + 1, {})  # after the end an answer is simply moot


# ----------------------------------------------------------------- idle timeout


def test_a_conversation_silent_both_ways_closes_after_the_idle_timeout():
    a, b = pair(Logs(), Logs())
    a.receive(encode(m.Announce(99, ("general",))), T + 5_000)
    assert list(a.events()) == [RemoteAnnounced(("general",))]
    assert a.get_timer() == T + 5_000 + 60_000
    a.handle_timer(T + 64_999)
    assert a.closed is None and list(a.events()) == []
    a.handle_timer(T + 65_000)
    assert list(a.events()) == [Closed("idle for 60 s")]
    assert a.get_timer() is None


def test_sending_counts_as_activity_and_live_mode_has_no_idle_timeout():
    b = Connection(("general",), initiator=False, now=T, idle_timeout_ms=10_000)
    b.datagrams_to_send(T + 7_000)  # the Announce leaves at T + 7 s
    assert b.get_timer() == T + 17_000
    live = Connection(("general",), initiator=False, now=T, live=True)
    assert live.get_timer() is None
