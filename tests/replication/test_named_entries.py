"""A peer sends what it found we lack, and nothing else: entries of the logs
it named (its ``Have``, or the items of the reconciliation), above the height
we told it we hold, before its ``SyncDone``. An entry that lies about its
log or its height is refused with a reason (``EntryDropped``) and closes the
link; an entry the check refuses without closing is dropped alone."""

from __future__ import annotations

import pytest

from sync.core import LocalProtocolError
from sync.replication import (
    Closed, Connection, EntryArrived, EntryDropped, EntryReceived, EntryRefused, SessionFinished, encode,
)
from sync.replication import messages as m
from tests.replication.checking import checking
from tests.replication.test_replication import Logs, T, pair, pump, sent, serve, validate_toy_entry

MODES = pytest.mark.parametrize("mode", [m.LOG_HEIGHT, m.SET_RECONCILIATION], ids=["log-height", "set"])


class Liar(Logs):
    """Names its logs truly (its heights), but when asked for a log's entries
    sends ``instead``."""

    def __init__(self, instead: list[bytes]) -> None:
        super().__init__()
        self.instead = instead

    def entries_after(self, channel, author, seq):
        return self.instead


def lied_to(mode: int, instead: list[bytes]) -> tuple[Logs, list, list]:
    """The victim holds alice 1; the liar holds alice 1..3 and answers with ``instead``."""
    victim, liar = Logs(), Liar(instead)
    victim.add("general", "alice", 1)
    for s in (1, 2, 3):
        liar.add("general", "alice", s)
    a, b = pair(victim, liar, mode=mode)
    a.sync()
    ea, _ = pump(a, b, {id(a): victim, id(b): liar})
    return victim, ea, [e for e in ea if isinstance(e, EntryDropped)]


@MODES
def test_an_entry_of_a_log_the_peer_did_not_name_closes_the_link_and_is_not_stored(mode):
    victim, events, (dropped,) = lied_to(mode, [b"general|bob|1"])  # it named alice's log, not bob's
    assert dropped.kind == "unnamed" and "did not name" in dropped.reason
    (closed,) = [e for e in events if isinstance(e, Closed)]
    assert closed.reason == dropped.reason
    assert not [e for e in events if isinstance(e, EntryReceived)] and "bob" not in victim.data["general"]


@MODES
def test_an_entry_at_a_height_we_said_we_hold_closes_the_link(mode):
    victim, events, (dropped,) = lied_to(mode, [b"general|alice|1"])  # we hold 1, and said so
    assert dropped.kind == "height" and "we hold up to 1" in dropped.reason
    assert [e for e in events if isinstance(e, Closed)] and not [e for e in events if isinstance(e, EntryReceived)]


@MODES
def test_the_entries_it_named_above_our_height_are_taken(mode):
    victim, events, dropped = lied_to(mode, [b"general|alice|2", b"general|alice|3"])
    assert dropped == [] and sorted(victim.data["general"]["alice"]) == [1, 2, 3]
    assert not [e for e in events if isinstance(e, Closed)]


def test_an_entry_after_the_peers_sync_done_closes_the_link():
    a = checking(("general",), validate_toy_entry, initiator=True, now=T, mode=m.LOG_HEIGHT)
    a.receive(encode(m.Announce(T, ("general",))), T)
    sid = a.sync()
    a.provide_heights(sid, {"general": [("alice", 1)]})
    a.receive(encode(m.Have(sid, (("alice", m.log_id("general"), 3),))), T)
    list(a.events())  # a is yet to send what it holds: its SyncDone waits for that
    a.receive(encode(m.SyncDone(sid, False)), T)  # they are done sending
    a.receive(encode(m.EntryMessage(sid, b"general|alice|2")), T)  # named, above our height: but late
    (dropped,) = [e for e in a.events() if isinstance(e, EntryDropped)]
    assert dropped.kind == "after_done" and a.closed == dropped.reason


@MODES
def test_a_side_that_holds_nothing_is_sent_every_entry_without_a_list_of_them_first(mode):
    """The spec: the peer of an EmptySet sends every entry. Listing each log
    first cost a message a log - in a private channel's set, a message a
    datagram - and the side that holds nothing takes any log of the session."""
    empty, full = Logs(), Logs()
    for author in ("alice", "bob"):
        for s in (1, 2):
            full.add("general", author, s)
    for opener, other in ((empty, full), (full, empty)):
        a, b = pair(opener, other, mode=mode)
        a.sync()
        stores = {id(a): opener, id(b): other}
        carried: list = []
        for _ in range(20):
            moved = False
            for src, dst in ((a, b), (b, a)):
                for event in src.events():
                    moved = True
                    serve(src, stores[id(src)], event)
                    if isinstance(event, EntryReceived):
                        stores[id(src)].store(event.entry)
                for data in sent(src):
                    moved = True
                    carried.append(m.decode(data))
                    dst.receive(data, T)
            if not moved:
                break
        assert empty.data == full.data
        if mode == m.SET_RECONCILIATION:
            assert not [x for x in carried if isinstance(x, m.ItemPayload)]
        empty.data.clear()


@MODES
def test_live_pushes_are_not_held_to_what_was_named(mode):
    sa, sb = Logs(), Logs()
    sb.add("general", "alice", 1)
    a, b = pair(sa, sb, live=True, mode=mode)
    a.sync()
    pump(a, b, {id(a): sa, id(b): sb})
    sa.add("general", "carol", 1)  # a log nobody named: new since the sync
    a.push("general", sa.data["general"]["carol"][1])
    _, eb = pump(a, b, {id(a): sa, id(b): sb})
    assert sb.data["general"]["carol"] == {1: b"general|carol|1"}
    assert not [e for e in eb if isinstance(e, (Closed, EntryDropped))]


def test_an_entry_the_check_refuses_without_closing_is_dropped_alone():
    """A peer relaying what it cannot read (a blind store) may hold garbage:
    the check drops it, says why, and the rest of the session goes on."""
    def check(channels, entry):
        if entry.endswith(b"|2"):
            raise EntryRefused("garbage", "not an entry", fatal=False)
        return validate_toy_entry(channels, entry)

    sa, sb = Logs(), Logs()
    for s in (1, 2, 3):
        sa.add("general", "alice", s)
    a = checking(("general",), sa.validate, initiator=True, now=1, mode=m.LOG_HEIGHT)
    b = checking(("general",), check, initiator=False, now=1)
    pump(a, b)
    a.sync()
    _, eb = pump(a, b, {id(a): sa, id(b): sb})
    (dropped,) = [e for e in eb if isinstance(e, EntryDropped)]
    assert (dropped.kind, dropped.reason) == ("garbage", "not an entry")
    assert sorted(sb.data["general"]["alice"]) == [1, 3] and b.closed is None
    assert [(e.received, e.live) for e in eb if isinstance(e, SessionFinished)] == [(2, False)]


def test_the_runtime_says_what_an_entry_is_before_the_next_frame():
    """The connection asks (``EntryArrived``) and never calls back: the answer
    comes with ``entry_checked``, carrying the value the check made, which
    ``EntryReceived`` hands back; a frame before the answer is the caller's bug."""
    a = Connection(("general",), initiator=True, now=T, mode=m.LOG_HEIGHT)
    a.receive(encode(m.Announce(T, ("general",))), T)
    sid = a.sync()
    a.provide_heights(sid, {})
    a.receive(encode(m.Have(sid, (("alice", m.log_id("general"), 1),))), T)
    list(a.events())
    a.receive(encode(m.EntryMessage(sid, b"general|alice|1")), T)
    (arrived,) = [e for e in a.events() if isinstance(e, EntryArrived)]
    assert (arrived.channels, arrived.entry) == (("general",), b"general|alice|1")
    assert a.get_timer() is None  # waiting on us: no idle timeout meanwhile
    with pytest.raises(LocalProtocolError):
        a.receive(encode(m.SyncDone(sid, False)), T)
    parsed = object()
    a.entry_checked(sid, arrived.entry, validate_toy_entry(arrived.channels, arrived.entry), parsed)
    (received,) = [e for e in a.events() if isinstance(e, EntryReceived)]
    assert received.checked is parsed and received.channel == "general"
