"""A mailbox store holds sealed direct messages for someone away, and their
acks for a sender away: the two sides never online together. Real
runtimes, real SQLite files, an in-memory network and a fake clock."""

from __future__ import annotations

from chat_app import events as ev
from chat_app.runtime import Runtime
from chat_app.runtime.mailbox import MAILBOX_LINK

from .conftest import Net
from .test_direct import bring_back, dm_texts, of, received, take_down


def announce(net: Net, *runtimes: Runtime) -> None:
    """mDNS: each learns the others' nick, key and announced channels (mailbox tags included)."""
    for rt in runtimes:
        for other in runtimes:
            if other is not rt:
                address = net.address(other)
                rt.peer_announced(other.peer_id, other.nick, [address[0]], address[1], other.discovery_names,
                                  net.now, key=other.identity.public_key)
    net.pump()


def test_a_message_and_its_ack_travel_through_a_mailbox_while_the_sides_are_never_online_together(net):
    alice, bob = net.add("alice"), net.add("bob")
    mailbox = net.add("store", channels=(MAILBOX_LINK,))
    announce(net, alice, bob, mailbox)
    alice.direct.send("bob", "hello", "text", alice.nick, net.now)
    net.run(2_000)
    assert received(net, bob) == ["hello"]
    bob_address = take_down(net, bob)
    away = [f"while you were away {i}" for i in range(3)]
    for text in away:
        alice.direct.send("bob", text, "text", alice.nick, net.now)
        net.run(1_000)
    net.run(60_000)
    assert alice.direct.stats["dm_letters_out"] > 0
    held = mailbox.store.blind.held(bob.direct.mailbox_tag)
    assert held and not any(t.encode() in data for data in held for t in away)  # sealed: nothing to read
    alice_address = take_down(net, alice)

    bob = bring_back(net, bob_address, "bob")
    announce(net, bob, mailbox)  # the mailbox sees bob's tag and hands over his letters
    net.run(5_000)
    assert dm_texts(bob, alice) == ["hello", *away]
    assert received(net, bob) == away  # each once, in order
    assert bob.direct.stats["dm_from_mailbox"] > 0
    net.run(40_000)  # bob's acks wait in the mailbox for alice
    take_down(net, bob)

    alice = bring_back(net, alice_address, "alice")
    announce(net, alice, mailbox)
    net.run(5_000)
    assert len(of(net.seen(alice), ev.DmAcknowledged)) == len(away)
    assert {m.ack for m in alice.store.messages(f"@{bob.peer_id}")} == {"acknowledged"}
    assert alice.direct.conversations[bob.peer_id].engine.waiting(bob.peer_id) == 0
    assert not mailbox.store.messages(f"@{alice.peer_id}") and not mailbox.store.messages(f"@{bob.peer_id}")


def test_a_letter_is_not_served_back_to_its_sender_nor_to_anyone_else(net):
    alice, bob, carol = net.add("alice"), net.add("bob"), net.add("carol")
    mailbox = net.add("store", channels=(MAILBOX_LINK,))
    announce(net, alice, bob, carol, mailbox)
    alice.direct.send("bob", "hi", "text", alice.nick, net.now)
    net.run(2_000)
    take_down(net, bob)
    alice.direct.send("bob", "for bob only", "text", alice.nick, net.now)
    net.run(40_000)
    assert mailbox.store.blind.held(bob.direct.mailbox_tag)
    announce(net, alice, carol, mailbox)  # both announce again: neither is handed bob's letters
    net.run(2_000)
    store_address = net.address(mailbox)
    served = [dst for src, data, dst in net.sent if src == store_address and data[:2] == bytes((1, 0x50))]
    assert served == []
    assert not of(net.seen(carol), ev.DatagramRejected) and not of(net.seen(alice), ev.DatagramRejected)


def test_a_peers_own_mailbox_tag_is_not_listed_among_its_channels(net):
    """Every peer announces where its letters are filed; that is no channel
    it is in, so neither the peer list nor the join event shows it."""
    alice, bob = net.add("alice", channels=("general",)), net.add("bob", channels=("general",))
    assert bob.direct.mailbox_link in bob.discovery_names
    announce(net, alice, bob)
    listed = {p["peer_id"]: p["channels"] for p in alice.peer_snapshot().peers}
    assert tuple(listed[bob.peer_id]) == ("general",)
    joined = [e for e in net.seen(alice) if isinstance(e, (ev.PeerJoined, ev.PeerUpdated)) and e.peer_id == bob.peer_id]
    assert joined and all(bob.direct.mailbox_link not in (e.channels or ()) for e in joined)
