"""Properties over arbitrary input: bad bytes never raise, and whatever the
network does to payloads (loss, duplication, reordering), a conversation is
delivered exactly once and in order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sync.mvds import Config, DmDelivered, Mode, MvdsNode, Rejected
from sync.mvds.wire import Message, Payload

CONFIG = Config(epoch_ms=100, backoff_base_epochs=2, backoff_cap_epochs=16, backoff_floor_epochs=4)
T0 = 1_700_000_000_000
GROUP = b"alice+bob"


def primed() -> tuple[MvdsNode, list[bytes]]:
    """A node with some of everything in its state, and valid payloads to mutate."""
    bob = MvdsNode(T0, CONFIG)
    bob.send("alice", GROUP, b"pending", T0, Mode.INTERACTIVE)
    valid = [
        Payload(messages=[Message(group_id=GROUP, timestamp=T0 + i, body=b"hi %d" % i) for i in range(3)],
                offers=[b"\x07" * 32], acks=[b"\x08" * 32]).SerializeToString(),
        Payload(requests=[b"\x09" * 32]).SerializeToString(),
    ]
    return bob, valid


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=400))
def test_random_bytes_never_raise(data):
    bob, _ = primed()
    bob.receive(data, T0, "alice")
    for event in bob.events():
        assert isinstance(event, (Rejected, DmDelivered))
    bob.handle_timer(T0 + 1_000)
    bob.datagrams_to_send(T0 + 1_000)


@settings(max_examples=300, deadline=None)
@given(which=st.integers(0, 1), edits=st.lists(st.tuples(st.integers(0, 500), st.integers(0, 255),
                                                         st.sampled_from(["flip", "cut", "insert"])),
                                               min_size=1, max_size=5))
def test_mutated_payloads_never_raise_and_never_deliver_twice(which, edits):
    bob, valid = primed()
    data = bytearray(valid[which])
    for pos, byte, action in edits:
        pos %= max(1, len(data))
        if action == "flip" and data:
            data[pos] ^= byte or 1
        elif action == "cut":
            del data[pos:pos + 1 + byte % 8]
        else:
            data[pos:pos] = bytes([byte])
    for data_ in (bytes(data), valid[0], bytes(data), valid[0]):
        bob.receive(data_, T0, "alice")
    delivered = [(e.group_id, e.timestamp) for e in bob.events() if isinstance(e, DmDelivered)]
    assert len(delivered) == len(set(delivered))
    for group in {g for g, _ in delivered}:
        stamps = [t for g, t in delivered if g == group]
        assert stamps == sorted(stamps)


@settings(max_examples=200, deadline=None)
@given(
    modes=st.lists(st.sampled_from([Mode.BATCH, Mode.INTERACTIVE]), min_size=1, max_size=8),
    fate=st.lists(st.tuples(st.integers(0, 1_000), st.sampled_from(["lose", "deliver", "twice", "later"])),
                  max_size=200),
)
def test_any_network_delivers_once_in_order(modes, fate):
    alice, bob = MvdsNode(T0, CONFIG), MvdsNode(T0, CONFIG)
    nodes = {"alice": alice, "bob": bob}
    bodies = [b"message %d" % i for i in range(len(modes))]
    now = T0
    for body, mode in zip(bodies, modes, strict=True):
        alice.send("bob", GROUP, body, now, mode)
        now += 37
    in_flight: list[tuple[str, bytes]] = []
    delivered: list[bytes] = []
    fates = iter(fate)
    for _ in range(600):  # the network misbehaves as told, then behaves
        now += 50
        for node in nodes.values():
            if node.get_timer() is not None and node.get_timer() <= now:
                node.handle_timer(now)
            in_flight += [(out.to, out.data) for out in node.datagrams_to_send(now)]
        while in_flight:
            pick, what = next(fates, (0, "deliver"))
            to, data = in_flight.pop(pick % len(in_flight))
            if what == "later":
                in_flight.append((to, data))
                break
            if what != "lose":
                for _ in range(2 if what == "twice" else 1):
                    nodes[to].receive(data, now, "alice" if to == "bob" else "bob")
        delivered += [e.body for e in bob.events() if isinstance(e, DmDelivered)]
        list(alice.events())
        if alice.waiting("bob") == 0 and not in_flight:
            break
    assert delivered == bodies
    assert alice.waiting("bob") == 0


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(st.one_of(
    st.tuples(st.just("send"), st.sampled_from(["bob", "carol"]), st.integers(1, 3000),
              st.sampled_from([None, Mode.BATCH, Mode.INTERACTIVE])),
    st.tuples(st.just("hear"), st.sampled_from(["bob", "carol"]), st.integers(0, 3)),
    st.tuples(st.just("seen"), st.sampled_from(["bob", "carol"]), st.just(0)),
    st.tuples(st.just("tick"), st.integers(1, 5_000), st.just(0)),
), max_size=80))
def test_at_most_one_payload_per_peer_per_epoch(ops):
    alice = MvdsNode(T0, CONFIG)
    now, sent = T0, []
    for op, a, b, *rest in ops:
        if op == "send":
            alice.send(a, GROUP, b"x" * b, now, rest[0])
        elif op == "hear":  # the peer requests, acks or offers something
            ids = [mid for _, mid, _, _ in alice.records(a)][:b] or [b"\x05" * 32]
            alice.receive(Payload(requests=ids[:1], acks=ids[1:2], offers=ids[2:]).SerializeToString(), now, a)
        elif op == "seen":
            alice.peer_seen(a, now)
        else:
            now += a
        for _ in range(3):  # the timer fired early, on time and twice
            if alice.get_timer() is not None and alice.get_timer() <= now:
                alice.handle_timer(now)
        sent += [(out.to, now // CONFIG.epoch_ms) for out in alice.datagrams_to_send(now)]
        list(alice.events())
    assert len(sent) == len(set(sent))
