"""The wire format is the published SDS protobuf, byte for byte."""

import pathlib
import subprocess
import sys

from proto.sds_pb2 import HistoryEntry, SdsMessage

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_generated_module_matches_proto(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT / 'proto'}", f"--python_out={tmp_path}",
         str(ROOT / "proto" / "sds.proto")],
        check=True,
    )
    assert (tmp_path / "sds_pb2.py").read_bytes() == (ROOT / "proto" / "sds_pb2.py").read_bytes(), (
        "proto/sds_pb2.py is stale: run `make proto` and commit the result"
    )


def test_published_field_numbers_and_types():
    msg = {f.name: (f.number, f.type) for f in SdsMessage.DESCRIPTOR.fields}
    F = SdsMessage.DESCRIPTOR.fields_by_name["sender_id"]
    assert msg == {
        "sender_id": (1, F.TYPE_STRING),
        "message_id": (2, F.TYPE_STRING),
        "channel_id": (3, F.TYPE_STRING),
        "lamport_timestamp": (10, F.TYPE_UINT64),
        "causal_history": (11, F.TYPE_MESSAGE),
        "bloom_filter": (12, F.TYPE_BYTES),
        "repair_request": (13, F.TYPE_MESSAGE),
        "content": (20, F.TYPE_BYTES),
    }
    entry = {f.name: (f.number, f.type) for f in HistoryEntry.DESCRIPTOR.fields}
    assert entry == {
        "message_id": (1, F.TYPE_STRING),
        "retrieval_hint": (2, F.TYPE_BYTES),
        "sender_id": (3, F.TYPE_STRING),
    }


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, wire_type: int, payload: bytes) -> bytes:
    key = _varint(number << 3 | wire_type)
    return key + (payload if wire_type == 0 else _varint(len(payload)) + payload)


def test_decodes_bytes_written_by_hand_from_the_spec():
    """Another implementation's encoder, emulated field by field."""
    lamport = 1_732_000_000_123  # milliseconds: does not fit the old int32
    entry = _field(1, 2, b"m0") + _field(2, 2, b"hint") + _field(3, 2, b"bob")
    data = (
        _field(1, 2, b"alice") + _field(2, 2, b"m1") + _field(3, 2, b"general")
        + _field(10, 0, _varint(lamport)) + _field(11, 2, entry)
        + _field(12, 2, b"\x00\x01") + _field(13, 2, _field(1, 2, b"m9")) + _field(20, 2, b"hi")
    )
    msg = SdsMessage.FromString(data)
    assert (msg.sender_id, msg.message_id, msg.channel_id, msg.lamport_timestamp) == ("alice", "m1", "general", lamport)
    assert (msg.causal_history[0].message_id, msg.causal_history[0].retrieval_hint,
            msg.causal_history[0].sender_id) == ("m0", b"hint", "bob")
    assert msg.repair_request[0].message_id == "m9" and msg.content == b"hi"
    # and our encoder produces exactly those bytes (fields in number order)
    assert msg.SerializeToString() == data


# ---------------------------------------------------------------- MVDS


def test_generated_mvds_module_matches_proto(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT / 'proto'}", f"--python_out={tmp_path}",
         str(ROOT / "proto" / "mvds.proto")],
        check=True,
    )
    assert (tmp_path / "mvds_pb2.py").read_bytes() == (ROOT / "proto" / "mvds_pb2.py").read_bytes(), (
        "proto/mvds_pb2.py is stale: regenerate it with grpc_tools.protoc and commit the result"
    )


def test_mvds_published_field_numbers_and_types():
    from proto.mvds_pb2 import Message, Payload

    F = Payload.DESCRIPTOR.fields_by_name["acks"]
    assert Payload.DESCRIPTOR.full_name == "vac.mvds.Payload"
    assert {f.name: (f.number, f.type, f.is_repeated) for f in Payload.DESCRIPTOR.fields} == {
        "acks": (1, F.TYPE_BYTES, True),
        "offers": (2, F.TYPE_BYTES, True),
        "requests": (3, F.TYPE_BYTES, True),
        "messages": (4, F.TYPE_MESSAGE, True),
    }
    assert {f.name: (f.number, f.type) for f in Message.DESCRIPTOR.fields} == {
        "group_id": (1, F.TYPE_BYTES),
        "timestamp": (2, F.TYPE_INT64),
        "body": (3, F.TYPE_BYTES),
    }


def test_mvds_decodes_bytes_written_by_hand_from_the_spec():
    """A payload as another MVDS implementation writes it, field by field."""
    from proto.mvds_pb2 import Payload

    ack, offer, request = b"\x01" * 32, b"\x02" * 32, b"\x03" * 32
    stamp = 1_732_000_000_123
    message = _field(1, 2, b"g" * 32) + _field(2, 0, _varint(stamp)) + _field(3, 2, b"hello")
    old = _field(2, 0, _varint(-1 & 0xFFFF_FFFF_FFFF_FFFF))  # int64 -1: ten-byte two's complement varint
    data = (_field(1, 2, ack) + _field(2, 2, offer) + _field(3, 2, request)
            + _field(4, 2, message) + _field(4, 2, old))
    payload = Payload.FromString(data)
    assert list(payload.acks) == [ack] and list(payload.offers) == [offer] and list(payload.requests) == [request]
    first, second = payload.messages
    assert (first.group_id, first.timestamp, first.body) == (b"g" * 32, stamp, b"hello")
    assert (second.group_id, second.timestamp, second.body) == (b"", -1, b"")
    assert payload.SerializeToString() == data
