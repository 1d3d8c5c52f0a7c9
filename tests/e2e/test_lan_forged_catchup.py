"""An attacker on a host of its own speaks the replication protocol itself
(``tests.replication.forgery.Forger`` over a TCP socket of its host, CBOR
frames as the peers send them) and pushes forged entries at a real
``sds-chat --headless`` victim and a ``sds-chat serve`` store; and sends
SVS datagrams that lie about their node or a number. Each forgery is
refused with a reason the victim reports (``rejected``,
``replication_closed``), its SQLite file holds none of them, and an honest
peer then catches it up."""

from __future__ import annotations

import socket
import sqlite3
import struct
import time

import pytest

from chat_app.crypto import ChannelKey, Identity, Kind, blind_id, seal
from chat_app.net.tcp import frame
from chat_app.runtime.svs_routing import group_name, node_name
from chat_app.store import Store
from sync.replication.messages import LOG_HEIGHT, SET_RECONCILIATION
from sync.svs import Name, Producer, packets, vector
from tests.lan import Host
from tests.replication.forgery import Forger, as_someone_else, one_bit_changed, under_another_key

from .harness import HeadlessPeer, log_order
from .test_headless import _introduced

pytestmark = pytest.mark.slow

ROOM, HIDEOUT, PASS = "operations-room", "hideout", "correct horse battery staple"


def forge(attacker: Host, victim: HeadlessPeer, forger: Forger, seconds: float = 10) -> None:
    """One replication stream from the attacker's host to the victim, run to its end."""
    sock = attacker.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(0.5)
    sock.connect((victim.host.address, victim.port))
    buffer, deadline = b"", time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            for data in forger.frames():
                sock.sendall(frame(data))
            if forger.finished:
                return  # the session is over: the forger hangs up, as the side that dialled
            try:
                chunk = sock.recv(65_536)
            except TimeoutError:
                continue
            if not chunk:
                return  # the victim hung up
            buffer += chunk
            while len(buffer) >= 4 and len(buffer) >= 4 + (length := struct.unpack(">I", buffer[:4])[0]):
                forger.receive(buffer[4:4 + length])
                buffer = buffer[4 + length:]
    finally:
        sock.close()


def wires(peer: HeadlessPeer, channel: str) -> dict[tuple[str, int], bytes]:
    """A peer's stored envelopes of a channel, by (author, sequence number)."""
    conn = sqlite3.connect(peer.data_dir / "sds-chat.sqlite3")
    try:
        return {(a, s): w for a, s, w in conn.execute("SELECT sender_id, seq, wire FROM messages WHERE channel = ?",
                                                      (channel,))}
    finally:
        conn.close()


def refusals(peer: HeadlessPeer, count: int) -> list[dict]:
    """Wait for ``count`` refused entries; every rejected and replication_closed event so far."""
    peer.wait_for(lambda e: len([x for x in peer.events if x["event"] == "rejected"]) >= count, 30)
    peer.drain(1)
    return [e for e in peer.events if e["event"] in ("rejected", "replication_closed")]


def test_forged_entries_are_refused_by_a_peer_and_a_store_and_an_honest_peer_then_serves(spawn, lan):
    alice = spawn("alice", "--channel", "general", "--channel", "random")
    dave = spawn("dave", "--channel", "general")
    bob = spawn("bob", "--channel", "general", "--channel", "random")
    _introduced(alice, dave, bob)
    alice.send("/join #general")
    alice.send("heard 1")
    alice.send("heard 2")
    dave.send("dave's")
    bob.wait_delivered(3)
    bob.stop()
    for text in ("missed 3", "missed 4"):
        alice.send(text)
    alice.wait_delivered(5)
    alice.send("/join #random")
    alice.send("elsewhere")
    alice.wait_delivered(1, channel="random")
    for peer in (alice, dave):
        peer.stop()
    entry, a = {**wires(alice, "general"), **wires(dave, "general")}, alice.peer_id
    (elsewhere,) = wires(alice, "random").values()
    mallory, attacker = Identity.generate(), lan.host("mallory")
    forgeries = [  # (what it names, what it sends, why it is refused)
        ([(a, 5)], as_someone_else(mallory, a, "general", 3), "impostor"),
        ([(a, 5)], one_bit_changed(entry[(a, 3)]), "bad_signature"),
        ([(a, 5)], entry[(dave.peer_id, 1)], "unnamed"),  # names alice's log, sends dave's
        ([(a, 5)], entry[(a, 1)], "height"),  # bob holds alice's 1 and 2, and says so
        ([(a, 5)], elsewhere, "other_channel"),
    ]
    bob.start()
    store = spawn("store", "serve", "--channel", "general")
    _introduced(bob, store)
    store.wait_delivered(3)  # from bob, honestly
    for victim in (bob, store):
        for mode, (names, sends, _) in zip((LOG_HEIGHT, SET_RECONCILIATION) * 3, forgeries, strict=False):
            forge(attacker, victim, Forger(("general",), {"general": names}, [sends], mode=mode))
        seen = refusals(victim, len(forgeries))
        kinds = [e["kind"] for e in seen if e["event"] == "rejected"]
        assert kinds == [why for _, _, why in forgeries], seen
        assert all("replication entry from " + attacker.address in e["reason"] for e in seen
                   if e["event"] == "rejected")
        assert len([e for e in seen if e["event"] == "replication_closed"]) == len(forgeries)
    assert bob.delivered() == [] and len(log_order(bob)) == 3  # nothing forged was delivered or stored
    before = {victim: len(victim.delivered()) for victim in (bob, store)}
    alice.start()  # an honest peer: bob and the store catch up from her
    for victim, delivered in before.items():
        caught_up = victim.wait_delivered(delivered + 2, timeout=60)
        assert [e["text"] for e in caught_up[delivered:]] == ["missed 3", "missed 4"]
    for peer in (alice, bob, store):
        peer.stop()
    assert log_order(bob) == log_order(store) == log_order(alice) and len(log_order(bob)) == 5


def test_in_a_private_channel_forged_datagrams_are_dropped_and_the_honest_ones_kept(spawn, lan):
    key, hideout = ChannelKey.from_passphrase(ROOM, PASS), ChannelKey.from_passphrase(HIDEOUT, PASS)
    both = ("--channel", f"{ROOM}:{PASS}", "--channel", f"{HIDEOUT}:{PASS}")
    alice, bob = spawn("alice", *both), spawn("bob", *both)
    _introduced(alice, bob)
    alice.send(f"/join #{ROOM}")
    alice.send("heard")
    bob.wait_delivered(1, channel=ROOM)
    bob.stop()
    alice.send("missed 1")
    alice.send("missed 2")
    alice.send(f"/join #{HIDEOUT}")
    alice.send("hidden")
    alice.wait_delivered(1, channel=HIDEOUT)
    alice.stop()
    held = set(wires(bob, ROOM).values())
    honest = [key.encrypt(w) for _, w in sorted(wires(alice, ROOM).items()) if w not in held]  # missed 1, 2
    (hidden,) = wires(alice, HIDEOUT).values()
    mallory = Identity.generate()
    forged = {
        "undecryptable": under_another_key(hidden, key.tag),  # ROOM's tag, another key
        "bad_signature": key.encrypt(hidden),  # HIDEOUT's message, encrypted for ROOM: signed for HIDEOUT
        "impostor": as_someone_else(mallory, alice.peer_id, ROOM, 3, key),
    }
    assert len(honest) == 2
    sends = [honest[0], *forged.values(), honest[1]]
    name = "=" + key.tag.hex()
    bob.start()
    attacker = lan.host("mallory")
    forge(attacker, bob, Forger((name,), {name: [(blind_id(d), 1) for d in sends]}, sends))
    seen = refusals(bob, len(forged))
    assert sorted(e["kind"] for e in seen if e["event"] == "rejected") == sorted(forged)
    assert not [e for e in seen if e["event"] == "replication_closed"]  # the link went on
    assert sorted(e["text"] for e in bob.wait_delivered(2, channel=ROOM)) == ["missed 1", "missed 2"]
    replayed = hideout.encrypt(hidden)  # HIDEOUT's own datagram, in ROOM's set: the link ends
    forge(attacker, bob, Forger((name,), {name: [(blind_id(replayed), 1)]}, [replayed]))
    bob.wait_for(lambda e: e["event"] == "replication_closed", 20)
    assert [e["kind"] for e in bob.events if e["event"] == "rejected"][-1] == "other_channel"
    bob.stop()
    assert len(log_order(bob, ROOM)) == 3 and len(log_order(bob, HIDEOUT)) == 0


def svs_vector(peer: HeadlessPeer, channel: str = "ops") -> dict:
    state = Store(peer.data_dir / "sds-chat.sqlite3").states.load(channel)["svs"]
    return {(bytes(n), b): s for n, b, s in state["vector"]}


def test_svs_datagrams_lying_about_their_node_or_a_number_change_no_state_vector(spawn, lan):
    alice, bob = spawn("alice", "--channel", "ops+svs"), spawn("bob", "--channel", "ops+svs")
    _introduced(alice, bob)
    alice.send("one")
    bob.wait_delivered(1, channel="ops")
    time.sleep(1)
    record = next(iter(wires(alice, "ops").values()))
    mallory = Identity.generate()
    group = Name.parse(group_name("ops"))

    def interest(sender_id: str, entries: dict) -> bytes:
        data = packets.encode_sync_interest(group, Name.parse(node_name(sender_id)),
                                            vector.encode_entries(vector.entries_by_node(entries)), 7)
        return seal(mallory, Kind.SVS, data)

    producers = {}
    for peer in (alice, bob):
        state = Store(peer.data_dir / "sds-chat.sqlite3").states.load("ops")["svs"]
        producers[peer.nick] = Producer(Name.decode(state["node"]), state["bootstrap"])
    sock = lan.host("mallory").socket()
    for data in (
        interest(alice.peer_id, {producers["alice"]: 50}),  # mallory's key, alice's node
        seal(mallory, Kind.SVS, packets.encode_publication(group, producers["alice"], 5, record)),  # alice's 1 as 5
        interest(mallory.sender_id, {producers["bob"]: 1_000_000}),  # bob's own number, far on
    ):
        sock.sendto(data, (bob.host.address, bob.port))
    sock.close()
    bob.wait_for(lambda e: e["event"] == "rejected" and e["kind"] == "publication", 10)
    bob.drain(1)
    assert [e["kind"] for e in bob.events if e["event"] == "rejected"] == ["impostor", "publication"]
    bob.send("two")  # bob's number 1, not 1,000,001: alice needs nothing that never comes
    alice.wait_delivered(2, channel="ops")
    for peer in (alice, bob):
        peer.stop()
    held = svs_vector(bob)
    assert held[(producers["alice"].node.encode(), producers["alice"].bootstrap)] == 1
    assert held[(producers["bob"].node.encode(), producers["bob"].bootstrap)] == 1
    assert log_order(bob, "ops") == log_order(alice, "ops") and len(log_order(bob, "ops")) == 2
