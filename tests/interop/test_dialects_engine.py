"""Dialect switching inside the engine, sans-I/O (no node needed).

A participant speaking @waku/sds's dialect is played by hand-built messages
carrying a filter in its format; the real package is met in the other
tests of this directory.
"""

from __future__ import annotations

import hashlib

from proto.sds_pb2 import SdsMessage
from sync.sds import Acknowledged, Channel, Config, compute_message_id
from sync.sds.bloom import RollingBloom
from sync.sds.dialects import Dialect, ReceivedFilter, dialect_of, read_filter
from sync.sds.waku_bloom import WIRE_BYTES, WakuBloom

from ..sds.helpers import T0, deliver, make, of, parse, take

SECOND = 1_000


def waku_message(text: str, lamport: int, holds: list[str] = (), history: list[str] = ()) -> bytes:
    """What an @waku/sds participant sends: sha256(content) ids, its filter."""
    msg = SdsMessage(
        sender_id="waku-js", message_id=hashlib.sha256(text.encode()).hexdigest(), channel_id="general",
        lamport_timestamp=lamport, bloom_filter=WakuBloom(holds).to_bytes(), content=text.encode(),
    )
    for mid in history:
        msg.causal_history.add(message_id=mid)
    return msg.SerializeToString()


def filter_len(wire: bytes) -> int:
    return len(parse(wire).bloom_filter)


def test_our_peers_keep_the_compact_dialect_until_a_waku_participant_speaks():
    a, b = make("alice"), make("bob")
    b1, _, _ = (b.send(text, T0 + i) for i, text in enumerate((b"b1", b"b2", b"b3")))
    from_bob = take(b)
    assert all(dialect_of(parse(w).bloom_filter) is Dialect.COMPACT and filter_len(w) < 1_000 for w in from_bob)
    deliver(from_bob, a, now=T0 + 5)
    a.receive(waku_message("hello from js", T0 + 6), T0 + 10)
    a.send(b"again", T0 + 20)
    (wire,) = take(a)
    assert filter_len(wire) == WIRE_BYTES
    # our own peer reads the waku-format filter: b1 is in it, not in the history
    assert b1 not in [e.message_id for e in parse(wire).causal_history]
    b.receive(wire, T0 + 30)
    assert (b1, "bloom") in [(e.message_id, e.via) for e in of(b.events(), Acknowledged)]
    # a minute without the js participant: back to the compact filter
    a.handle_timer(T0 + 61 * SECOND)
    a.send(b"later", T0 + 62 * SECOND)
    assert [filter_len(w) < 1_000 for w in take(a) if parse(w).content == b"later"] == [True]


def test_a_message_sent_before_the_dialect_was_heard_is_resent_readable():
    a = make("alice")
    mid = a.send(b"early", T0)
    (early,) = take(a)
    a.receive(waku_message("js", T0 + 1), T0 + 100)
    a.handle_timer(T0 + 3 * SECOND)  # the unacknowledged resend
    resent = [w for w in take(a) if parse(w).message_id == mid]
    assert resent, "the unacknowledged message was not resent"
    again = parse(resent[0])
    assert filter_len(resent[0]) == WIRE_BYTES
    assert hashlib.sha256(b"js").hexdigest() in read_filter(again.bloom_filter)
    old = parse(early)
    assert (again.lamport_timestamp, again.content, list(again.causal_history)) == (
        old.lamport_timestamp, old.content, list(old.causal_history))


def test_acknowledgements_by_either_dialect_filter():
    a = make("alice")
    mid = a.send(b"ours", T0)
    take(a)
    # the js participant's filter holds our message; its history does not
    a.receive(waku_message("js", T0 + 1, holds=[mid]), T0 + 10)
    acks = of(a.events(), Acknowledged)
    assert [(e.message_id, e.via) for e in acks] == [(mid, "bloom")]


def test_the_dialect_survives_export_and_restore():
    """Nothing about dialects is saved: it is read back from the latest
    filter each participant sent, which the channel keeps anyway."""
    a = make("alice")
    a.receive(waku_message("js", T0 + 1), T0 + 10)
    js_sync = SdsMessage(sender_id="waku-js", message_id="sync-4fzyo82mvyr", channel_id="general",
                         lamport_timestamp=T0 + 11, bloom_filter=WakuBloom().to_bytes())
    a.receive(js_sync.SerializeToString(), T0 + 12)  # a sync: our ids do not change
    restored = Channel.restore(a.export_state())
    restored.send(b"after restart", T0 + 20)
    a.send(b"after restart", T0 + 20)
    (mine,), (theirs,) = take(restored), take(a)
    assert mine == theirs  # the same datagram, filter and all
    assert filter_len(mine) == WIRE_BYTES
    assert hashlib.sha256(b"js").hexdigest() in read_filter(parse(mine).bloom_filter)


def test_relayed_messages_lose_an_unreadable_filter_own_ones_get_ours():
    received = ReceivedFilter(Config())
    received.add("x")
    bob = make("bob")
    bob.send(b"bob's", T0)
    (wire,) = take(bob)
    assert received.readable(wire, T0, me="alice") == wire  # nobody to adapt to yet
    received.heard("waku-js", WakuBloom().to_bytes(), T0)
    relayed = parse(received.readable(wire, T0, me="alice"))
    own = parse(received.readable(wire, T0, me="bob"))
    assert not relayed.HasField("bloom_filter") and relayed.content == b"bob's"
    assert len(own.bloom_filter) == WIRE_BYTES and "x" in read_filter(own.bloom_filter)


def test_a_repair_rebroadcast_for_someone_else_drops_the_filter_it_cannot_speak_for():
    alice, bob = make("alice"), make("bob")
    b1 = bob.send(b"bob's", T0)
    deliver(take(bob), alice, now=T0 + 1)
    lamport = T0 + 2
    request = SdsMessage(sender_id="carol", channel_id="general", lamport_timestamp=lamport,
                         message_id=compute_message_id("carol", "general", lamport, b""))
    request.repair_request.add(message_id=b1, sender_id="bob")
    alice.receive(request.SerializeToString(), T0 + 2)
    later = T0 + 121 * SECOND  # past any T_resp
    alice.receive(waku_message("js, still here", later - 1), later - 1)
    alice.handle_timer(later)
    (rebroadcast,) = [parse(w) for w in take(alice) if parse(w).message_id == b1]
    assert rebroadcast.sender_id == "bob" and rebroadcast.content == b"bob's"
    assert not rebroadcast.HasField("bloom_filter")


def test_dialects_are_tracked_per_participant_within_a_bound():
    config = Config(max_participants=8)
    received = ReceivedFilter(config)
    compact = RollingBloom(500, 0.01).to_bytes()
    received.heard("ours-b", compact, T0)
    for i in range(100):  # a flood of made-up senders
        received.heard(f"js-{i}", WakuBloom().to_bytes(), T0 + i)
    assert received.speaks("js-99", T0 + 100) is Dialect.WAKU
    assert received.speaks("ours-b", T0 + 100) is Dialect.COMPACT
    assert received.speaks("js-0", T0 + 100) is Dialect.COMPACT  # forgotten: over the bound
    assert received.speaks("js-91", T0 + 100) is Dialect.COMPACT  # 8 remembered: js-92 to js-99
    assert received.speaks("js-92", T0 + 100) is Dialect.WAKU
    received.heard("js-99", compact, T0 + 101)  # changed dialect
    assert received.speaks("js-99", T0 + 101) is Dialect.COMPACT
    assert received.outgoing(T0 + 101) is Dialect.WAKU  # js-98 is still active
    assert received.outgoing(T0 + 98 + config.participant_timeout_ms) is Dialect.COMPACT
