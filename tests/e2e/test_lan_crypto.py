"""Attackers on the test LAN: a forger on a host of its own, and an outsider
who captures every frame on the switch and injects what it likes.

The capture is a packet socket in the switch's namespace, which sees every
frame on every port: more than a host on a real switched LAN sees, as if
the outsider had the switch's mirror port."""

from __future__ import annotations

import ctypes
import socket
import threading
import time

import pytest

from chat_app.crypto import Identity, Kind, seal
from chat_app.payload import Payload
from sync.sds import Channel

from .harness import log_order
from .test_headless import _introduced

pytestmark = pytest.mark.slow

CLONE_NEWNET = 0x40000000
ETH_P_ALL = 0x0003
SO_RCVBUFFORCE = 33  # Linux: SO_RCVBUF past rmem_max, for root (not in the socket module)
ROOM, PASS, OTHER = "operations-room", "correct horse battery staple", "another group entirely"


class Capture:
    """Every frame crossing the switch, collected on a thread until ``stop``."""

    def __init__(self, namespace: str) -> None:
        made: list = []

        def make() -> None:
            libc = ctypes.CDLL(None, use_errno=True)
            with open(f"/var/run/netns/{namespace}") as ns:
                libc.setns(ns.fileno(), CLONE_NEWNET)
            sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            # room for a burst (a file's chunks at full speed) while this thread is not scheduled:
            # a frame the kernel drops for want of it is one the capture never saw
            sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
            made.append(sock)

        thread = threading.Thread(target=make)
        thread.start()
        thread.join()
        self.sock = made[0]
        self.sock.settimeout(0.2)
        self.frames: list[bytes] = []
        self._running = True
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while self._running:
            try:
                self.frames.append(self.sock.recv(65_535))
            except TimeoutError:
                continue

    def stop(self) -> bytes:
        self._running = False
        self._thread.join()
        self.sock.close()
        return b"".join(self.frames)


def udp_payload(frame: bytes) -> tuple[str | None, bytes]:
    """(source address, UDP payload) of an Ethernet frame; (None, b"") if it is not UDP."""
    ethertype = frame[12:14]
    if ethertype == b"\x08\x00" and frame[23] == 17:
        start = 14 + (frame[14] & 0x0F) * 4
        return socket.inet_ntop(socket.AF_INET, frame[26:30]), frame[start + 8:]
    if ethertype == b"\x86\xdd" and frame[20] == 17:
        return socket.inet_ntop(socket.AF_INET6, frame[22:38]), frame[14 + 40 + 8:]
    return None, b""


def _texts(peer, channel: str) -> list[str]:
    return [e["text"] for e in peer.delivered(channel)]


def test_a_forger_on_another_host_sending_as_alice_is_rejected_and_nothing_is_stored(spawn, lan):
    alice, bob = spawn("alice"), spawn("bob")
    _introduced(alice, bob)
    alice.send("hello bob")
    bob.wait_delivered(1)
    forger = Identity.generate()
    as_alice = Channel("general", alice.peer_id, int(time.time() * 1000))
    as_alice.send(Payload("text", "alice", "send me the keys", seq=2, sent_at=0).encode(), int(time.time() * 1000))
    (out,) = as_alice.datagrams_to_send(0)
    sock = lan.host("forger").socket()
    sock.sendto(seal(forger, Kind.SDS, out.data), (bob.host.address, bob.port))
    sock.close()
    refusal = bob.wait_for(lambda e: e["event"] == "rejected", 10)
    assert refusal["kind"] == "impostor" and alice.peer_id in refusal["reason"]
    bob.drain(1)
    bob.stop()
    assert len(log_order(bob)) == 1 and _texts(bob, "general") == ["hello bob"]


def test_an_outsider_captures_nothing_readable_and_cannot_inject(spawn, lan):
    capture = Capture(lan.switch)
    alice = spawn("alice", "--channel", f"{ROOM}:{PASS}")
    bob = spawn("bob", "--channel", f"{ROOM}:{PASS}")
    eve = spawn("eve", "--channel", ROOM)  # the public channel of that name, on a host of its own
    _introduced(alice, bob, eve)
    alice.send("the launch is at noon")
    bob.wait_delivered(1, channel=ROOM)
    bob.send("noted, see you there")
    alice.wait_delivered(2, channel=ROOM)
    time.sleep(1)
    capture.stop()
    members = {h.address for h in (alice.host, bob.host)} | {a for h in (alice.host, bob.host)
                                                              for a in h.addresses6.values()}
    sent = [payload for source, payload in map(udp_payload, capture.frames) if source in members]
    private = [d for d in sent if d[:2] in (bytes((1, 0x50)), bytes((1, 0x51)))]  # messages; sync, typing
    assert len(private) >= 4, "the capture saw the members' private datagrams"
    for secret in (b"the launch is at noon", b"noted, see you there", ROOM.encode()):
        assert not any(secret in d for d in sent), secret  # anywhere, mDNS included
    for secret in (b"alice", b"bob", alice.peer_id.encode(), bytes.fromhex(alice.peer_id),
                   bytes.fromhex(bob.peer_id)):
        assert not any(secret in d for d in private), secret  # mDNS shows who runs sds-chat, not who speaks
    # eve replays what she captured, flips bits, and speaks in the channel under her own key
    datagrams = private[:20]
    injected = Channel(ROOM, Identity.generate().sender_id, 0)
    injected.send(Payload("text", "alice", "fake", seq=1, sent_at=0).encode(), 0)
    (out,) = injected.datagrams_to_send(0)
    sock = lan.hosts["eve"].socket()
    for data in (*datagrams, *(d[:-1] + bytes((d[-1] ^ 1,)) for d in datagrams), seal(Identity.generate(),
                                                                                  Kind.SDS, out.data)):
        sock.sendto(data, (bob.host.address, bob.port))
    sock.close()
    bob.wait_for(lambda e: e["event"] == "rejected" and e["kind"] == "undecryptable", 10)
    bob.drain(1)
    assert _texts(eve, ROOM) == []
    for peer in (alice, bob):
        peer.stop()
    assert _texts(bob, ROOM) == ["the launch is at noon", "noted, see you there"]
    assert len(log_order(bob, ROOM)) == 2 and log_order(bob, ROOM) == log_order(alice, ROOM)


def test_one_name_two_passphrases_never_see_each_other(spawn):
    ours = [spawn(nick, "--channel", f"{ROOM}:{PASS}") for nick in ("alice", "bob")]
    theirs = [spawn(nick, "--channel", f"{ROOM}:{OTHER}") for nick in ("carol", "dave")]
    _introduced(*ours, *theirs)
    ours[0].send("ours")
    theirs[0].send("theirs")
    ours[1].wait_delivered(1, channel=ROOM)
    theirs[1].wait_delivered(1, channel=ROOM)
    time.sleep(2)
    assert [_texts(p, ROOM) for p in ours] == [["ours"], ["ours"]]
    assert [_texts(p, ROOM) for p in theirs] == [["theirs"], ["theirs"]]


@pytest.mark.parametrize("protocol", ["", "+svs"], ids=["sds", "svs"])
def test_a_blind_store_relays_a_private_channel_to_a_late_member(spawn, protocol):
    from chat_app.crypto import ChannelKey

    tag = ChannelKey.from_passphrase(ROOM, PASS).tag.hex()  # what members announce; it reveals nothing
    store = spawn("store", "serve", "--channel", f"~{tag}")
    alice = spawn("alice", "--channel", f"{ROOM}{protocol}:{PASS}")
    _introduced(store, alice)
    for i in range(5):
        alice.send(f"before you came {i}")
    alice.wait_delivered(5, channel=ROOM)
    time.sleep(2)  # the store has them (it cannot say: it cannot read them)
    alice.stop()
    carol = spawn("carol", "--channel", f"{ROOM}{protocol}:{PASS}")
    got = carol.wait_delivered(5, channel=ROOM, timeout=60)
    assert [e["text"] for e in got] == [f"before you came {i}" for i in range(5)]
    store.stop()
    assert log_order(store, ROOM) == []  # the store holds ciphertext only: no message it could read
    assert log_order(carol, ROOM) == log_order(alice, ROOM)


def test_a_blind_store_restarted_without_the_tag_serves_the_whole_channel_to_a_late_member(spawn):
    from chat_app.crypto import ChannelKey

    tag = ChannelKey.from_passphrase(ROOM, PASS).tag.hex()
    store = spawn("store", "serve", "--channel", f"~{tag}")
    alice = spawn("alice", "--channel", f"{ROOM}:{PASS}")
    _introduced(store, alice)
    for i in range(3):
        alice.send(f"before the restart {i}")
    alice.wait_delivered(3, channel=ROOM)
    time.sleep(2)
    store.stop()
    store = spawn("store", "serve")  # same host and data directory, and no word of the tag
    alice.wait_for(lambda e: e["event"] in ("peer_joined", "peer_updated") and e["peer_id"] == store.peer_id
                   and ROOM in (e.get("channels") or ()), 30, fresh=True)  # it announces the channel (by tag) again
    for i in range(3):
        alice.send(f"after the restart {i}")
    alice.wait_delivered(6, channel=ROOM)
    time.sleep(2)
    alice.stop()
    carol = spawn("carol", "--channel", f"{ROOM}:{PASS}")
    got = carol.wait_delivered(6, channel=ROOM, timeout=60)
    assert [e["text"] for e in got] == [f"{when} the restart {i}" for when in ("before", "after") for i in range(3)]
    assert not [e for e in carol.events if e["event"] == "rejected"]
    store.stop()
    assert log_order(store, ROOM) == [] and log_order(carol, ROOM) == log_order(alice, ROOM)
    assert _blind_rows(store, bytes.fromhex(tag)) == 6  # the messages; the sync traffic passed


def _blind_rows(peer, tag: bytes) -> int:
    import sqlite3

    conn = sqlite3.connect(peer.data_dir / "sds-chat.sqlite3")
    try:
        return conn.execute("SELECT COUNT(*) FROM blind WHERE tag = ?", (tag,)).fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("protocol", ["", "+svs"], ids=["sds", "svs"])
def test_a_blind_store_started_after_the_talk_catches_up_over_replication(spawn, protocol):
    from chat_app.crypto import ChannelKey

    tag = ChannelKey.from_passphrase(ROOM, PASS).tag
    alice = spawn("alice", "--channel", f"{ROOM}{protocol}:{PASS}")
    bob = spawn("bob", "--channel", f"{ROOM}{protocol}:{PASS}")
    _introduced(alice, bob)
    for i in range(3):
        alice.send(f"before any store {i}")
    bob.wait_delivered(3, channel=ROOM)
    alice.stop()  # the author, who would resend her messages over UDP, is gone
    store = spawn("store", "serve", "--channel", f"~{tag.hex()}")  # heard none of it
    deadline = time.monotonic() + 30
    while _blind_rows(store, tag) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _blind_rows(store, tag) == 3  # reconciled with bob by datagram hash, over TCP
    bob.stop()
    carol = spawn("carol", "--channel", f"{ROOM}{protocol}:{PASS}")
    got = carol.wait_delivered(3, channel=ROOM, timeout=60)
    assert [e["text"] for e in got] == [f"before any store {i}" for i in range(3)]
    assert not [e for e in carol.events if e["event"] == "rejected"]
    store.stop()
    assert log_order(store, ROOM) == [] and log_order(carol, ROOM) == log_order(alice, ROOM)
