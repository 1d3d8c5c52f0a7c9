"""MVDS payloads on the wire: the published ``vac.mvds`` protobuf, message
ids as the reference implementation computes them, and decoding that never
trusts the network (anything malformed raises ``RemoteProtocolError`` with a
one-line reason, which the engine counts and reports)."""

from __future__ import annotations

import hashlib

from google.protobuf.message import DecodeError

from proto.mvds_pb2 import Message, Payload

from .config import Config
from .errors import RemoteProtocolError

__all__ = ["ID_BYTES", "Message", "Payload", "decode", "message_id"]

ID_BYTES = 32
_INT64 = (1 << 64) - 1


def message_id(group_id: bytes, timestamp: int, body: bytes) -> bytes:
    """SHA-256("MESSAGE_ID" || group_id || timestamp || body), the timestamp
    as 8 bytes little-endian (two's complement, as Go's uint64(int64) cast
    gives): the concatenation the reference implementation hashes."""
    stamp = (timestamp & _INT64).to_bytes(8, "little")
    return hashlib.sha256(b"MESSAGE_ID" + group_id + stamp + body).digest()


def decode(data: bytes, config: Config) -> Payload:
    """Parse and check one payload from the network."""
    if len(data) > config.max_payload_bytes:
        raise RemoteProtocolError("oversized", f"payload of {len(data)} bytes")
    try:
        payload = Payload.FromString(data)
    except (DecodeError, ValueError) as exc:
        raise RemoteProtocolError("malformed", f"not an MVDS payload ({exc})".replace("\n", " ")) from None
    for name in ("acks", "offers", "requests"):
        for mid in getattr(payload, name):
            if len(mid) != ID_BYTES:
                raise RemoteProtocolError("bad_id", f"{name[:-1]} id of {len(mid)} bytes, not {ID_BYTES}")
    for msg in payload.messages:
        if not 0 < len(msg.group_id) <= config.max_group_id_bytes:
            raise RemoteProtocolError("bad_group", f"group id of {len(msg.group_id)} bytes")
        if msg.timestamp < 0:
            raise RemoteProtocolError("clock", f"negative timestamp {msg.timestamp}")
        if not msg.body:
            raise RemoteProtocolError("empty_body", "a message without a body")
        if len(msg.body) > config.max_body_bytes:
            raise RemoteProtocolError("oversized", f"message body of {len(msg.body)} bytes")
    return payload
