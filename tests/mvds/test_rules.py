"""Each MVDS rule on its own, two nodes wired by hand."""

from __future__ import annotations

import hashlib

import cbor2
import pytest

from sync.mvds import (
    MESSAGE,
    OFFER,
    REQUEST,
    Config,
    DmAcknowledged,
    DmDelivered,
    LocalProtocolError,
    Mode,
    MvdsNode,
    Rejected,
    decode,
    message_id,
)
from sync.mvds.wire import Message, Payload

CONFIG = Config()
EPOCH = CONFIG.epoch_ms
T0 = 1_700_000_000_100 // EPOCH * EPOCH  # the start of an epoch
GROUP = b"g" * 32


def tick(node: MvdsNode, now: int) -> list[Payload]:
    """Run the node's timer at ``now`` and decode what it sends."""
    node.handle_timer(now)
    return [decode(out.data, CONFIG) for out in node.datagrams_to_send(now)]


def relay(src: MvdsNode, src_name: str, dst: MvdsNode, now: int) -> list[Payload]:
    """Everything ``src`` sends at ``now``, delivered to ``dst``."""
    src.handle_timer(now)
    sent = src.datagrams_to_send(now)
    for out in sent:
        dst.receive(out.data, now, src_name)
    return [decode(out.data, CONFIG) for out in sent]


# ------------------------------------------------------------- message id


def test_message_id_is_the_reference_concatenation_computed_by_hand():
    group, body = b"\x01\x02\x03", b"hi"
    stamp = 0x0102030405060708
    by_hand = b"MESSAGE_ID" + b"\x01\x02\x03" + b"\x08\x07\x06\x05\x04\x03\x02\x01" + b"hi"
    assert message_id(group, stamp, body) == hashlib.sha256(by_hand).digest()
    assert message_id(group, stamp, body).hex() == (
        "40d34c33a8c47664d7b93896996f3f8193b11226f366ba23cee057896a21a258")
    # Go's uint64(int64) cast: -1 is eight 0xff bytes
    assert message_id(b"", -1, b"") == hashlib.sha256(b"MESSAGE_ID" + b"\xff" * 8).digest()


def test_every_field_changes_the_id():
    base = message_id(b"g", 5, b"x")
    assert len({base, message_id(b"h", 5, b"x"), message_id(b"g", 6, b"x"), message_id(b"g", 5, b"y")}) == 4


def test_send_returns_the_id_of_what_travels():
    alice = MvdsNode(T0)
    mid = alice.send("bob", GROUP, b"hello", T0, Mode.BATCH)
    (payload,) = tick(alice, T0 + EPOCH)
    (msg,) = payload.messages
    assert (msg.group_id, msg.timestamp, msg.body) == (GROUP, T0, b"hello")
    assert message_id(msg.group_id, msg.timestamp, msg.body) == mid


def test_timestamps_strictly_increase_within_a_conversation():
    alice = MvdsNode(T0)
    alice.send("bob", GROUP, b"same", T0, Mode.BATCH)
    alice.send("bob", GROUP, b"same", T0, Mode.BATCH)  # same body, same ms: still two messages
    (payload,) = tick(alice, T0 + EPOCH)
    assert [m.timestamp for m in payload.messages] == [T0, T0 + 1]


# ------------------------------------------------------------------ flows


def test_batch_flow_message_ack_and_the_record_is_removed():
    alice, bob = MvdsNode(T0), MvdsNode(T0)
    mid = alice.send("bob", GROUP, b"hello", T0, Mode.BATCH)
    assert alice.records("bob") == [(MESSAGE, mid, 0, T0 // EPOCH + 1)]
    assert alice.get_timer() == T0 + EPOCH  # a new record is due at the next epoch
    (sent,) = relay(alice, "alice", bob, T0 + EPOCH)
    assert len(sent.messages) == 1 and not sent.offers
    assert [type(e) for e in bob.events()] == [DmDelivered]
    (ack,) = relay(bob, "bob", alice, T0 + 2 * EPOCH)
    assert list(ack.acks) == [mid] and not ack.messages
    assert list(alice.events()) == [DmAcknowledged("bob", GROUP, mid)]
    assert alice.records("bob") == [] and alice.waiting("bob") == 0 and alice.get_timer() is None


def test_interactive_flow_offer_request_message_ack():
    alice, bob = MvdsNode(T0), MvdsNode(T0)
    mid = alice.send("bob", GROUP, b"a long read", T0, Mode.INTERACTIVE)
    assert [r[0] for r in alice.records("bob")] == [OFFER]
    (offer,) = relay(alice, "alice", bob, T0 + EPOCH)
    assert list(offer.offers) == [mid] and not offer.messages
    assert [r[:2] for r in bob.records("alice")] == [(REQUEST, mid)]
    (request,) = relay(bob, "bob", alice, T0 + 2 * EPOCH)
    assert list(request.requests) == [mid]
    assert [r[:3] for r in alice.records("bob")] == [(MESSAGE, mid, 0)]  # the offer became a message
    (message,) = relay(alice, "alice", bob, T0 + 3 * EPOCH)
    assert [m.body for m in message.messages] == [b"a long read"]
    assert bob.records("alice") == []  # the request is removed
    assert [type(e) for e in bob.events()] == [DmDelivered]
    relay(bob, "bob", alice, T0 + 4 * EPOCH)
    assert alice.records("bob") == [] and [type(e) for e in alice.events()] == [DmAcknowledged]


def test_mode_is_chosen_per_message_by_size_and_presence():
    alice = MvdsNode(T0)
    alice.peer_seen("bob", T0)
    small = alice.send("bob", GROUP, b"x" * (CONFIG.interactive_from_bytes - 1), T0)
    large = alice.send("bob", GROUP, b"x" * CONFIG.interactive_from_bytes, T0)
    away = T0 + CONFIG.comeback_after_ms
    small_to_absent = alice.send("bob", GROUP, b"short", away)
    forced = alice.send("bob", GROUP, b"short", away, Mode.BATCH)
    assert {mid: kind for kind, mid, *_ in alice.records("bob")} == {
        small: MESSAGE, large: OFFER, small_to_absent: OFFER, forced: MESSAGE}


def test_an_earlier_offer_travels_as_a_message_with_a_later_message():
    """Order: a payload carrying a message carries every earlier unacknowledged
    one of its conversation, even one only offered so far."""
    alice, bob = MvdsNode(T0), MvdsNode(T0)
    first = alice.send("bob", GROUP, b"big", T0, Mode.INTERACTIVE)
    alice.send("bob", GROUP, b"small", T0, Mode.BATCH)
    (payload,) = relay(alice, "alice", bob, T0 + EPOCH)
    assert [m.body for m in payload.messages] == [b"big", b"small"] and not payload.offers
    assert (OFFER, first) not in {r[:2] for r in alice.records("bob")}
    assert [e.body for e in bob.events()] == [b"big", b"small"]


def test_a_reoffered_message_already_delivered_is_acked_not_requested():
    alice, bob = MvdsNode(T0), MvdsNode(T0)
    mid = alice.send("bob", GROUP, b"read me", T0, Mode.INTERACTIVE)
    relay(alice, "alice", bob, T0 + EPOCH)
    relay(bob, "bob", alice, T0 + 2 * EPOCH)
    relay(alice, "alice", bob, T0 + 3 * EPOCH)  # the message: delivered
    bob.handle_timer(T0 + 4 * EPOCH)
    bob.datagrams_to_send(T0 + 4 * EPOCH)  # bob's ack is lost
    offer = Payload(offers=[mid]).SerializeToString()
    bob.receive(offer, T0 + 5 * EPOCH, "alice")
    (answer,) = tick(bob, T0 + 6 * EPOCH)
    assert list(answer.acks) == [mid] and not answer.requests and bob.records("alice") == []


# ------------------------------------------------------------------- acks


def test_acks_are_never_records_and_never_retransmitted():
    alice, bob = MvdsNode(T0), MvdsNode(T0)
    alice.send("bob", GROUP, b"hello", T0, Mode.BATCH)
    (sent,) = relay(alice, "alice", bob, T0 + EPOCH)
    assert bob.records("alice") == []  # nothing to retransmit: the ack is owed once
    (ack,) = tick(bob, T0 + 2 * EPOCH)
    assert len(ack.acks) == 1
    assert bob.get_timer() is None and tick(bob, T0 + 60_000) == []
    # the same message again (our ack was lost): acked again, delivered once
    bob.receive(sent.SerializeToString(), T0 + 61_000, "alice")
    (again,) = tick(bob, T0 + 62_000)
    assert list(again.acks) == list(ack.acks)
    assert [type(e) for e in bob.events()] == [DmDelivered]


# ----------------------------------------------------------------- epochs


def test_backoff_doubles_to_the_cap_then_drops_to_the_floor():
    config = Config(backoff_base_epochs=2, backoff_cap_epochs=32, backoff_floor_epochs=8)
    assert [config.backoff(n) for n in range(1, 12)] == [2, 4, 8, 16, 32, 8, 16, 32, 8, 16, 32]


def test_at_most_one_payload_per_peer_per_epoch_and_retransmission_follows_the_backoff():
    config = Config(backoff_base_epochs=2, backoff_cap_epochs=16, backoff_floor_epochs=4)
    alice = MvdsNode(T0, config)
    alice.send("bob", GROUP, b"into the void", T0)
    alice.send("carol", GROUP, b"also lost", T0)
    sends: dict[str, list[int]] = {"bob": [], "carol": []}
    now = T0
    while now < T0 + 200 * EPOCH:
        now += 37  # the timer fires several times per epoch, and late
        if alice.get_timer() is not None and alice.get_timer() <= now:
            alice.handle_timer(now)
        for out in alice.datagrams_to_send(now):
            sends[out.to].append(now // EPOCH)
        if now % 5 == 0:  # new messages within an epoch wait for the next one
            alice.send("bob", b"other", b"more", now)
    for epochs in sends.values():
        assert len(epochs) == len(set(epochs)), "two payloads to one peer in one epoch"
    gaps = [b - a for a, b in zip(sends["carol"], sends["carol"][1:], strict=False)]
    assert gaps[:8] == [2, 4, 8, 16, 4, 8, 16, 4]


def test_a_peer_coming_back_resets_its_backoff_and_gets_everything_at_once():
    alice = MvdsNode(T0)
    mid = alice.send("bob", GROUP, b"waiting", T0, Mode.BATCH)
    now = T0
    for _ in range(8):  # bob is away: retransmissions back off
        now = alice.get_timer()
        tick(alice, now)
    (_, _, count, due) = alice.records("bob")[0]
    assert count == 8 and due - now // EPOCH >= CONFIG.backoff_floor_epochs
    back = now + 3 * EPOCH + 10
    alice.peer_seen("bob", back)
    assert alice.get_timer() <= back  # at once, not at the next epoch
    (payload,) = tick(alice, back)
    assert [m.body for m in payload.messages] == [b"waiting"]
    assert alice.records("bob") == [(MESSAGE, mid, 1, back // EPOCH + CONFIG.backoff_base_epochs)]


def test_hearing_from_a_long_silent_peer_resets_its_backoff():
    alice = MvdsNode(T0)
    alice.send("bob", GROUP, b"waiting", T0)
    now = T0
    for _ in range(7):  # backed off beyond the silence that counts as being away
        now = alice.get_timer()
        tick(alice, now)
    before = alice.records("bob")[0][3]
    heard = now + CONFIG.comeback_after_ms + 5
    alice.receive(Payload().SerializeToString(), heard, "bob")  # bob speaks after long silence
    assert alice.records("bob")[0][2:] == (0, heard // EPOCH) and heard // EPOCH < before
    # ... but not while he keeps talking
    alice.handle_timer(heard)
    alice.datagrams_to_send(heard)
    alice.receive(Payload().SerializeToString(), heard + 5, "bob")
    assert alice.records("bob")[0][2] == 1


def test_forgetting_a_peer_stops_retransmission_and_hands_back_what_waited():
    alice = MvdsNode(T0)
    first = alice.send("bob", GROUP, b"one", T0, Mode.BATCH)
    second = alice.send("bob", GROUP, b"two", T0, Mode.INTERACTIVE)
    other = alice.send("bob", b"h" * 32, b"three", T0, Mode.BATCH)
    kept = alice.send("carol", GROUP, b"stays", T0, Mode.BATCH)
    tick(alice, T0 + EPOCH)
    waiting = alice.forget("bob")
    assert [(mid, m.body) for mid, m in waiting] == [(first, b"one"), (second, b"two"), (other, b"three")]
    assert alice.records("bob") == [] and alice.waiting("bob") == 0
    # nothing more ever goes to bob; carol's retransmission is untouched
    later = [out for t in range(2, 200) for out in (alice.handle_timer(T0 + t * EPOCH) or
                                                     alice.datagrams_to_send(T0 + t * EPOCH))]
    assert later and {out.to for out in later} == {"carol"}
    assert [kind for kind, *_ in alice.records("carol")] == [MESSAGE] and alice.waiting("carol") == 1
    assert alice.forget("bob") == []
    restored = MvdsNode.restore(cbor2.loads(cbor2.dumps(alice.export_state())))
    assert restored.records("bob") == [] and restored.waiting("carol") == 1
    assert kept in {mid for _, mid, *_ in restored.records("carol")}


def test_restore_mid_retransmission_resumes_the_same_schedule():
    alice = MvdsNode(T0)
    alice.send("bob", GROUP, b"one", T0)
    alice.send("bob", GROUP, b"two" * 500, T0)
    now = T0
    for _ in range(4):
        now = alice.get_timer()
        tick(alice, now)
    revived = MvdsNode.restore(cbor2.loads(cbor2.dumps(alice.export_state())))
    assert revived.records("bob") == alice.records("bob")
    assert revived.get_timer() == alice.get_timer()
    for _ in range(6):
        now = alice.get_timer()
        assert revived.get_timer() == now
        assert [out.data for out in (alice.handle_timer(now) or alice.datagrams_to_send(now))] == [
            out.data for out in (revived.handle_timer(now) or revived.datagrams_to_send(now))]
    # restarted long after: what fell due meanwhile goes out at once
    late = MvdsNode.restore(cbor2.loads(cbor2.dumps(alice.export_state())))
    later = now + 3_600_000
    assert late.get_timer() < later and len(tick(late, later)) == 1


def test_state_is_plain_data_whatever_the_peer_is_called():
    node = MvdsNode(T0)
    address = ("192.0.2.7", 5353)
    node.send(address, GROUP, b"to an address", T0)
    node.send(b"\x01" * 32, GROUP, b"to a key", T0)
    state = node.export_state()
    assert state["sessions"][0]["peer"] == ["192.0.2.7", 5353]
    revived = MvdsNode.restore(cbor2.loads(cbor2.dumps(state)))
    assert revived.export_state() == state
    assert revived.waiting(address) == 1 and revived.waiting(b"\x01" * 32) == 1


# ---------------------------------------------------------- delivery order


def test_delivered_in_order_and_once_whatever_arrives_first():
    alice, bob = MvdsNode(T0), MvdsNode(T0)
    alice.peer_seen("bob", T0)  # bob is around: each message goes out at the next epoch
    payloads = []
    for i in range(4):
        alice.send("bob", GROUP, f"m{i}".encode(), T0 + i * EPOCH)
        alice.handle_timer(T0 + (i + 1) * EPOCH)
        payloads += [out.data for out in alice.datagrams_to_send(T0)]
    # nothing was acked, so the last payload carries the whole conversation
    assert [m.body for m in decode(payloads[-1], CONFIG).messages] == [b"m0", b"m1", b"m2", b"m3"]
    for data in (payloads[2], payloads[0], payloads[3], payloads[1], payloads[3]):
        bob.receive(data, T0 + 10 * EPOCH, "alice")
    assert [e.body for e in bob.events()] == [b"m0", b"m1", b"m2"] + [b"m3"]


def test_to_a_peer_away_a_conversation_travels_as_one_train():
    """Each new message would otherwise carry every earlier one on its own
    schedule: the bytes sent to an absent peer would grow with the square
    of the messages waiting."""
    alice = MvdsNode(T0)
    now, sent = T0, []
    for i in range(6):  # bob never answers
        alice.send("bob", GROUP, b"m%d" % i, now, Mode.BATCH)
        now += 2_000
        while alice.get_timer() is not None and alice.get_timer() <= now:
            at = alice.get_timer()
            sent += [(at // EPOCH, len(p.messages)) for p in tick(alice, at)]
    assert len({epoch for _, _, _, epoch in alice.records("bob")}) == 1  # one schedule
    # the train keeps the first message's backoff; each payload carries all that waits
    epochs = [epoch for epoch, _ in sent]
    assert [b - a for a, b in zip(epochs, epochs[1:], strict=False)] == [CONFIG.backoff(n) for n in range(1, 5)]
    assert [n for _, n in sent] == [1, 1, 2, 3, 5]


def test_conversations_and_peers_are_ordered_apart():
    bob = MvdsNode(T0)
    for source, group, stamp in (("alice", b"a", T0 + 5), ("carol", b"a", T0 + 1), ("alice", b"b", T0 + 2)):
        msg = Message(group_id=group, timestamp=stamp, body=b"x")
        bob.receive(Payload(messages=[msg]).SerializeToString(), T0, source)
    assert [(e.peer, e.group_id) for e in bob.events()] == [("alice", b"a"), ("carol", b"a"), ("alice", b"b")]


def test_large_batches_split_over_epochs_in_order_within_the_payload_limit():
    config = Config(max_body_bytes=20_000, max_payload_bytes=40_000)
    alice, bob = MvdsNode(T0, config), MvdsNode(T0, config)
    for i in range(7):
        alice.send("bob", GROUP, bytes([i]) * 15_000, T0, Mode.BATCH)
    sizes, now = [], T0
    while len(sizes) < 20 and alice.get_timer() is not None:
        now += EPOCH
        alice.handle_timer(now)
        for out in alice.datagrams_to_send(now):
            sizes.append(len(out.data))
            bob.receive(out.data, now, "alice")
        relay(bob, "bob", alice, now)  # a later prefix goes once the earlier one is acked
    assert all(size <= config.max_payload_bytes for size in sizes) and len(sizes) >= 4
    assert [e.body[0] for e in bob.events() if isinstance(e, DmDelivered)] == list(range(7))


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize("payload, kind", [
    (b"\xff\xff", "malformed"),
    (Payload(acks=[b"short"]).SerializeToString(), "bad_id"),
    (Payload(messages=[Message(group_id=b"", timestamp=1, body=b"x")]).SerializeToString(), "bad_group"),
    (Payload(messages=[Message(group_id=b"g", timestamp=-5, body=b"x")]).SerializeToString(), "clock"),
    (Payload(messages=[Message(group_id=b"g", timestamp=T0 + 10**10, body=b"x")]).SerializeToString(), "clock"),
    (Payload(messages=[Message(group_id=b"g", timestamp=1, body=b"")]).SerializeToString(), "empty_body"),
    (b"\x0a\x20" + b"\x00" * 32 + b"\x00" * 70_000, "oversized"),
])
def test_bad_payloads_are_counted_and_reported_not_raised(payload, kind):
    bob = MvdsNode(T0)
    bob.receive(payload, T0, "alice")
    (event,) = bob.events()
    assert isinstance(event, Rejected) and event.kind == kind and bob.stats[kind] == 1
    assert tick(bob, T0 + EPOCH) == []  # nothing acked, nothing delivered


def test_a_payload_without_a_source_is_refused():
    bob = MvdsNode(T0)
    bob.receive(Payload().SerializeToString(), T0, None)
    assert [e.kind for e in bob.events()] == ["unknown_source"]


def test_offers_cannot_grow_state_without_bound():
    bob = MvdsNode(T0, Config(max_records_per_peer=10))
    bob.receive(Payload(offers=[bytes([i]) * 32 for i in range(50)]).SerializeToString(), T0, "alice")
    assert len(bob.records("alice")) == 10 and bob.stats["records_full"] == 40


@pytest.mark.parametrize("args", [
    (None, GROUP, b"x"), ("bob", GROUP, b""), ("bob", b"", b"x"), ("bob", GROUP, "text"),
    ("bob", GROUP, b"x" * (CONFIG.max_body_bytes + 1)), ("bob", b"g" * 65, b"x"),
])
def test_misuse_is_a_local_error(args):
    with pytest.raises(LocalProtocolError):
        MvdsNode(T0).send(*args, now=T0)
