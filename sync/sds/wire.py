"""SDS messages on the wire: the published protobuf, ids, and validation.

Decoding never trusts the network: every length is bounded by ``Config`` and
anything malformed raises ``RemoteProtocolError`` with a one-line reason, which
``Channel.receive`` counts and reports instead of raising.
"""

from __future__ import annotations

from hashlib import sha256

from google.protobuf.message import DecodeError

from proto.sds_pb2 import HistoryEntry as PbHistoryEntry
from proto.sds_pb2 import SdsMessage

from .config import Config
from .errors import RemoteProtocolError
from .events import HistoryEntry

__all__ = ["SdsMessage", "compute_message_id", "decode", "entry_from_pb", "entry_to_pb", "hash64"]

MESSAGE_ID_HEX = 32
"""Message ids are the first 128 bits of a SHA-256, in hex."""


def _digest(*parts: bytes) -> bytes:
    h = sha256()
    for part in parts:
        h.update(len(part).to_bytes(4, "big"))
        h.update(part)
    return h.digest()


def compute_message_id(sender_id: str, channel_id: str, lamport: int | None, content: bytes) -> str:
    """Hash of sender, channel, Lamport timestamp and content.

    Hashing content alone would give two identical messages ("ok", "ok") one
    id, and the second would be dropped as a duplicate.
    """
    stamp = b"" if lamport is None else lamport.to_bytes(8, "big")
    return _digest(sender_id.encode(), channel_id.encode(), stamp, content).hex()[:MESSAGE_ID_HEX]


def hash64(*parts: str) -> int:
    """The SDS-R ``hash``: first 8 bytes of a SHA-256 over the length-prefixed
    UTF-8 parts, as an unsigned big-endian integer. Every participant of a
    channel must use the same function for response groups to agree."""
    return int.from_bytes(_digest(*(p.encode() for p in parts))[:8], "big")


def entry_to_pb(entry: HistoryEntry) -> PbHistoryEntry:
    pb = PbHistoryEntry(message_id=entry.message_id)
    if entry.retrieval_hint is not None:
        pb.retrieval_hint = entry.retrieval_hint
    if entry.sender_id is not None:
        pb.sender_id = entry.sender_id
    return pb


def entry_from_pb(pb: PbHistoryEntry) -> HistoryEntry:
    return HistoryEntry(
        pb.message_id,
        pb.retrieval_hint if pb.HasField("retrieval_hint") else None,
        pb.sender_id if pb.HasField("sender_id") else None,
    )


def decode(data: bytes, config: Config) -> SdsMessage:
    """Parse and validate one datagram."""
    if len(data) > config.max_datagram_bytes:
        raise RemoteProtocolError("oversized", f"datagram of {len(data)} bytes exceeds {config.max_datagram_bytes}")
    msg = SdsMessage()
    try:
        msg.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise RemoteProtocolError("malformed", f"not an SDS message ({exc.__class__.__name__}: {exc})") from None
    limit = config.max_id_length
    for name in ("sender_id", "message_id", "channel_id"):
        value = getattr(msg, name)
        if name != "channel_id" and not value:
            raise RemoteProtocolError("malformed", f"{name} is empty")
        if len(value) > limit:
            raise RemoteProtocolError("malformed", f"{name} longer than {limit} characters")
    for name in ("causal_history", "repair_request"):
        entries = getattr(msg, name)
        if len(entries) > config.max_entries:
            raise RemoteProtocolError("malformed", f"{name} has {len(entries)} entries, over {config.max_entries}")
        for entry in entries:
            if not entry.message_id or len(entry.message_id) > limit:
                raise RemoteProtocolError("malformed", f"{name} entry has a bad message_id")
            if len(entry.sender_id) > limit or len(entry.retrieval_hint) > config.max_hint_bytes:
                raise RemoteProtocolError("malformed", f"{name} entry is oversized")
    return msg
