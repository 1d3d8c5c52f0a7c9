"""Where a datagram goes, decided once, by its type tag.

The first byte says what a datagram is: 0x00 opens an sds-chat control frame
(see ``chat_app.net.frames``), anything else is an SDS protobuf. An SDS
message reaches routing parsed and checked once (``check_sds`` at the gate:
every field, the id's derivation, the signer); routing reads its payload,
once: a chat message (one with a Lamport timestamp and content) must carry
a payload that decodes into valid fields, or it is refused before any
engine sees it. What comes out, ``SdsDatagram``, is the one value later
stages take: the checked message for the engine
(``Channel.receive_message``), its channel, its sender, its payload.
"""

from __future__ import annotations

from dataclasses import dataclass

from chat_app.net.frames import FETCH, decode_fetch
from chat_app.payload import EPHEMERAL_KINDS, Payload, PayloadError
from proto.sds_pb2 import SdsMessage
from sync.sds.wire import Checked


@dataclass(frozen=True, slots=True)
class SdsDatagram:
    parsed: Checked
    """The SDS message, parsed and checked, with a chat message's payload as
    ``decoded``: what the engine takes (``Channel.receive_message``), and
    hands back with the message when it is delivered."""
    channel: str
    sender_id: str
    """Read from the protobuf once, here: each read of a field makes a new string."""

    @property
    def payload(self) -> Payload | None:
        """A chat message's payload, decoded once; None for sync and ephemeral messages."""
        return self.parsed.decoded

    @property
    def data(self) -> bytes:
        return self.parsed.data

    @property
    def message(self) -> SdsMessage:
        return self.parsed.msg

    @property
    def chat(self) -> bool:
        """A chat message (Lamport timestamp and a valid payload), not sync or ephemeral."""
        return self.payload is not None

    @property
    def seq(self) -> int:
        """A chat message's per-author sequence number, from its payload (0: none)."""
        return self.payload.seq if self.payload is not None else 0


@dataclass(frozen=True, slots=True)
class FetchRequest:
    channel: str
    message_ids: list[str]


@dataclass(frozen=True, slots=True)
class Refused:
    kind: str     # "malformed" or "payload"
    reason: str


def route_control(data: bytes) -> FetchRequest | Refused:
    """Where a control frame (``data`` opens with 0x00) goes."""
    if data[1:2] == bytes((FETCH,)):
        fetch = decode_fetch(data)
        if fetch is not None:
            return FetchRequest(*fetch)
        return Refused("malformed", "fetch request is not a CBOR [tag, channel, ids]")
    return Refused("malformed", f"unknown control frame type {data[1:2].hex() or 'none'}")


def route_sds(parsed: Checked) -> SdsDatagram | Refused:
    """A checked SDS message, with its payload read if it is a chat message."""
    msg = parsed.msg
    channel, sender_id, content = msg.channel_id, msg.sender_id, msg.content
    if not (content and msg.HasField("lamport_timestamp")):
        return SdsDatagram(parsed, channel, sender_id)  # sync or ephemeral: its payload is the engine's events'
    try:
        payload = Payload.decode(content)
    except PayloadError as exc:
        return Refused("payload", str(exc))
    if payload.kind in EPHEMERAL_KINDS:
        return Refused("payload", f"a {payload.kind!r} payload cannot be a chat message")
    # built directly: ``dataclasses.replace`` reads every field's definition, for each message
    checked = Checked(msg, parsed.data, parsed.derivation, parsed.history, parsed.config, payload)
    return SdsDatagram(checked, channel, sender_id)
