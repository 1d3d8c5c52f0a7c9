"""SDS messages on the wire: the published protobuf, and decoding.

Decoding never trusts the network: every length is bounded by ``Config``,
every field and the message id are checked (``validate``), and anything
malformed raises ``RemoteProtocolError`` with a one-line reason, which
``Channel.receive`` counts and reports instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from proto.sds_pb2 import HistoryEntry as PbHistoryEntry
from proto.sds_pb2 import SdsMessage

from .config import Config
from .errors import RemoteProtocolError
from .events import HistoryEntry
from .ids import compute_message_id, hash64
from .validate import check

__all__ = ["Checked", "SdsMessage", "check_clock", "check_message", "check_size", "checked", "compute_message_id",
           "decode", "entry_from_pb", "entry_to_pb", "hash64", "parse"]


@dataclass(frozen=True, slots=True)
class Checked:
    """One datagram, parsed and checked once (``checked``): what
    ``Channel.receive_message`` takes, and what a router reads the channel,
    the sender and the id's derivation from, so none of it is done twice."""

    msg: SdsMessage
    data: bytes
    """The datagram itself: what is stored and passed on, byte for byte."""
    derivation: str
    """Which derivation the message id was found to be (``validate.OURS``...)."""
    history: tuple[str, ...]
    """The ids its causal history names, in order, as the check read them:
    the engine reads them from here, never from the protobuf again."""
    config: Config
    """The bounds it was checked against: an engine with others checks it again."""
    decoded: object = None
    """What the caller made of the content (an application's payload, read once
    to refuse a bad one): handed back with the message when it is delivered
    (``Delivered.decoded``, the retrieval hint), so it is not read again."""


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
    return checked(data, config).msg


def checked(data: bytes, config: Config) -> Checked:
    """Parse and validate one datagram: its size, every field, the id (hashed
    once). Raises ``RemoteProtocolError``."""
    msg = parse(data, config)
    return Checked(msg, data, *check_message(msg, config), config)


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


def check_message(msg: SdsMessage, config: Config) -> tuple[str, tuple[str, ...]]:
    """Every length bounded by ``config``, every field and the id checked;
    which derivation the id is, and the ids its causal history names."""
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
    return check(msg, config.max_hint_bytes)


def check_clock(msg: SdsMessage, config: Config, now: int, clock: Callable[[], int]) -> None:
    """A Lamport timestamp not too far ahead of ``now`` and of our ``clock()``:
    the one check that depends on the receiver, so it is the engine's, on
    receipt. (That it fits 63 bits is the message's own: ``validate``.) The
    clock is read only for a timestamp past ``now``'s bound - rarely: it is
    a look into the log."""
    if not msg.HasField("lamport_timestamp"):
        return
    lamport, ahead = msg.lamport_timestamp, config.max_future_ms
    if lamport > now + ahead and lamport > clock() + ahead:
        raise RemoteProtocolError("clock", f"Lamport timestamp {lamport} is too far ahead")
