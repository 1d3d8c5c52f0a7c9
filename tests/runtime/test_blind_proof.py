"""A blind store serves a channel only to an address that proved it receives
there: source addresses are forged on a LAN at will, and one tiny datagram
under the public tag must not make the store send a third host the whole
channel. The store answers with one challenge no larger than what asked,
carrying a cookie only a host at that address sees; a member sends it back
(same size); then the store serves."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from chat_app.crypto import blind_id
from chat_app.runtime import blind as blind_mod

from .conftest import texts
from .test_private import PASS, ROOM

CHALLENGE, PROOF = 0x52, 0x53
SMALLEST = 2 + 16 + 12 + 16 + 1  # the smallest datagram a store takes under a tag (header, nonce, AEAD tag, 1 byte)
STRANGER = ("10.9.0.1", 9000)


def passing(tag: bytes, size: int = SMALLEST) -> bytes:
    """A passing datagram under ``tag``, as small as a store takes: anyone can send one."""
    return bytes((1, 0x51)) + tag + os.urandom(size - 18)


def to(net, src, dst) -> list[bytes]:
    """The private datagrams ``src`` sent ``dst`` so far (``dst`` need not be a node: a forged source)."""
    return [d for s, d, t in net.sent if s == net.address(src) and t == dst and 0x50 <= d[1] <= 0x53]


def channel_with_store(net, lines: int = 5):
    """A private channel of ``lines`` messages, held by a blind store; its only member gone."""
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    tag_name = alice.announced_channels[0]
    store = net.add("store", channels=(tag_name,))
    for i in range(lines):
        alice.say(ROOM, f"line {i}", "text", net.now)
        net.run(300)
    del net.nodes[net.address(alice)]
    tag = bytes.fromhex(tag_name[1:])
    assert len(store.store.blind.held(tag)) >= lines
    assert store.stats["blind_proven"] == 1  # alice, who proved her address when first challenged
    for counter in ("blind_challenged", "blind_proven"):
        store.private.blind.stats[counter] = 0  # the runtime's own counters: what follows starts from none
    return store, tag


def proof_of(challenge: bytes) -> bytes:
    return bytes((challenge[0], PROOF)) + challenge[2:]


def test_a_datagram_from_a_new_address_gets_one_challenge_no_larger_than_it_and_nothing_of_the_channel(net):
    store, tag = channel_with_store(net)
    kept = store.stats["blind_kept"]
    store.datagram_received(passing(tag), STRANGER, net.now)
    net.run(2_000)
    sent = to(net, store, STRANGER)
    assert len(sent) == 1 and sent[0][1] == CHALLENGE and sent[0][2:18] == tag
    assert len(sent[0]) <= SMALLEST
    assert store.stats["blind_challenged"] == 1
    # a member's datagram from an unproven address is still kept
    lasting = bytes((1, 0x50)) + tag + os.urandom(200)
    store.datagram_received(lasting, STRANGER, net.now)
    assert store.stats["blind_kept"] == kept + 1 and blind_id(lasting) in store.store.blind.ids(tag)


def test_challenges_to_one_address_are_rate_limited(net):
    store, tag = channel_with_store(net)
    for _ in range(50):
        store.datagram_received(passing(tag), STRANGER, net.now)
    net.run(1_000)
    assert 1 <= len(to(net, store, STRANGER)) <= 4 and store.stats["blind_challenged"] <= 4


def prove(net, store, tag: bytes) -> None:
    """``STRANGER`` asks, is challenged, and sends the cookie back."""
    store.datagram_received(passing(tag), STRANGER, net.now)
    net.run(200)
    [challenge] = to(net, store, STRANGER)
    store.datagram_received(proof_of(challenge), STRANGER, net.now)


def test_the_proof_from_that_address_gets_the_whole_channel(net):
    store, tag = channel_with_store(net)
    prove(net, store, tag)
    net.run(2_000)
    served = {blind_id(d) for d in to(net, store, STRANGER)[1:]}
    assert served == set(store.store.blind.ids(tag)) and store.stats["blind_bad_proof"] == 0
    assert store.stats["blind_proven"] == 1


def test_a_proven_address_is_served_again_without_another_challenge(net):
    store, tag = channel_with_store(net)
    prove(net, store, tag)
    net.run(61_000)
    before = len(to(net, store, STRANGER))
    store.datagram_received(passing(tag), STRANGER, net.now)  # a minute on: served again, at once
    net.run(2_000)
    assert store.stats["blind_challenged"] == 1 and len(to(net, store, STRANGER)) > before


def _bad_proofs(net, store, tag, how: str) -> bytes:
    """A proof from ``STRANGER`` that must not be taken: ``how`` it is wrong."""
    other = ("10.9.0.2", 9000)
    if how == "forged":
        return bytes((1, PROOF)) + tag + os.urandom(16)
    if how == "other_address":  # the cookie another address was sent
        store.datagram_received(passing(tag), other, net.now)
        net.run(200)
        return proof_of(to(net, store, other)[0])
    if how == "other_tag":  # the cookie of another channel the store keeps, for this very address
        second = bytes(range(16))
        store.private.keep_blind("~" + second.hex())
        store.datagram_received(passing(second), STRANGER, net.now)
        net.run(200)
        cookie = to(net, store, STRANGER)[-1][18:]
        return bytes((1, PROOF)) + tag + cookie
    assert how == "expired"
    store.datagram_received(passing(tag), STRANGER, net.now)
    net.run(200)
    challenge = to(net, store, STRANGER)[-1]
    net.run(3 * blind_mod.COOKIE_MS)
    return proof_of(challenge)


def test_a_forged_misdirected_or_expired_proof_serves_nothing_and_is_counted(net):
    store, tag = channel_with_store(net)
    held = set(store.store.blind.ids(tag))
    for how in ("forged", "other_address", "other_tag", "expired"):
        bad = store.stats["blind_bad_proof"]
        store.datagram_received(_bad_proofs(net, store, tag, how), STRANGER, net.now)
        net.run(2_000)
        assert store.stats["blind_bad_proof"] == bad + 1, how
        assert not {blind_id(d) for d in to(net, store, STRANGER)} & held, how
        assert not {blind_id(d) for d in to(net, store, ("10.9.0.2", 9000))} & held, how
    assert store.stats["blind_proven"] == 0


def test_an_announcement_listing_the_tag_gets_a_challenge_not_the_channel(net):
    store, tag = channel_with_store(net)
    store.peer_announced("ab" * 8, "mallory", ["10.9.0.3"], 9100, ("~" + tag.hex(),), net.now)
    net.run(2_000)
    sent = to(net, store, ("10.9.0.3", 9100))
    assert len(sent) == 1 and sent[0][1] == CHALLENGE and store.stats["blind_challenged"] == 1


def test_a_member_answers_a_challenge_for_a_joined_tag_and_ignores_others(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    tag = bytes.fromhex(alice.announced_channels[0][1:])
    cookie = os.urandom(16)
    challenge = bytes((1, CHALLENGE)) + tag + cookie
    alice.datagram_received(challenge, STRANGER, net.now)
    net.pump()
    assert to(net, alice, STRANGER) == [bytes((1, PROOF)) + tag + cookie]
    alice.datagram_received(bytes((1, CHALLENGE)) + bytes(16) + cookie, ("10.9.0.4", 9000), net.now)
    net.pump()
    assert to(net, alice, ("10.9.0.4", 9000)) == []
    # a member is no reflector either: one source gets few proofs, however many challenges it forges
    for _ in range(50):
        alice.datagram_received(challenge, ("10.9.0.5", 9000), net.now)
    net.pump()
    assert 1 <= len(to(net, alice, ("10.9.0.5", 9000))) <= 4


def test_a_late_member_proves_its_address_and_then_gets_every_message(net):
    store, tag = channel_with_store(net, lines=8)
    carol = net.add("carol", channels=(), passphrases={ROOM: PASS})
    net.run(30_000)
    assert texts(carol.store, ROOM) == [f"line {i}" for i in range(8)]
    assert store.stats["blind_challenged"] >= 1 and store.stats["blind_proven"] >= 1
    assert store.stats["blind_bad_proof"] == 0


@settings(max_examples=200, deadline=None)
@given(tag=st.binary(min_size=16, max_size=16), other=st.binary(min_size=16, max_size=16),
       port=st.integers(1, 65535), minted=st.integers(0, 10**13), later=st.integers(-10**6, 10**6))
def test_a_cookie_is_good_only_for_its_tag_and_address_and_for_a_bucket_or_two(tag, other, port, minted, later):
    cookies = blind_mod.Cookies()
    addr = ("10.0.0.7", port)
    cookie = cookies.mint(tag, addr, minted)
    checked = minted + later
    fresh = 0 <= checked // blind_mod.COOKIE_MS - minted // blind_mod.COOKIE_MS <= 1
    assert cookies.valid(tag, addr, cookie, checked) == fresh
    assert not cookies.valid(other, addr, cookie, minted) or other == tag
    assert not cookies.valid(tag, ("10.0.0.7", port % 65535 + 1), cookie, minted)
    assert not blind_mod.Cookies().valid(tag, addr, cookie, minted)  # another process, another secret
