"""/away: said to every channel as an ephemeral message, kept in the peer
table (the member list's data), told again to peers that appear later."""

from __future__ import annotations

from chat_app import events as ev

from .conftest import Net


def away_of(net: Net, rt, peer_id: str) -> list[str | None]:
    return [e.reason for e in net.seen(rt) if isinstance(e, ev.PeerAway) and e.peer_id == peer_id]


def snapshot_away(rt, peer_id: str) -> str | None:
    return next(p["away"] for p in rt.peer_snapshot().peers if p["peer_id"] == peer_id)


def test_away_and_back_reach_peers_and_newcomers(net):
    alice, bob = net.add("alice"), net.add("bob")
    net.run(25_000)  # they have heard each other
    alice.profile.set_away("lunch", net.now)
    net.pump()
    assert away_of(net, bob, alice.peer_id) == ["lunch"]
    assert snapshot_away(bob, alice.peer_id) == "lunch"
    carol = net.add("carol")
    net.run(25_000)
    assert away_of(net, carol, alice.peer_id) == ["lunch"]  # told when carol first appeared
    alice.profile.set_away("", net.now)
    net.pump()
    assert away_of(net, bob, alice.peer_id) == ["lunch", None]
    assert snapshot_away(carol, alice.peer_id) is None


def test_an_over_long_reason_is_refused(net):
    alice = net.add("alice")
    net.seen(alice).clear()
    alice.profile.set_away("x" * 201, net.now)
    assert [type(e) for e in alice.events()] == [ev.Error] and alice.profile.away is None
