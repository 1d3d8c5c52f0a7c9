"""SDS protocol steps: send, receive, deliver, resolve conflicts, review ACK
status, buffers and sweeps - each test names the rule it checks."""

import pytest

from sync.sds import (
    Acknowledged,
    Buffered,
    Channel,
    Delivered,
    EphemeralReceived,
    LocalProtocolError,
    Lost,
    Missing,
    PossiblyAcknowledged,
    Rejected,
)

from .helpers import T0, deliver, make, of, parse, take, take_content


# --- Lamport clock ----------------------------------------------------------

def test_clock_starts_at_now_in_milliseconds():
    assert make("a", now=T0).lamport == T0


def test_send_sets_clock_to_max_of_now_and_clock_plus_one():
    a = make("a")
    a.send(b"1", T0 + 500)  # now is ahead: take now
    assert parse(take(a)[0]).lamport_timestamp == T0 + 500
    a.send(b"2", T0 + 100)  # clock is ahead (e.g. our wall clock stepped back): clock + 1
    assert parse(take(a)[0]).lamport_timestamp == T0 + 501


def test_delivery_raises_the_clock():
    a, b = make("a"), make("b")
    a.send(b"from the future", T0 + 60_000)
    deliver(take(a), b, now=T0)
    assert b.lamport == T0 + 60_000
    b.send(b"reply", T0 + 1)
    assert parse(take(b)[0]).lamport_timestamp == T0 + 60_001


def test_sync_messages_increment_the_clock():
    a = make("a", sync_interval_ms=1000, sync_backoff_ms=0, settle_sync_ms=0)
    a.send(b"x", T0)
    take(a)
    a.handle_timer(T0 + 1000)
    sync = parse(take(a)[-1])
    assert not sync.content and sync.lamport_timestamp == T0 + 1000
    a.handle_timer(T0 + 2000)
    assert parse(take(a)[-1]).lamport_timestamp == T0 + 2000


def test_absurd_future_timestamps_are_refused():
    a, b = make("a"), make("b")
    a.send(b"x", 2**63)
    deliver(take(a), b, now=T0)
    assert b.lamport == T0 and len(b.log) == 0
    assert of(b.events(), Rejected)[0].kind == "clock"


# --- causal history and the log ---------------------------------------------

def test_causal_history_names_the_last_n_delivered_with_sender_and_hint():
    a = Channel("general", "alice", T0, retrieval_hint=lambda mid, sender, content, decoded: f"store:{sender}".encode())
    ids = [a.send(f"m{i}".encode(), T0 + i) for i in range(5)]
    take(a)
    a.send(b"next", T0 + 10)
    history = parse(take(a)[0]).causal_history
    assert [e.message_id for e in history] == ids[-3:]
    assert {e.sender_id for e in history} == {"alice"}
    assert {e.retrieval_hint for e in history} == {b"store:alice"}


def test_causal_history_size_is_configurable():
    a = make("a", causal_history_size=1)
    ids = [a.send(b"x", T0 + i) for i in range(3)]
    take(a)
    a.send(b"y", T0 + 9)
    assert [e.message_id for e in parse(take(a)[0]).causal_history] == [ids[-1]]


def test_a_late_arrival_is_still_referenced_once():
    """Delivered after newer messages, it lands mid-log - but the next message
    we send names it, so peers that missed it learn it exists."""
    a, b, c = make("a"), make("b"), make("c")
    late = a.send(b"early but slow", T0)
    slow = take(a)
    for i in range(4):
        b.send(f"b{i}".encode(), T0 + 100 + i)
    deliver(take(b), c, now=T0 + 200)
    deliver(slow, c, now=T0 + 300)
    assert list(c.log).index(late) == 0
    c.send(b"c speaks", T0 + 400)
    assert late in [e.message_id for e in parse(take(c)[0]).causal_history]


def test_log_is_ordered_by_lamport_then_message_id():
    a, b, c = make("a"), make("b"), make("c")
    ma = a.send(b"same millisecond", T0 + 5)
    mb = b.send(b"same millisecond too", T0 + 5)
    mlater = a.send(b"later", T0 + 6)
    wires = take(a) + take(b)
    deliver(list(reversed(wires)), c, now=T0 + 10)
    assert list(c.log) == sorted([ma, mb]) + [mlater]


def test_positions_report_where_a_message_landed():
    a, b = make("a"), make("b")
    first = a.send(b"1", T0)
    wire1 = take(a)
    a.send(b"2", T0 + 1)
    wire2 = take(a)
    b.receive(wire2[0], T0 + 2)  # depends on 1: buffered
    b.receive(wire1[0], T0 + 3)
    delivered = of(b.events(), Delivered)
    assert [(e.message_id, e.position) for e in delivered][0] == (first, 0)
    assert delivered[1].position == 1


def test_duplicates_are_dropped():
    a, b = make("a"), make("b")
    a.send(b"x", T0)
    wire = take(a)[0]
    for _ in range(3):
        b.receive(wire, T0)
    assert len(b.log) == 1 and b.stats["duplicate"] == 2
    assert len(of(b.events(), Delivered)) == 1


def test_other_channels_are_ignored():
    a, b = make("a", channel="random"), make("b", channel="general")
    a.send(b"x", T0)
    deliver(take(a), b, now=T0)
    assert len(b.log) == 0 and b.stats["other_channel"] == 1
    assert list(b.events()) == []


def test_echoes_of_our_own_messages_are_ignored_and_acknowledge_nothing():
    a = make("a")
    first = a.send(b"1", T0)
    a.send(b"2", T0 + 1)  # its causal history names "1"
    for wire in take(a):
        a.receive(wire, T0 + 2)
    assert a.stats["echo"] == 2
    assert first in a.unacknowledged()
    assert of(a.events(), Acknowledged) == []


def test_send_refuses_empty_or_oversized_content():
    a = make("a")
    with pytest.raises(LocalProtocolError):
        a.send(b"", T0)
    with pytest.raises(LocalProtocolError, match="exceeds one datagram"):
        a.send(b"x" * 70_000, T0)
    assert len(a.log) == 0 and a.lamport == T0


# --- outgoing buffer: three states -------------------------------------------

def test_own_messages_start_unacknowledged_and_are_resent_on_their_period():
    a = make("a", settle_sync_ms=0)
    mid = a.send(b"x", T0)
    wire = take(a)[0]
    assert a.unacknowledged() == {mid: 0}
    assert a.get_timer() == T0 + 3000
    a.handle_timer(T0 + 3000)
    assert take(a) == [wire]


def _bloom_only(wire: bytes) -> bytes:
    """The same message with its causal history removed: bloom evidence only."""
    msg = parse(wire)
    del msg.causal_history[:]
    return msg.SerializeToString()


def _fill(ch, n: int) -> None:
    for i in range(n):
        ch._bloom.add(f"{ch.sender_id}-noise-{i}")


def test_a_full_peer_filter_makes_it_possibly_acknowledged_and_slows_resends():
    a, b = make("a", settle_sync_ms=0), make("b")
    _fill(b, 400)  # a busy filter: a hit in it is only weak evidence
    mid = a.send(b"x", T0)
    deliver(take(a), b, now=T0 + 10)
    b.send(b"hi", T0 + 20)
    a.receive(_bloom_only(take(b)[0]), T0 + 30)
    events = list(a.events())
    assert of(events, PossiblyAcknowledged) == [PossiblyAcknowledged(mid, 1)]
    assert of(events, Acknowledged) == []
    assert a.unacknowledged() == {mid: 1}
    a.handle_timer(T0 + 3000)
    assert take(a) == []  # no longer resent on the unacknowledged period
    a.handle_timer(T0 + 30 + 15_000)
    assert len(take_content(a)) == 1


def test_a_sparse_filter_holding_the_message_is_conclusive():
    a, b = make("a"), make("b")
    mid = a.send(b"x", T0)
    deliver(take(a), b, now=T0 + 10)
    b.send(b"hi", T0 + 20)
    a.receive(_bloom_only(take(b)[0]), T0 + 30)
    assert of(a.events(), Acknowledged) == [Acknowledged(mid, "bloom", 1)]


def test_a_causal_history_reference_acknowledges():
    a, b = make("a"), make("b")
    mid = a.send(b"x", T0)
    deliver(take(a), b, now=T0 + 10)
    b.send(b"reply", T0 + 20)
    deliver(take(b), a, now=T0 + 30)
    assert of(a.events(), Acknowledged) == [Acknowledged(mid, "causal_history", 1)]
    assert a.unacknowledged() == {}


def test_enough_bloom_filters_acknowledge_without_any_reference():
    """Three peers whose full filters hold the message: all three being false
    positives is < 1e-6, and every active participant holds it."""
    a = make("a")
    peers = [make(f"p{i}") for i in range(3)]
    for p in peers:  # nearly full filters: the message makes 499 of 500 ids
        _fill(p, 498)
    mid = a.send(b"x", T0)
    deliver(take(a), *peers, now=T0 + 10)
    states = []
    for p in peers:
        p.send(b"hello", T0 + 20)
        a.receive(_bloom_only(take(p)[0]), T0 + 30)
        states.append(of(a.events(), Acknowledged) or a.unacknowledged().get(mid))
    assert states[:2] == [1, 2]
    assert states[2] == [Acknowledged(mid, "bloom", 3)]


def test_a_participant_lacking_the_message_blocks_bloom_acknowledgement():
    a, b, c = make("a"), make("b"), make("c")
    c.send(b"c is here", T0)
    deliver(take(c), a, b, now=T0 + 1)
    list(a.events())
    mid = a.send(b"x", T0 + 5)
    deliver(take(a), b, now=T0 + 10)  # c misses it
    b.send(b"b talks", T0 + 20)
    a.receive(_bloom_only(take(b)[0]), T0 + 30)  # b's (nearly empty) filter is conclusive...
    assert a.unacknowledged() == {mid: 1}  # ...but c, active, has not shown it
    a.handle_timer(T0 + 5 + 60_001 + 15_000)  # c silent past participant_timeout
    assert of(a.events(), Acknowledged) == [Acknowledged(mid, "bloom", 1)]


def _three_who_met():
    """a, b and c, each having heard the other two; then a says x (its id)."""
    a, b, c = make("a"), make("b"), make("c")
    b.send(b"b joins", T0)
    deliver(take(b), a, c, now=T0 + 1)
    c.send(b"c joins", T0 + 2)
    deliver(take(c), a, b, now=T0 + 3)
    return a, b, c, a.send(b"x", T0 + 5)


def test_acknowledged_message_is_rebroadcast_to_a_peer_seen_lacking_it():
    a, b, c, mid = _three_who_met()
    wire = take(a)[0]
    b.receive(wire, T0 + 10)  # c misses it
    b.send(b"b replies", T0 + 20)
    deliver(take(b), a, now=T0 + 30)
    assert of(a.events(), Acknowledged)[0].via == "causal_history"
    c.send(b"c talks, its filter lacking x", T0 + 4000)
    deliver(take(c), a, now=T0 + 4010)
    a.handle_timer(T0 + 30 + 15_000)
    assert take_content(a) == [wire]
    c.receive(wire, T0 + 45_100)
    c.send(b"now c has it", T0 + 46_000)
    deliver(take(c), a, now=T0 + 46_010)
    a.handle_timer(T0 + 5 + 60_000)
    assert take_content(a) == [] and mid not in a._outgoing.unacked and mid not in a._outgoing.watched


def test_a_filter_that_rolled_past_the_message_proves_nothing():
    """In a busy channel every filter soon rolls over past a message (a
    filter keeps only its newest ids): a peer's filter lacking it then is no
    sign that the peer lacks it, and the message is not rebroadcast to all."""
    a, b, c, mid = _three_who_met()
    deliver(take(a), b, c, now=T0 + 10)  # both have it
    b.send(b"b replies", T0 + 20)
    deliver(take(b), a, c, now=T0 + 30)
    assert of(a.events(), Acknowledged)[0].via == "causal_history"
    for i in range(a.config.bloom_capacity // 2):  # the channel moves on
        b.send(f"busy {i}".encode(), T0 + 40 + i)
        deliver(take(b), a, c, now=T0 + 40 + i)
    _fill(c, a.config.bloom_capacity)  # c's filter rolls over: its newest half no longer holds x
    assert mid not in c._bloom
    c.send(b"c talks", T0 + 4000)
    deliver(take(c), a, now=T0 + 4010)
    a.handle_timer(T0 + 30 + 15_000)
    assert take_content(a) == []
    assert a.stats["rebroadcast_uncovered"] == 0 and mid not in a._outgoing.watched


# --- incoming buffer ---------------------------------------------------------

def _chain(a, n, start=T0):
    """n messages from a, each depending on the previous; returns (ids, wires)."""
    ids, wires = [], []
    for i in range(n):
        ids.append(a.send(f"m{i}".encode(), start + i))
        wires += take(a)
    return ids, wires


def test_unmet_dependencies_buffer_and_report_missing_with_hint_and_sender():
    a, b = make("alice"), make("bob")
    ids, wires = _chain(a, 2)
    b.receive(wires[1], T0 + 10)
    events = list(b.events())
    assert of(events, Delivered) == [] and b.waiting == 1
    (buffered,) = of(events, Buffered)
    assert (buffered.message_id, buffered.content, buffered.waiting_for) == (ids[1], b"m1", (ids[0],))
    (missing,) = of(events, Missing)
    assert [(e.message_id, e.sender_id) for e in missing.entries] == [(ids[0], "alice")]
    assert missing.waiting == 1


def test_a_buffered_message_is_delivered_as_soon_as_its_dependencies_are():
    a, b = make("a"), make("b")
    ids, wires = _chain(a, 4)
    for wire in reversed(wires[1:]):
        b.receive(wire, T0 + 10)
    assert len(b.log) == 0 and b.waiting == 3
    b.receive(wires[0], T0 + 20)
    assert list(b.log) == ids and b.waiting == 0
    assert [e.message_id for e in of(b.events(), Delivered)] == ids


def test_a_missing_dependency_is_reported_once_and_stays_missing_until_it_comes():
    a, b = make("a"), make("b")
    ids, wires = _chain(a, 3)
    b.receive(wires[1], T0 + 10)
    (missing,) = of(b.events(), Missing)
    assert [e.message_id for e in missing.entries] == [ids[0]]
    b.receive(wires[2], T0 + 11)  # names ids[0] again (and ids[1], which waits here)
    b.handle_timer(T0 + 60_000)
    assert of(b.events(), Missing) == [] and b.is_missing(ids[0]) and not b.is_missing(ids[1])
    b.receive(wires[0], T0 + 60_001)
    assert not b.is_missing(ids[0]) and list(b.log) == ids


def test_dependencies_not_found_in_time_are_lost_and_waiters_delivered_with_the_gap():
    a, b = make("a"), make("b", lost_after_ms=10_000)
    ids, wires = _chain(a, 3)
    b.receive(wires[2], T0 + 10)  # needs 0 (missing) and 1 (missing)
    b.handle_timer(T0 + 10 + 10_000)
    events = list(b.events())
    lost = of(events, Lost)
    assert sorted(e.entry.message_id for e in lost) == sorted(ids[:2])
    (delivered,) = of(events, Delivered)
    assert delivered.message_id == ids[2] and sorted(delivered.gaps) == sorted(ids[:2])
    b.receive(wires[0], T0 + 20_000)  # it turns up after all: slotted in by Lamport order
    assert list(b.log) == [ids[0], ids[2]]


def test_incoming_buffer_is_bounded():
    a, b = make("a"), make("b", max_incoming=2)
    _, wires = _chain(a, 5)
    for wire in wires[1:]:
        b.receive(wire, T0 + 10)
    assert b.waiting == 2 and b.stats["incoming_full"] == 2


# --- sync and ephemeral messages ---------------------------------------------

def test_sync_message_is_never_logged_buffered_or_put_in_bloom_filters():
    a, b = make("a", sync_backoff_ms=0), make("b")
    a.handle_timer(a.get_timer())
    (sync,) = take(a)
    msg = parse(sync)
    assert not msg.HasField("content") and msg.HasField("bloom_filter")
    assert len(a.log) == 0 and a.unacknowledged() == {}
    b.receive(sync, T0 + 10_010)
    assert len(b.log) == 0 and len(b._bloom) == 0 and of(b.events(), Delivered) == []


def test_sync_is_skipped_when_someone_else_just_spoke():
    a, b = make("a", sync_interval_ms=10_000, sync_backoff_ms=3000), make("b")
    due = a._sync.due
    b.send(b"chatter", due + 1)
    deliver(take(b), a, now=due + 1)
    a.handle_timer(a.get_timer())
    assert all(parse(w).content for w in take(a)) and a.stats["sync_suppressed"] == 1


def test_a_silent_participant_still_syncs_as_a_keepalive():
    a = make("a", sync_interval_ms=10_000, sync_backoff_ms=0)
    chatty = make("b")
    sent_syncs = 0
    for t in range(T0 + 1, T0 + 60_000, 1000):
        chatty.send(b"busy channel", t)
        deliver(take(chatty), a, now=t)
        a.handle_timer(t) if a.get_timer() <= t else None
        sent_syncs += len(take(a))
    assert sent_syncs >= 2


def test_sync_messages_acknowledge_and_reveal_missing_messages():
    a, b, c = make("a"), make("b", sync_backoff_ms=0), make("c")
    mid = a.send(b"x", T0)
    deliver(take(a), b, now=T0 + 1)  # c misses it
    b.handle_timer(b._sync.at)
    sync = take(b)
    deliver(sync, a, c, now=T0 + 10_100)
    assert of(a.events(), Acknowledged)[0].message_id == mid
    (missing,) = of(c.events(), Missing)
    assert missing.entries[0].message_id == mid and missing.waiting == 0


def test_ephemeral_messages_skip_lamport_history_bloom_and_buffers():
    a, b = make("a"), make("b")
    a.send(b"real", T0)
    take(a)
    clock = a.lamport
    a.send_ephemeral(b"typing", T0 + 1)
    (wire,) = take(a)
    msg = parse(wire)
    assert not msg.HasField("lamport_timestamp") and not msg.causal_history and not msg.HasField("bloom_filter")
    assert a.lamport == clock and a.unacknowledged().keys() == {a.log[0]} and len(a.log) == 1
    b.receive(wire, T0 + 2)
    assert of(b.events(), EphemeralReceived) == [EphemeralReceived("a", b"typing", T0 + 2)]
    assert len(b.log) == 0 and b.waiting == 0 and b.lamport == T0


# --- bad input -----------------------------------------------------------------

def test_garbage_is_counted_reported_and_changes_nothing():
    a, b = make("a"), make("b")
    a.send(b"x", T0)
    deliver(take(a), b, now=T0)
    list(b.events())
    before = b.export_state()
    for junk in (b"", b"\x00", b"\xff" * 40, bytes(range(256)), b"\x0a\x03bob"):
        b.receive(junk, T0 + 1)
    rejected = of(b.events(), Rejected)
    assert len(rejected) == 5 and all("\n" not in r.reason for r in rejected)
    after = b.export_state()
    assert after["log"] == before["log"] and after["incoming"] == before["incoming"]
    assert b.stats["malformed"] == 5


def test_a_corrupt_bloom_filter_is_ignored_but_the_message_delivered():
    a, b = make("a"), make("b")
    b.send(b"pending", T0)
    a.send(b"hello", T0)
    msg = parse(take(a)[0])
    msg.bloom_filter = b"\x09garbage"
    b.receive(msg.SerializeToString(), T0 + 1)
    assert msg.message_id in list(b.log) and b.stats["bad_bloom"] == 1


def test_the_last_message_of_a_burst_is_named_by_a_sync_soon_after():
    """Nothing after the last message names it: a sync does, within
    ``settle_sync_ms`` plus a backoff of as long - not at the next periodic sync."""
    a, b, c = make("a"), make("b"), make("c")
    mid = a.send(b"the last word", T0)
    wire = take(a)[0]
    deliver([wire], c, now=T0 + 10)  # b lost it
    due = c.get_timer()
    assert T0 + 1_010 <= due <= T0 + 2_010
    c.handle_timer(due)
    (sync,) = take(c)
    assert not parse(sync).content and mid in [e.message_id for e in parse(sync).causal_history]
    b.receive(sync, due + 5)
    assert [e.message_id for m in of(b.events(), Missing) for e in m.entries] == [mid]


def test_no_settling_sync_while_the_channel_is_busy_or_once_someone_spoke():
    a, b = make("a"), make("b")
    c = make("c", sync_interval_ms=5_000, sync_backoff_ms=0, settle_sync_ms=0)
    now = T0
    for i in range(10):  # a message every 500 ms: the next one always comes first
        a.send(b"busy %d" % i, now)
        deliver(take(a), b, now=now)
        b.handle_timer(now)
        assert take(b) == []
        now += 500
    settle_at = b.get_timer()
    assert now - 500 + 1_000 <= settle_at <= now - 500 + 2_000
    c.handle_timer(T0 + 5_000)
    deliver(take(c), b, now=settle_at - 1)  # c's periodic sync: someone spoke since the last message
    b.handle_timer(settle_at)
    assert take(b) == [] and b.stats["sync_suppressed"] == 1
