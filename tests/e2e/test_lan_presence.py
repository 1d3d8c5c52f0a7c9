"""Presence through a store peer, on the test LAN: who a peer shows as
present when some of the others reach it only through a store peer.

The store (`sds-chat serve`) sits on two subnets with no route between them.
alice and bob share subnet one and hear each other; carol is alone with the
store on subnet two, so everything of alice's and bob's reaches her as
content the store passes on (fetch answers and catch-up). The rules
(``chat_app/peers.py``): presence comes only from a peer's own datagrams and
its announcements, never from content relayed by others. Before them, carol
listed alice and bob at the store's address, "channels unknown", for as long
as the store kept relaying their messages - minutes after they quit."""

import time

import pytest

from .harness import log_order
from .test_replication import wait_log

pytestmark = pytest.mark.slow


def _peers_of(peer) -> dict[str, dict]:
    peer.send("/peers")
    return {p["peer_id"]: p for p in peer.wait_for(lambda e: e["event"] == "peers", 10, fresh=True)["peers"]}


def _ever_joined(peer, other) -> list[dict]:
    peer.drain()
    return [e for e in peer.events if e["event"] in ("peer_joined", "peer_updated") and e["peer_id"] == other.peer_id]


def _knows(peer, other, timeout: float = 20.0) -> dict:
    return peer.wait_for(lambda e: e["event"] == "peer_joined" and e["peer_id"] == other.peer_id, timeout)


def test_a_peer_reached_only_through_a_store_is_present_while_it_talks_to_you_and_not_after(spawn, lan):
    hub = lan.host("store", ("one", "two"))  # on both subnets, forwarding nothing
    store = spawn("store", "serve", "--channel", "general", host=hub)
    alice = spawn("alice", host=lan.host("alice", ("one",)))
    bob = spawn("bob", host=lan.host("bob", ("one",)))
    carol = spawn("carol", host=lan.host("carol", ("two",)))
    for peer in (alice, bob, carol):
        _knows(peer, store)
    _knows(alice, bob)

    # alice and bob talk; carol gets every line through the store
    for i in range(3):
        alice.send(f"alice {i}")
        bob.send(f"bob {i}")
    wait_log(store, 6, timeout=60)
    carol.send("carol is here")  # names what carol holds: the store's answers fill in the rest
    expected = wait_log(store, 7, timeout=60)
    assert wait_log(carol, 7, timeout=90) == expected

    # those whose own datagrams arrive show as present: the store sees all three, bob sees alice
    for other in (alice, bob, carol):
        _knows(store, other)
    seen_by_bob = _peers_of(bob)[alice.peer_id]
    assert seen_by_bob["address"][0] == alice.host.address and seen_by_bob["answers"]
    # carol only ever heard the store: alice and bob are not present there, at no address
    carols = _peers_of(carol)
    assert set(carols) == {store.peer_id}, carols
    assert carols[store.peer_id]["channels"] == ["general"]
    assert not _ever_joined(carol, alice) and not _ever_joined(carol, bob)

    # alice quits; the store keeps serving her messages, to carol and to a newcomer
    alice.stop()
    bob.wait_for(lambda e: e["event"] == "peer_left" and e["peer_id"] == alice.peer_id, 20)
    store.wait_for(lambda e: e["event"] == "peer_left" and e["peer_id"] == alice.peer_id, 20)
    dave = spawn("dave", host=lan.host("dave", ("two",)))
    assert wait_log(dave, 7, timeout=60) == expected  # caught up from the store, alice's lines included
    bob.send("bob again")
    wait_log(carol, 8, timeout=60)
    time.sleep(3)
    for peer in (carol, dave):
        assert alice.peer_id not in _peers_of(peer)
        assert not _ever_joined(peer, alice)
    assert alice.peer_id not in _peers_of(bob)

    # carol talks: her line is shown on subnet one at once, through the store, but
    # only the store, which hears her own datagrams, shows her present; when she
    # quits, it shows her gone
    carol.send("still here")
    bob.wait_for(lambda e: e["event"] == "delivered" and e["text"] == "still here", 60)
    seen_by_store = store.wait_for(lambda e: e["event"] == "peer_joined" and e["peer_id"] == carol.peer_id)
    assert seen_by_store["address"][0] == carol.host.address
    carol.stop()
    store.wait_for(lambda e: e["event"] == "peer_left" and e["peer_id"] == carol.peer_id, 20)
    assert not _ever_joined(bob, carol) and carol.peer_id not in _peers_of(bob)
    assert log_order(bob) == log_order(store)
