"""Who is in a channel: a private one is announced by its tag, so a member
who joins later learns the others there when it joins - and anyone is known
to be in a channel once its own datagrams arrive there."""

from __future__ import annotations

from chat_app import events as ev

ROOM = "operations-room"
PASS = "correct horse battery staple"


def updates_in(net, rt, peer_id, channel) -> list[ev.PeerUpdated]:
    return [e for e in net.seen(rt) if isinstance(e, ev.PeerUpdated) and e.peer_id == peer_id
            and channel in (e.channels or ())]


def announce(net, rt, to) -> None:
    """What mDNS would tell ``to`` about ``rt``."""
    to.peer_announced(rt.peer_id, rt.nick, [net.address(rt)[0]], net.address(rt)[1], rt.announced_channels, net.now,
                      key=rt.identity.public_key)


def test_a_late_member_sees_an_existing_member_once_it_joins(net):
    alice = net.add("alice", channels=("general",), passphrases={ROOM: PASS})
    carol = net.add("carol", channels=("general",))
    announce(net, alice, carol)  # carol has no key yet: alice is in "general" and a tag
    net.pump()
    assert updates_in(net, carol, alice.peer_id, ROOM) == []
    assert carol.join(ROOM, net.now, passphrase=PASS)
    net.pump()
    (update,) = updates_in(net, carol, alice.peer_id, ROOM)
    assert set(update.channels) == {"general", ROOM}


def test_a_member_is_learnt_from_its_own_datagrams_in_the_channel(net):
    alice = net.add("alice", channels=("general",))
    bob = net.add("bob", channels=("general",))
    announce(net, alice, bob)  # announced before alice joined #random
    assert alice.join("random", net.now) and bob.join("random", net.now)
    net.pump()
    assert updates_in(net, bob, alice.peer_id, "random") == []
    alice.typing("random", net.now)
    net.run(1_000)
    assert updates_in(net, bob, alice.peer_id, "random")
    assert "random" in bob.peers.get(alice.peer_id).channels  # its datagrams go there too
