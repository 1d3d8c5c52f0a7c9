"""Letters: what a mailbox holds for a peer that is away (``sync.mvds.letters``)."""

from __future__ import annotations

import cbor2
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.mvds import Config, DmAcknowledged, DmDelivered, Mode, MvdsNode, decode

from .test_rules import CONFIG, EPOCH, GROUP, T0, relay, tick

AWAY = CONFIG.comeback_after_ms


def delivered(node: MvdsNode) -> list[bytes]:
    return [e.body for e in node.events() if isinstance(e, DmDelivered)]


def test_a_letter_carries_the_messages_themselves_though_the_session_only_offers():
    alice = MvdsNode(T0)
    for body in (b"one", b"two"):
        alice.send("bob", GROUP, body, T0, Mode.INTERACTIVE)
    (live,) = tick(alice, T0 + EPOCH)
    assert len(live.offers) == 2 and not live.messages
    letter = decode(alice.letter("bob"), CONFIG)
    assert [m.body for m in letter.messages] == [b"one", b"two"] and not letter.offers and not letter.requests
    bob = MvdsNode(T0 + AWAY)
    bob.receive(alice.letter("bob"), T0 + AWAY, "alice", letter=True)
    assert delivered(bob) == [b"one", b"two"]


def test_nothing_acknowledged_nothing_owed_no_letter():
    alice, bob = MvdsNode(T0), MvdsNode(T0)
    assert alice.letter("bob") is None
    alice.send("bob", GROUP, b"hi", T0, Mode.BATCH)
    relay(alice, "alice", bob, T0 + EPOCH)
    relay(bob, "bob", alice, T0 + 2 * EPOCH)
    assert alice.waiting("bob") == 0 and alice.letter("bob") is None


def test_a_letter_is_due_when_a_message_waits_too_long_for_its_ack_or_the_peer_is_away():
    alice = MvdsNode(T0)
    alice.receive(b"", T0, "bob")  # bob is there
    alice.send("bob", GROUP, b"hi", T0, Mode.BATCH)
    assert not alice.letter_due("bob", T0 + CONFIG.letter_after_ms - 1)
    assert alice.letter_due("bob", T0 + CONFIG.letter_after_ms)
    carol = MvdsNode(T0)
    carol.receive(b"", T0, "dave")
    carol.send("dave", GROUP, b"hi", T0 + AWAY, Mode.BATCH)  # dave silent for 30 s: at once
    assert carol.letter_due("dave", T0 + AWAY)


def test_taking_a_letter_is_no_sign_of_life_and_only_its_messages_and_acks_count():
    bob = MvdsNode(T0)
    bob.send("alice", GROUP, b"to alice", T0, Mode.BATCH)
    tick(bob, T0 + EPOCH)  # sent once, into the void: alice is away
    alice = MvdsNode(T0)
    alice.send("bob", GROUP, b"to bob", T0, Mode.INTERACTIVE)
    payload = decode(alice.letter("bob"), CONFIG)
    (own,) = [mid for _, mid, _, _ in bob.records("alice")]
    payload.acks.append(own)
    payload.offers.append(b"\x07" * 32)  # not in a letter: ignored if one carries them
    payload.requests.append(own)
    records = bob.records("alice")
    later = T0 + 10 * EPOCH
    bob.receive(payload.SerializeToString(), later, "alice", letter=True)
    events = list(bob.events())
    assert [e.body for e in events if isinstance(e, DmDelivered)] == [b"to bob"]
    assert [e.message_id for e in events if isinstance(e, DmAcknowledged)] == [own]
    assert bob.records("alice") == [] and records  # the ack removed bob's record; no request was added
    assert bob.letter_due("alice", later)  # alice is still away as far as bob knows: acks go by letter


def test_what_a_letter_delivered_is_acked_in_our_letters_until_its_author_is_heard_live():
    alice, bob = MvdsNode(T0), MvdsNode(T0)
    mid = alice.send("bob", GROUP, b"hi", T0, Mode.BATCH)
    bob.receive(alice.letter("bob"), T0 + AWAY, "alice", letter=True)
    assert delivered(bob) == [b"hi"]
    for _ in range(2):  # every letter bob writes carries it, not only the first
        assert list(decode(bob.letter("alice"), CONFIG).acks) == [mid]
    bob = MvdsNode.restore(cbor2.loads(cbor2.dumps(bob.export_state())))  # a restart keeps what is owed
    assert list(decode(bob.letter("alice"), CONFIG).acks) == [mid]
    alice.receive(bob.letter("alice"), T0 + 2 * AWAY, "bob", letter=True)
    assert [e.message_id for e in alice.events() if isinstance(e, DmAcknowledged)] == [mid]
    bob.receive(b"", T0 + 2 * AWAY, "alice")  # alice talks to bob directly: live acks take over
    assert bob.letter("alice") is None


def test_a_letter_delivered_before_or_after_the_live_copy_counts_once():
    alice, bob = MvdsNode(T0), MvdsNode(T0)
    alice.send("bob", GROUP, b"one", T0, Mode.BATCH)
    first = alice.letter("bob")
    alice.send("bob", GROUP, b"two", T0 + 1, Mode.BATCH)
    second = alice.letter("bob")
    relay(alice, "alice", bob, T0 + EPOCH)  # live: both
    for letter in (second, first, second):
        bob.receive(letter, T0 + 2 * EPOCH, "alice", letter=True)
    assert delivered(bob) == [b"one", b"two"]
    assert bob.stats["duplicate"] == 5


def test_a_backlog_larger_than_a_payload_goes_oldest_first_and_the_rest_once_acknowledged():
    config = Config()
    alice, bob = MvdsNode(T0, config), MvdsNode(T0, config)
    bodies = [bytes([i]) * 20_000 for i in range(5)]
    for i, body in enumerate(bodies):
        alice.send("bob", GROUP, body, T0 + i, Mode.INTERACTIVE)
    bob.receive(alice.letter("bob"), T0 + AWAY, "alice", letter=True)
    assert delivered(bob) == bodies[:2]
    alice.receive(bob.letter("alice"), T0 + 2 * AWAY, "bob", letter=True)
    assert alice.waiting("bob") == 3
    bob.receive(alice.letter("bob"), T0 + 3 * AWAY, "alice", letter=True)
    assert delivered(bob) == bodies[2:4]


@settings(max_examples=150, deadline=None)
@given(
    modes=st.lists(st.sampled_from([Mode.BATCH, Mode.INTERACTIVE]), min_size=1, max_size=8),
    steps=st.lists(st.tuples(st.sampled_from(["live", "lose", "write", "take", "reply"]), st.integers(0, 50)),
                   max_size=120),
)
def test_letters_and_live_payloads_in_any_order_deliver_once_in_order(modes, steps):
    """alice writes; live payloads are lost or delivered as told; letters -
    each a snapshot of alice's at some moment - reach bob in any order, any
    number of times, and bob's own letters (his acks) reach alice. Whatever
    the mix, bob delivers each message once, in order."""
    config = Config(epoch_ms=100, backoff_base_epochs=2, backoff_cap_epochs=16, backoff_floor_epochs=4)
    alice, bob = MvdsNode(T0, config), MvdsNode(T0, config)
    bodies = [b"message %d" % i for i in range(len(modes))]
    now, sent, written, got = T0, 0, [], []
    for what, pick in steps:
        now += 150
        if sent < len(bodies) and pick % 3 == 0:
            alice.send("bob", GROUP, bodies[sent], now, modes[sent])
            sent += 1
        for node, peer, other in ((alice, "bob", bob), (bob, "alice", alice)):
            if node.get_timer() is not None and node.get_timer() <= now:
                node.handle_timer(now)
            for out in node.datagrams_to_send(now):
                if what == "live":
                    other.receive(out.data, now, "alice" if peer == "bob" else "bob")
        if what == "write" and (letter := alice.letter("bob")) is not None:
            written.append(letter)
        elif what == "take" and written:
            bob.receive(written[pick % len(written)], now, "alice", letter=True)
        elif what == "reply" and (letter := bob.letter("alice")) is not None:
            alice.receive(letter, now, "bob", letter=True)
        got += delivered(bob)
        list(alice.events())
    for body in bodies[sent:]:
        alice.send("bob", GROUP, body, now, Mode.BATCH)
    for _ in range(400):  # the network heals
        now += 100
        for node, source, other in ((alice, "alice", bob), (bob, "bob", alice)):
            if node.get_timer() is not None and node.get_timer() <= now:
                node.handle_timer(now)
            for out in node.datagrams_to_send(now):
                other.receive(out.data, now, source)
        got += delivered(bob)
        list(alice.events())
    assert got == bodies
    assert alice.waiting("bob") == 0
