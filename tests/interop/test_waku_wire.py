"""The SDS protobuf as @waku/sds writes and reads it, against ours."""

from __future__ import annotations

import hashlib
import socket

import pytest

from proto.sds_pb2 import HistoryEntry, SdsMessage
from sync.sds import Config, EphemeralReceived, Rejected
from sync.sds.bloom import RollingBloom
from sync.sds.dialects import read_filter
from sync.sds.waku_bloom import WakuBloom
from sync.sds.wire import decode

from .harness import b64decode, b64encode


def _ours(bloom: bytes) -> SdsMessage:
    msg = SdsMessage(
        sender_id="ours-py", message_id="ab" * 16, channel_id="general",
        lamport_timestamp=1_795_240_417_122_001, bloom_filter=bloom, content="héllo".encode(),
    )
    msg.causal_history.append(HistoryEntry(message_id="cd" * 16, retrieval_hint=b"\x00hint", sender_id="bob"))
    msg.causal_history.append(HistoryEntry(message_id="ef" * 32))
    return msg


def test_the_package_decodes_our_message_field_for_field(waku):
    msg = _ours(WakuBloom(["x"]).to_bytes())
    got = waku().ask("decode", "decoded", data=b64encode(msg.SerializeToString()))
    assert got["id"] == msg.message_id and got["sender"] == "ours-py" and got["channel"] == "general"
    assert int(got["lamport"]) == msg.lamport_timestamp  # uint64, beyond 2^53 too
    assert got["history"] == [{"id": "cd" * 16, "sender": "bob"}, {"id": "ef" * 32, "sender": None}]
    assert got["filter_bytes"] == 18_752
    assert b64decode(got["content"]) == "héllo".encode()


def test_we_decode_what_the_package_sends_over_udp(waku):
    peer = waku()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(10)
    try:
        peer.command("peer", port=sock.getsockname()[1])
        first = peer.ask("send", "sent", text="first")["id"]
        one = decode(sock.recv(65_535), Config())
        second = peer.ask("send", "sent", text="second")["id"]
        two = decode(sock.recv(65_535), Config())
    finally:
        sock.close()
    # content ids are the hex SHA-256 of the content
    assert (one.message_id, two.message_id) == (first, second) == (
        hashlib.sha256(b"first").hexdigest(), hashlib.sha256(b"second").hexdigest())
    assert one.sender_id == "waku-js" and one.channel_id == "general" and one.content == b"first"
    assert two.HasField("lamport_timestamp") and two.lamport_timestamp > one.lamport_timestamp
    assert [e.message_id for e in two.causal_history] == [first]
    assert two.causal_history[0].sender_id == "waku-js"
    filt = read_filter(two.bloom_filter)  # its own ids enter its filter once sent
    assert isinstance(filt, WakuBloom) and first in filt and second not in filt


def test_our_compact_filter_makes_the_package_drop_the_message(waku):
    """The failure the dialects fix: same message, two filters."""
    peer = waku()
    compact = RollingBloom(500, 0.01).to_bytes()
    for bloom, delivered in ((compact, False), (WakuBloom().to_bytes(), True)):
        start = len(peer.events)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        msg = _ours(bloom)
        msg.ClearField("causal_history")
        sock.sendto(msg.SerializeToString(), ("127.0.0.1", peer.port))
        sock.close()
        outcome = peer.wait(lambda e: e["event"] in ("sds:in:message-delivered", "sds:error-task"), 10, since=start)
        assert (outcome["event"] == "sds:in:message-delivered") is delivered, outcome


def test_its_ephemeral_messages_reach_us(conversation):
    talk = conversation()
    talk.peer.ask("ephemeral", "sent_ephemeral", text="js is typing")
    talk.pump(until=lambda: talk.of(EphemeralReceived), timeout=10)
    (event,) = talk.of(EphemeralReceived)
    assert (event.sender_id, event.content) == ("waku-js", b"js is typing")
    assert list(talk.channel.log) == []


@pytest.mark.slow
def test_its_messages_with_a_full_history_are_taken_whole(conversation):
    """Its causal history is its last 200 messages: some 34 KB a datagram,
    over our old limit of 64 entries. Every one is delivered, none refused."""
    talk = conversation()
    for i in range(201):  # one at a time: a burst of 34 KB datagrams overflows a socket buffer
        talk.peer.command("send", text=f"js message {i}")
        talk.pump(until=lambda n=i + 1: len(talk.channel.log) == n, timeout=10)
    last = SdsMessage.FromString(talk.received_datagrams[-1])
    assert len(last.causal_history) == 200 and len(last.bloom_filter) == 18_752
    assert len(talk.received_datagrams[-1]) > 30_000
    assert talk.of(Rejected) == [] and talk.channel.waiting == 0
