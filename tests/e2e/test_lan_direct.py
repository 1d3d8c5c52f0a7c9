"""Direct messages between real processes on hosts of the test LAN: lossy
links, a recipient away, a sender restarted, an outsider capturing every
frame and a third member who must never see the conversation."""

from __future__ import annotations

import sqlite3
import time

import pytest

from .test_headless import _introduced
from .test_lan_crypto import Capture, udp_payload

pytestmark = pytest.mark.slow


def dms(peer, own: bool = False) -> list[str]:
    peer.drain()
    return [e["text"] for e in getattr(peer, "previous_events", []) + peer.events
            if e["event"] == "dm_delivered" and e["own"] == own]


def wait_dms(peer, count: int, timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while len(dms(peer)) < count:
        if time.monotonic() > deadline:
            raise AssertionError(f"{peer.nick}: {len(dms(peer))} of {count} direct messages; {peer.events[-5:]}")
        peer.drain(0.2)
    return dms(peer)


def stored_dms(peer, other) -> list[str]:
    conn = sqlite3.connect(peer.data_dir / "sds-chat.sqlite3")
    try:
        return [r[0] for r in conn.execute("SELECT text FROM messages WHERE channel = ? ORDER BY lamport, message_id",
                                           (f"@{other.peer_id}",))]
    finally:
        conn.close()


def acks(peer) -> set[str]:
    peer.drain()
    return {e["message_id"] for e in getattr(peer, "previous_events", []) + peer.events if e["event"] == "dm_ack"}


def test_direct_messages_across_hosts_at_thirty_percent_loss(spawn):
    alice, bob = spawn("alice"), spawn("bob")
    _introduced(alice, bob)
    for peer in (alice, bob):
        peer.host.drop(30)
    sent = [f"lossy {i}" for i in range(15)]
    for text in sent:
        alice.send(f"/msg bob {text}")
    assert wait_dms(bob, len(sent), timeout=90) == sent  # each once, in order
    deadline = time.monotonic() + 60
    while len(acks(alice)) < len(sent) and time.monotonic() < deadline:
        alice.drain(0.3)
    assert len(acks(alice)) == len(sent)
    bob.send("/query alice")
    bob.send("loud and clear")  # after /query, plain text goes to the conversation
    assert wait_dms(alice, 1, timeout=60) == ["loud and clear"]
    for peer in (alice, bob):
        peer.stop()
    assert stored_dms(bob, alice) == stored_dms(alice, bob) == [*sent, "loud and clear"]


def test_a_recipient_away_for_two_minutes_gets_each_message_once_in_order(spawn):
    alice, bob = spawn("alice"), spawn("bob")
    _introduced(alice, bob)
    alice.send("/msg bob before you left")
    wait_dms(bob, 1, timeout=30)
    alice.wait_for(lambda e: e["event"] == "dm_ack", 30)
    bob.stop()  # the process is gone
    away = [f"while away {i}" for i in range(5)]
    for text in away:
        alice.send(f"/msg bob {text}")
    time.sleep(120)
    assert len(acks(alice)) == 1
    bob.start()  # same data directory, a new port: found again by mDNS
    assert wait_dms(bob, 1 + len(away), timeout=60) == ["before you left", *away]
    deadline = time.monotonic() + 30
    while len(acks(alice)) < 1 + len(away) and time.monotonic() < deadline:
        alice.drain(0.3)
    assert len(acks(alice)) == 1 + len(away)
    for peer in (alice, bob):
        peer.stop()
    assert stored_dms(bob, alice) == ["before you left", *away]


def test_a_sender_restarted_mid_retransmission_delivers_once(spawn):
    alice, bob = spawn("alice"), spawn("bob")
    _introduced(alice, bob)
    alice.send("/msg bob hello")
    wait_dms(bob, 1, timeout=30)
    bob.stop()
    for i in range(3):
        alice.send(f"/msg bob pending {i}")
    alice.wait_for(lambda e: e["event"] == "dm_delivered" and e["text"] == "pending 2", 10)
    time.sleep(2)  # a few retransmissions into nowhere
    alice.kill9()  # nothing in memory survives: keys, state and the pending messages come from SQLite
    alice.start()
    bob.start()
    assert wait_dms(bob, 4, timeout=60) == ["hello", "pending 0", "pending 1", "pending 2"]
    alice.wait_for(lambda e: e["event"] == "dm_ack", 30, fresh=True)
    for peer in (alice, bob):
        peer.stop()
    assert stored_dms(bob, alice) == ["hello", "pending 0", "pending 1", "pending 2"]


def test_an_outsider_captures_no_plaintext_and_a_third_member_gets_nothing(spawn, lan):
    capture = Capture(lan.switch)
    alice, bob, carol = spawn("alice"), spawn("bob"), spawn("carol")
    _introduced(alice, bob, carol)
    secrets = ["the vault code is 7741", "burn after reading"]
    alice.send(f"/msg bob {secrets[0]}")
    wait_dms(bob, 1, timeout=30)
    bob.send(f"/msg alice {secrets[1]}")
    wait_dms(alice, 1, timeout=30)
    alice.send("hello everyone")  # the channel still works for all three
    carol.wait_delivered(1)
    time.sleep(1)
    frames = capture.stop()
    members = {alice.host.address, bob.host.address}
    sent = [payload for source, payload in map(udp_payload, capture.frames) if source in members]
    direct = [d for d in sent if d[:2] == bytes((1, 5))]  # signed envelopes of kind MVDS
    assert len(direct) >= 4, "the capture saw the direct datagrams"
    for secret in secrets:
        assert secret.encode() not in frames
    assert dms(carol) == [] and dms(carol, own=True) == []
    for peer in (alice, bob, carol):
        peer.stop()
    assert stored_dms(carol, alice) == stored_dms(carol, bob) == []
    assert stored_dms(alice, bob) == stored_dms(bob, alice) == secrets


def test_a_mailbox_store_carries_messages_and_acks_between_sides_never_online_together(spawn):
    store = spawn("store", "serve", "--mailbox")
    alice, bob = spawn("alice"), spawn("bob")
    _introduced(store, alice, bob)
    alice.send("/msg bob hello")
    wait_dms(bob, 1, timeout=30)
    alice.wait_for(lambda e: e["event"] == "dm_ack", 30)
    bob.stop()
    away = [f"while you were away {i}" for i in range(3)]
    for text in away:
        alice.send(f"/msg bob {text}")
    alice.wait_for(lambda e: e["event"] == "dm_delivered" and e["text"] == away[-1], 10)
    alice.stop()  # she leaves her letter to bob with the mailbox
    time.sleep(1)
    letters = held_letters(store)
    assert letters and not any(t.encode() in d for d in letters for t in away)  # sealed: nothing to read
    bob.start()
    assert wait_dms(bob, 1 + len(away), timeout=60) == ["hello", *away]  # from the mailbox, once, in order
    time.sleep(3)  # bob's acks for alice, away, go to the mailbox as his letter to her
    bob.stop()
    alice.start()
    deadline = time.monotonic() + 60
    while len(acks(alice)) < 1 + len(away) and time.monotonic() < deadline:
        alice.drain(0.3)
    assert len(acks(alice)) == 1 + len(away)  # the recipient's acks reached the sender, through the store
    alice.stop()
    store.stop()
    assert stored_dms(bob, alice) == ["hello", *away]
    assert held_letters(store) == []  # each was forgotten once taken
    conn = sqlite3.connect(store.data_dir / "sds-chat.sqlite3")
    try:
        assert conn.execute("SELECT COUNT(*) FROM messages WHERE channel LIKE '@%'").fetchone()[0] == 0
    finally:
        conn.close()


def held_letters(store) -> list[bytes]:
    """The letters in a mailbox's database."""
    conn = sqlite3.connect(store.data_dir / "sds-chat.sqlite3")
    try:
        return [r[0] for r in conn.execute("SELECT data FROM blind WHERE blind_id LIKE '@%'")]
    finally:
        conn.close()
