"""Real processes on hosts of the test LAN, real UDP sockets, real mDNS, real SQLite."""

import random
import time

import pytest

from .harness import log_order

pytestmark = pytest.mark.slow


def _introduced(*peers):
    """Wait until every peer has discovered every other one."""
    for me in peers:
        for other in peers:
            if other is not me:
                me.wait_for(lambda e, o=other: e["event"] == "peer_joined" and e["peer_id"] == o.peer_id, 15)


def test_three_peers_discover_each_other_and_agree_on_the_order(spawn):
    peers = [spawn(nick) for nick in ("alice", "bob", "carol")]
    start = time.monotonic()
    _introduced(*peers)
    discovered_in = time.monotonic() - start
    for round_ in range(4):
        for me in peers:
            me.send(f"{me.nick} says {round_}")
    for p in peers:
        assert len({e["message_id"] for e in p.wait_delivered(12)}) == 12
    for p in peers:
        p.stop()
    stored = [log_order(p) for p in peers]
    assert stored[0] == stored[1] == stored[2] and len(stored[0]) == 12
    texts = {e["text"] for e in peers[0].delivered()}
    assert {f"{n} says {r}" for n in ("alice", "bob", "carol") for r in range(4)} == texts
    assert discovered_in < 10


def test_a_peer_killed_mid_conversation_restarts_and_loses_nothing(spawn, tmp_path):
    alice = spawn("alice")
    bob = spawn("bob")
    _introduced(alice, bob)
    for i in range(10):
        alice.send(f"before {i}")
        bob.send(f"bob {i}")
    bob.wait_delivered(5)
    bob.kill9()  # mid-conversation: some of its own messages may be unacknowledged
    for i in range(10):
        alice.send(f"while bob is down {i}")
    alice.wait_delivered(20)  # her own 20, at least
    bob.start()  # same data directory: same identity, same history
    expected = 30
    alice_log = [e["message_id"] for e in alice.wait_delivered(expected, timeout=60)]
    deadline = time.monotonic() + 60
    while len(log_order(bob)) < expected and time.monotonic() < deadline:
        time.sleep(0.3)
    alice.stop()
    bob.stop()
    assert len(set(alice_log)) == expected
    assert log_order(bob) == log_order(alice)
    assert len(log_order(bob)) == expected  # nothing lost, nothing twice


def test_unacknowledged_messages_are_resent_after_a_crash(spawn):
    bob = spawn("bob")
    for i in range(3):
        bob.send(f"into the void {i}")
    bob.wait_delivered(3)
    bob.kill9()  # nobody heard them: all three are unacknowledged
    alice = spawn("alice")
    bob.start()
    got = alice.wait_delivered(3, timeout=30)
    assert sorted(e["text"] for e in got) == [f"into the void {i}" for i in range(3)]
    bob.wait_for(lambda e: e["event"] == "ack" and e["state"] == "acknowledged", 30)
    bob.stop()
    assert len(log_order(bob)) == 3


def test_garbage_datagrams_cause_no_crash_and_no_lost_message(spawn, lan):
    alice = spawn("alice")
    bob = spawn("bob")
    _introduced(alice, bob)
    bob.send("a real message")
    sample = bob.wait_delivered(1)[0]
    alice.wait_delivered(1)
    rng = random.Random(7)
    sock = lan.host("mallory").socket()
    for i in range(300):
        junk = rng.randbytes(rng.randint(0, 1500)) if i % 2 else bytes(
            b ^ (rng.randint(1, 255) if rng.random() < 0.05 else 0) for b in sample["message_id"].encode() * 20)
        sock.sendto(junk, (alice.host.address, alice.port))
    sock.sendto(b"\x12" * 60_000, (alice.host.address, alice.port))  # oversized
    sock.close()
    bob.send("still talking")
    texts = [e["text"] for e in alice.wait_delivered(2)]
    assert texts == ["a real message", "still talking"]
    assert alice.proc.poll() is None
    rejected = [e for e in alice.events if e["event"] == "rejected"]
    assert len(rejected) > 100 and all("\n" not in e["reason"] for e in rejected)
    alice.stop()
    assert len(log_order(alice)) == 2


def test_typing_reaches_others_and_expires(spawn):
    alice = spawn("alice")
    bob = spawn("bob")
    _introduced(alice, bob)
    alice.send("/typing")
    typing = bob.wait_for(lambda e: e["event"] == "typing", 10)
    assert typing["nick"] == "alice" and typing["peer_id"] == alice.peer_id
    shown = time.monotonic()
    bob.wait_for(lambda e: e["event"] == "typing_stopped" and e["peer_id"] == alice.peer_id, 10)
    assert 4.5 < time.monotonic() - shown < 8.5


def test_no_typing_sends_no_indicator(spawn):
    alice = spawn("alice", "--no-typing")
    bob = spawn("bob")
    _introduced(alice, bob)
    alice.send("/typing")
    alice.send("a message, so we know the line got through")
    bob.wait_delivered(1)
    bob.drain(1.0)
    assert not [e for e in bob.events if e["event"] == "typing"]


def test_static_peers_without_discovery(spawn):
    alice = spawn("alice", "--no-discovery")
    bob = spawn("bob", "--no-discovery", "--peer", alice.address)
    bob.send("hello by address")
    assert alice.wait_delivered(1)[0]["text"] == "hello by address"
    alice.send("and back")  # alice learned bob's address from his datagram
    assert bob.wait_delivered(2)[1]["text"] == "and back"


def test_a_peer_that_leaves_is_noticed(spawn):
    alice = spawn("alice")
    bob = spawn("bob")
    _introduced(alice, bob)
    bob.stop()  # /quit unregisters its mDNS service
    left = alice.wait_for(lambda e: e["event"] == "peer_left", 15)
    assert left["peer_id"] == bob.peer_id and left["nick"] == "bob"


def test_a_peer_that_vanishes_is_dropped_after_its_silence(spawn):
    """No goodbye, no mDNS: a crashed peer is dropped once it has been silent
    for 45 s, while a quiet but running peer stays (its keep-alive syncs)."""
    alice = spawn("alice", "--no-discovery")
    bob = spawn("bob", "--no-discovery", "--peer", alice.address)
    carol = spawn("carol", "--no-discovery", "--peer", alice.address)
    bob.send("bob was here")
    carol.send("carol was here")
    alice.wait_delivered(2)
    for peer in (bob, carol):
        alice.wait_for(lambda e, p=peer: e["event"] == "peer_joined" and e["peer_id"] == p.peer_id)
    bob.kill9()
    killed = time.monotonic()
    left = alice.wait_for(lambda e: e["event"] == "peer_left", timeout=80)
    silent_for = time.monotonic() - killed
    assert left["peer_id"] == bob.peer_id
    assert 20 < silent_for < 80, silent_for  # not at once: nothing said it left
    alice.drain(10.0)  # carol said nothing for a minute now, but her engine keeps syncing
    assert not [e for e in alice.events if e["event"] == "peer_left" and e["peer_id"] == carol.peer_id]


def test_nick_and_channels_are_announced_and_remembered(spawn, tmp_path):
    alice = spawn("alice")
    bob = spawn("bob")
    _introduced(alice, bob)
    alice.send("/nick alicia")
    alice.send("/join #random")
    updated = bob.wait_for(lambda e: e["event"] == "peer_updated" and e["nick"] == "alicia"
                           and "random" in e["channels"], 15)
    assert updated["peer_id"] == alice.peer_id
    alice.send("hello random")
    alice.wait_delivered(1, channel="random")
    alice.stop()
    alice.start()  # no --nick, no --channel: the data directory remembers
    assert alice.ready["nick"] == "alice"  # --nick on the command line wins
    assert set(alice.ready["channels"]) == {"general", "random"}


def test_fetch_requests_are_answered_within_a_budget(spawn, lan):
    """A fetch for stored messages gets their original datagrams back, but no
    address can draw more than the per-second budget."""
    import socket

    from chat_app.crypto import Identity, Kind, KnownKeys, check_sds, open_envelope, seal
    from chat_app.net.frames import encode_fetch

    asker = Identity.generate()
    alice = spawn("alice", "--no-discovery")
    for i in range(3):
        alice.send(f"stored {i}")
    ids = [e["message_id"] for e in alice.wait_delivered(3)]
    sock = lan.host("asker").socket()
    sock.settimeout(2)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)  # a batch of asks is answered in one burst
    sock.bind(("0.0.0.0", 0))
    request = seal(asker, Kind.FETCH, encode_fetch("general", ids))
    sock.sendto(request, (alice.host.address, alice.port))
    got = set()
    for _ in range(3):  # alice's own envelopes, which verify for anyone
        got.add(check_sds(open_envelope(sock.recv(65_535), KnownKeys())).msg.message_id)
    assert got == set(ids)
    for _ in range(200):  # 600 asks in well under a second; the budget is 128 a second
        sock.sendto(request, (alice.host.address, alice.port))
    answers = 0
    try:
        while True:
            sock.recv(65_535)
            answers += 1
    except TimeoutError:
        pass
    sock.close()
    assert 100 <= answers <= 128 * 2  # capped (the burst may straddle a second boundary)


def test_a_reader_that_stops_reading_the_events_does_not_stop_the_chat(spawn):
    """Nobody reads alice's output while bob says 600 long lines: her pipe
    fills (about 64 KB, some 150 events), yet every message reaches her
    database; once read again, her events all come, in order."""
    alice, bob = spawn("alice"), spawn("bob")
    _introduced(alice, bob)
    alice.reading.clear()
    for i in range(600):
        bob.send(f"{i:03d} " + "x" * 300)
    bob.wait_delivered(600, timeout=60)
    deadline = time.monotonic() + 60
    while len(log_order(alice)) < 600 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert len(log_order(alice)) == 600
    alice.reading.set()
    texts = [e["text"][:3] for e in alice.wait_delivered(600, timeout=60)]
    assert texts == [f"{i:03d}" for i in range(600)]



def test_quitting_while_streams_wait_writes_no_traceback(spawn, lan):
    """A TCP stream that sends nothing waits up to 30 s for its first frame,
    and a file stream up to 30 s for its next request; quitting meanwhile
    cancels those waits, which is no error."""
    import socket

    from chat_app.files.wire import encode_request
    from chat_app.net.tcp import frame

    alice = spawn("alice")
    mallory = lan.host("mallory")
    streams = [mallory.socket(kind=socket.SOCK_STREAM) for _ in range(3)]
    for sock in streams:
        sock.connect((alice.host.address, alice.port))
    streams[0].sendall(frame(encode_request("ab" * 32, None)))
    assert streams[0].recv(4096)  # "not held here"; it waits for the next request
    time.sleep(0.5)  # the others are accepted: each waits for its first frame
    assert alice.stop() == 0
    for sock in streams:
        sock.close()
    assert alice.stderr_path.read_text().strip() == ""
