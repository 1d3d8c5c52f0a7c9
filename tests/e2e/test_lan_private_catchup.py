"""What an outsider capturing the switch sees of a private channel's
catch-up over TCP: the replication streams between two members, and
between members and a blind store, carry no author id, nick, sequence
number or channel name - only the channel's tag, blind ids (hashes of the
datagrams an outsider captures anyway) and those encrypted datagrams."""

from __future__ import annotations

import socket
import struct
import time

import cbor2
import pytest

from chat_app.crypto import ChannelKey
from sync.replication import log_id

from .harness import log_order
from .test_headless import _introduced
from .test_lan_crypto import PASS, ROOM, Capture, _blind_rows

pytestmark = pytest.mark.slow

HAVE = 10
Stream = tuple[str, int, str, int]  # source address and port, destination address and port


def tcp_segment(frame: bytes) -> tuple[Stream, int, bytes] | None:
    """(stream, sequence number, payload) of an Ethernet frame holding TCP; None otherwise."""
    ethertype = frame[12:14]
    if ethertype == b"\x08\x00" and frame[23] == 6:
        ip, family = frame[14:14 + struct.unpack(">H", frame[16:18])[0]], socket.AF_INET
        header, src, dst = (ip[0] & 0x0F) * 4, ip[12:16], ip[16:20]
    elif ethertype == b"\x86\xdd" and frame[20] == 6:
        ip, family = frame[14:14 + 40 + struct.unpack(">H", frame[18:20])[0]], socket.AF_INET6
        header, src, dst = 40, ip[8:24], ip[24:40]
    else:
        return None
    tcp = ip[header:]
    sport, dport, seq = struct.unpack(">HHI", tcp[:8])
    stream = (socket.inet_ntop(family, src), sport, socket.inet_ntop(family, dst), dport)
    return stream, seq, tcp[(tcp[12] >> 4) * 4:]


def tcp_streams(frames: list[bytes]) -> dict[Stream, bytes]:
    """Each TCP stream's bytes, in order (the switch sees a frame on more than one port: kept once)."""
    segments: dict[Stream, dict[int, bytes]] = {}
    for segment in filter(None, map(tcp_segment, frames)):
        stream, seq, payload = segment
        if payload:
            segments.setdefault(stream, {})[seq] = payload
    streams = {}
    for stream, parts in segments.items():
        first = min(parts, key=lambda s: (s - min(parts)) % (1 << 32))
        data, at = b"", first
        for seq in sorted(parts, key=lambda s: (s - first) % (1 << 32)):
            if (seq - at) % (1 << 32) > 0:
                break  # a segment the capture missed: the rest cannot be framed
            data += parts[seq][(at - seq) % (1 << 32):]
            at = (seq + len(parts[seq])) % (1 << 32)
        streams[stream] = data
    return streams


def replication_messages(stream: bytes) -> list[list]:
    """The CBOR messages of one replication stream (u32 length, then the message)."""
    messages = []
    while len(stream) >= 4:
        (length,) = struct.unpack(">I", stream[:4])
        if len(stream) < 4 + length:
            break
        messages.append(cbor2.loads(stream[4:4 + length]))
        stream = stream[4 + length:]
    return messages


def items(message: list) -> list[list]:
    """Every [public_key, log_id, seq_num] a replication message carries."""
    def is_item(v) -> bool:
        return isinstance(v, list) and len(v) == 3 and isinstance(v[0], str) and isinstance(v[1], int)
    found = [v for v in message[1:] if is_item(v)]
    for v in message[1:]:
        if isinstance(v, list) and not is_item(v):
            found += [i for i in v if is_item(i)]
    return found


def assert_reveals_nothing(streams: dict[Stream, bytes], peers, texts: list[str], tag: bytes) -> int:
    """No author id, nick, text or channel name in any stream, and nothing
    but blind ids at height 1 in the replication messages; returns how many
    entries the streams carried."""
    secrets = [ROOM.encode(), *(t.encode() for t in texts)]
    for peer in peers:
        secrets += [peer.nick.encode(), peer.peer_id.encode(), bytes.fromhex(peer.peer_id)]
    for stream, data in streams.items():
        for secret in secrets:
            assert secret not in data, (secret, stream)
    datagram_set, entries = "=" + tag.hex(), 0
    for data in streams.values():
        for message in replication_messages(data):
            assert message[0] != HAVE, "a Have lists the authors and their heights"
            if message[0] == 1:  # SyncRequest: the channels of a session
                assert message[3] == [datagram_set], message
            for _, log, seq in items(message):
                assert log in (0, log_id(datagram_set)) and seq in (0, 1), message  # blind ids, or bounds
            if message[0] == 2:
                entries += 1
                assert message[2][:2] == bytes((1, 0x50)) and message[2][2:18] == tag, "an encrypted datagram"
    return entries


def test_members_catching_up_a_private_channel_show_an_outsider_nothing(spawn, lan):
    tag = ChannelKey.from_passphrase(ROOM, PASS).tag
    alice = spawn("alice", "--live", "--channel", f"{ROOM}:{PASS}")
    said = [f"before bob came {i}" for i in range(5)]
    for text in said:
        alice.send(text)
    alice.wait_delivered(5, channel=ROOM)
    capture = Capture(lan.switch)
    bob = spawn("bob", "--live", "--channel", f"{ROOM}:{PASS}")
    _introduced(alice, bob)
    assert [e["text"] for e in bob.wait_delivered(5, channel=ROOM, timeout=60)] == said
    bob.wait_for(lambda e: e["event"] == "catchup" and e["state"] == "live", 30)
    alice.send("pushed down the live link")
    said.append("pushed down the live link")
    bob.wait_delivered(6, channel=ROOM)
    time.sleep(1)
    capture.stop()
    streams = tcp_streams(capture.frames)
    assert streams, "the capture saw the replication streams"
    assert assert_reveals_nothing(streams, (alice, bob), said, tag) >= 1
    for peer in (alice, bob):
        peer.stop()
    assert log_order(bob, ROOM) == log_order(alice, ROOM)


def test_a_blind_store_and_members_catching_up_show_an_outsider_nothing(spawn, lan):
    tag = ChannelKey.from_passphrase(ROOM, PASS).tag
    alice = spawn("alice", "--channel", f"{ROOM}:{PASS}")
    said = [f"before any store {i}" for i in range(3)]
    for text in said:
        alice.send(text)
    alice.wait_delivered(3, channel=ROOM)
    capture = Capture(lan.switch)
    store = spawn("store", "serve", "--channel", f"~{tag.hex()}")  # heard none of it: catches up from alice
    deadline = time.monotonic() + 30
    while _blind_rows(store, tag) < 3 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _blind_rows(store, tag) == 3
    alice.stop()
    carol = spawn("carol", "--channel", f"{ROOM}:{PASS}")  # served by the store alone
    assert [e["text"] for e in carol.wait_delivered(3, channel=ROOM, timeout=60)] == said
    time.sleep(1)
    capture.stop()
    streams = tcp_streams(capture.frames)
    assert assert_reveals_nothing(streams, (alice, carol, store), said, tag) >= 3
