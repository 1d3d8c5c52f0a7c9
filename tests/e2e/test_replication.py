"""Catch-up over TCP replication, with real processes on hosts of the test LAN, mDNS and SQLite."""

import time

import pytest

from .harness import log_order
from .test_headless import _introduced

pytestmark = pytest.mark.slow


def wait_log(peer, count: int, timeout: float = 60.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        order = log_order(peer)
        if len(order) >= count:
            return order
        time.sleep(0.2)
    raise AssertionError(f"{peer.nick}: {len(log_order(peer))} of {count} messages after {timeout}s")


def test_a_peer_that_was_offline_catches_up_500_messages(spawn):
    a, b, c = spawn("alice"), spawn("bob"), spawn("carol")
    _introduced(a, b, c)
    c.send("carol was here")
    for p in (a, b, c):
        p.wait_delivered(1)
    c.stop()
    for i in range(250):
        a.send(f"alice {i}")
        b.send(f"bob {i}")
    a.wait_delivered(501, timeout=120)
    b.wait_delivered(501, timeout=120)
    started = time.monotonic()
    c.start()
    caught_up = wait_log(c, 501)
    took = time.monotonic() - started
    assert caught_up == log_order(a) == log_order(b)
    assert took < 30, f"catch-up took {took:.1f}s"
    assert c.wait_for(lambda e: e["event"] == "catchup" and e["received"] > 0, 10)


def test_a_late_joiner_with_an_empty_database_gets_the_whole_history(spawn):
    a, b = spawn("alice"), spawn("bob")
    _introduced(a, b)
    for i in range(25):
        a.send(f"alice {i}")
        b.send(f"bob {i}")
    a.wait_delivered(50)
    b.wait_delivered(50)
    d = spawn("dave")
    assert wait_log(d, 50, timeout=30) == log_order(a)


def test_a_late_joiner_takes_each_message_once_over_one_link(spawn):
    """The two peers meet each other (mDNS, and the first datagrams): one of
    them dials, and one session brings the history - not one each way."""
    a = spawn("alice")
    for i in range(300):
        a.send(f"alice {i}")
    a.wait_delivered(300)
    d = spawn("dave")
    assert wait_log(d, 300, timeout=60) == log_order(a)
    d.drain(3.0)  # a second session would end by now
    brought = [e["received"] for e in d.events if e["event"] == "catchup" and e["received"]]
    shown = [(e["event"], e.get("address"), e.get("received"), e.get("state"), e.get("found")) for e in d.events
             if e["event"].startswith(("catchup", "peer_joined", "replication"))]
    assert len(brought) == 1 and sum(brought) <= 300, shown  # a message may come by a fetch instead


def test_a_store_peer_serves_history_after_the_authors_left(spawn):
    store = spawn("store", "serve", "--channel", "general")
    a, b = spawn("alice"), spawn("bob")
    _introduced(a, b)
    for i in range(15):
        a.send(f"alice {i}")
        b.send(f"bob {i}")
    a.wait_delivered(30)
    expected = wait_log(store, 30)
    a.stop()
    b.stop()
    d = spawn("dave")
    assert wait_log(d, 30, timeout=30) == expected
    assert expected == log_order(a)


def test_bad_replication_peers_are_dropped_and_nothing_invalid_is_stored(spawn, lan):
    import socket
    import struct

    import cbor2

    from sync.replication import encode
    from sync.replication import messages as m

    alice = spawn("alice", "--no-discovery")
    alice.send("a real message")
    alice.wait_delivered(1)

    mallory = lan.host("mallory")

    def link():
        sock = mallory.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(5)
        sock.connect((alice.host.address, alice.port))
        return sock

    def send(sock, data):
        sock.sendall(struct.pack(">I", len(data)) + data)

    for bad in (b"\xff\xfe garbage", cbor2.dumps([99, 1, 2]), cbor2.dumps({"not": "an array"})):
        sock = link()
        send(sock, bad)
        sock.settimeout(5)
        try:  # alice answers with her Announce, then hangs up
            while sock.recv(65536):
                pass
        except OSError:
            pass
        sock.close()
    sock = link()
    sock.sendall(struct.pack(">I", 50 << 20))  # an oversized frame
    sock.close()
    sock = link()  # a peer that asks properly, then sends a forged entry and vanishes
    send(sock, encode(m.Announce(1, ("general",))))
    send(sock, encode(m.EntryMessage(0, b"forged")))
    try:  # read until alice hangs up: closing first could reset the link before she reads the entry
        while sock.recv(65536):
            pass
    except OSError:
        pass
    sock.close()
    wanted = ("not CBOR", "unknown message type 99", "exceeds", "unknown session")
    deadline = time.monotonic() + 20
    while True:  # each link closes on its own time: wait for all four, under load too
        alice.drain(0.5)
        reasons = [e["reason"] for e in alice.events if e["event"] == "replication_closed"]
        if all(any(w in r for r in reasons) for w in wanted) or time.monotonic() > deadline:
            break
    assert any("not CBOR" in r for r in reasons) and any("unknown message type 99" in r for r in reasons)
    assert any("exceeds" in r for r in reasons) and any("unknown session" in r for r in reasons), reasons
    alice.send("still here")
    assert [e["text"] for e in alice.wait_delivered(2)] == ["a real message", "still here"]
    assert alice.proc.poll() is None
    alice.stop()
    assert len(log_order(alice)) == 2
