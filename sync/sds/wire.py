"""SDS messages on the wire: the published protobuf, and decoding.

Decoding never trusts the network: every length is bounded by ``Config``,
every field and the message id are checked (``validate``), and anything
malformed raises ``RemoteProtocolError`` with a one-line reason, which
``Channel.receive`` counts and reports instead of raising.
"""

from __future__ import annotations

from google.protobuf.message import DecodeError

from proto.sds_pb2 import HistoryEntry as PbHistoryEntry
from proto.sds_pb2 import SdsMessage

from .config import Config
from .errors import RemoteProtocolError
from .events import HistoryEntry
from .ids import compute_message_id, hash64
from .validate import check

__all__ = ["SdsMessage", "check_message", "check_size", "compute_message_id", "decode", "entry_from_pb", "entry_to_pb",
           "hash64", "parse"]


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
    msg = parse(data, config)
    check_message(msg, config)
    return msg


def parse(data: bytes, config: Config) -> SdsMessage:
    """The protobuf of one datagram, not yet validated (``check_message``)."""
    check_size(data, config)
    msg = SdsMessage()
    try:
        msg.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise RemoteProtocolError("malformed", f"not an SDS message ({exc.__class__.__name__}: {exc})") from None
    return msg


def check_size(data: bytes, config: Config) -> None:
    if len(data) > config.max_datagram_bytes:
        raise RemoteProtocolError("oversized", f"datagram of {len(data)} bytes exceeds {config.max_datagram_bytes}")


def check_message(msg: SdsMessage, config: Config) -> None:
    """Every length bounded by ``config``, every field and the id checked."""
    limit = config.max_id_length
    for name in ("sender_id", "message_id", "channel_id"):
        value = getattr(msg, name)
        if not value:
            raise RemoteProtocolError("malformed", f"{name} is empty")
        if len(value) > limit:
            raise RemoteProtocolError("malformed", f"{name} longer than {limit} characters")
    for name in ("causal_history", "repair_request"):  # what each entry holds: ``check``
        entries = getattr(msg, name)
        if len(entries) > config.max_entries:
            raise RemoteProtocolError("malformed", f"{name} has {len(entries)} entries, over {config.max_entries}")
    check(msg, config.max_hint_bytes)
    return msg


def check_received(msg: SdsMessage, data: bytes, config: Config, now: int, clock: int) -> None:
    """``msg``, parsed from ``data``, as a receiver checks it: its size, its
    fields and id, and a Lamport timestamp not too far ahead of ``now`` and
    of our ``clock``."""
    check_size(data, config)
    check_message(msg, config)
    if msg.HasField("lamport_timestamp") and msg.lamport_timestamp > max(now, clock) + config.max_future_ms:
        raise RemoteProtocolError("clock", f"Lamport timestamp {msg.lamport_timestamp} is too far ahead")
