"""Where a datagram goes, decided once, by its type tag.

The first byte says what a datagram is: 0x00 opens an sds-chat control frame
(see ``chat_app.net.frames``), anything else is an SDS protobuf. The SDS
message is parsed here, once: the parsed message travels on to the engine
(``Channel.receive_message``) with its channel and sender; a
chat message (one with a Lamport timestamp and content) must carry a payload
that decodes into valid fields, or it is refused before any engine sees it.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import DecodeError

from chat_app.net.frames import CONTROL, FETCH, decode_fetch
from chat_app.payload import EPHEMERAL_KINDS, MAX_INT64, Payload, PayloadError
from proto.sds_pb2 import SdsMessage


@dataclass(frozen=True, slots=True)
class SdsDatagram:
    channel: str
    sender_id: str
    data: bytes
    chat: bool  # a chat message (Lamport timestamp and a valid payload), not sync or ephemeral
    message: SdsMessage  # ``data`` parsed: the engine takes it as it is (``Channel.receive_message``)
    seq: int = 0  # a chat message's per-author sequence number, from its payload


@dataclass(frozen=True, slots=True)
class FetchRequest:
    channel: str
    message_ids: list[str]


@dataclass(frozen=True, slots=True)
class Refused:
    kind: str     # "malformed" or "payload"
    reason: str


def route(data: bytes, msg: SdsMessage | None = None) -> SdsDatagram | FetchRequest | Refused:
    """Where ``data`` goes; ``msg`` is its SDS message if the caller parsed it already."""
    if data[:1] == bytes((CONTROL,)):
        if data[1:2] == bytes((FETCH,)):
            fetch = decode_fetch(data)
            if fetch is not None:
                return FetchRequest(*fetch)
            return Refused("malformed", "fetch request is not a CBOR [tag, channel, ids]")
        return Refused("malformed", f"unknown control frame type {data[1:2].hex() or 'none'}")
    if msg is None:
        try:
            msg = SdsMessage.FromString(data)
        except (DecodeError, ValueError, RuntimeError):
            return Refused("malformed", "not an SDS message")
    seq = 0
    if msg.HasField("lamport_timestamp"):
        if msg.lamport_timestamp > MAX_INT64:
            return Refused("malformed", "lamport timestamp does not fit a signed 64-bit integer")
        if msg.content:
            try:
                payload = Payload.decode(msg.content)
            except PayloadError as exc:
                return Refused("payload", str(exc))
            if payload.kind in EPHEMERAL_KINDS:
                return Refused("payload", f"a {payload.kind!r} payload cannot be a chat message")
            seq = payload.seq
    chat = msg.HasField("lamport_timestamp") and bool(msg.content)
    return SdsDatagram(msg.channel_id, msg.sender_id, data, chat, msg, seq)
