"""p2panda replication messages: CBOR arrays, exactly as specified.

    Announce      [0, version, timestamp, [schema_id, ...]]
    SyncRequest   [1, session_id, mode, [schema_id, ...]]        mode 0: log height, 1: set reconciliation
    EntryMessage  [2, session_id, entry bytes, operation bytes]        the spec's Entry
    SyncDone      [3, session_id, live_mode]
    Have          [10, session_id, [[public_key, log_id, seq_num], ...]]
    EmptySet      [20, session_id, can_respond]
    LowerBound    [21, session_id, [public_key, log_id, seq_num]]
    ItemPayload   [22, session_id, value, can_respond?, upper_bound?]  the spec's Payload
    EmptyPayload  [23, session_id, upper_bound]
    Done          [24, session_id, upper_bound]
    Fingerprint   [25, session_id, lift_type, upper_bound]
    Terminal      [26, session_id]

Mapping onto sds-chat: schema_id = channel id; public_key = SDS sender_id;
log_id = ``log_id(channel)``, a stable u64; seq_num = the author's
per-channel sequence number; an entry is the SDS message bytes (with an
empty operation).

Two of the spec's names are spelt out here, because the application already
uses them for other things: its ``Entry`` message is ``EntryMessage`` and its
``Payload`` (one item of a range) is ``ItemPayload`` (``chat_app.payload.Payload``
is a chat message's content). The wire is unchanged.

``decode`` never trusts its input: anything malformed raises
``ReplicationError`` with a one-line reason.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import cbor2

from sync.core.errors import ProtocolError, RemoteProtocolError

VERSION = 1
LOG_HEIGHT, SET_RECONCILIATION = 0, 1
MAX_SCHEMAS = 256
MAX_ITEMS = 1_000_000

Item = tuple[str, int, int]  # (public_key, log_id, seq_num)


class ReplicationError(RemoteProtocolError):
    """A peer sent something malformed or out of protocol. The message is
    the one-line reason alone: it ends the stream, so it needs no counter."""

    def __init__(self, detail: str) -> None:
        ProtocolError.__init__(self, detail)
        self.kind = "replication"
        self.detail = detail


class EntryRefused(ReplicationError):
    """One entry is refused (``kind`` names why, for counting). A ``fatal``
    refusal ends the stream; another drops the entry and the session goes on
    (a peer that cannot read what it relays may hold garbage)."""

    def __init__(self, kind: str, detail: str, *, fatal: bool = True) -> None:
        super().__init__(detail)
        self.kind = kind
        self.fatal = fatal


def log_id(channel: str) -> int:
    """The stable u64 log id of a channel's log (one per author per channel)."""
    return int.from_bytes(hashlib.sha256(b"sds-chat log\x00" + channel.encode()).digest()[:8], "big")


@dataclass(frozen=True)
class Announce:
    timestamp: int
    schemas: tuple[str, ...]
    version: int = VERSION
    TYPE = 0


@dataclass(frozen=True)
class SyncRequest:
    session_id: int
    mode: int
    schemas: tuple[str, ...]
    TYPE = 1


@dataclass(frozen=True)
class EntryMessage:
    session_id: int
    entry: bytes
    operation: bytes = b""
    TYPE = 2


@dataclass(frozen=True)
class SyncDone:
    session_id: int
    live_mode: bool
    TYPE = 3


@dataclass(frozen=True)
class Have:
    session_id: int
    log_heights: tuple[Item, ...]
    TYPE = 10


@dataclass(frozen=True)
class EmptySet:
    session_id: int
    can_respond: bool
    TYPE = 20


@dataclass(frozen=True)
class LowerBound:
    session_id: int
    value: Item
    TYPE = 21


@dataclass(frozen=True)
class ItemPayload:
    session_id: int
    value: Item
    can_respond: bool | None = None
    upper_bound: Item | None = None
    TYPE = 22


@dataclass(frozen=True)
class EmptyPayload:
    session_id: int
    upper_bound: Item
    TYPE = 23


@dataclass(frozen=True)
class Done:
    session_id: int
    upper_bound: Item
    TYPE = 24


@dataclass(frozen=True)
class Fingerprint:
    session_id: int
    lift_type: bytes
    upper_bound: Item
    TYPE = 25


@dataclass(frozen=True)
class Terminal:
    session_id: int
    TYPE = 26


Message = (Announce | SyncRequest | EntryMessage | SyncDone | Have | EmptySet | LowerBound | ItemPayload
           | EmptyPayload | Done | Fingerprint | Terminal)


def encode(msg: Message) -> bytes:
    t = msg.TYPE
    if isinstance(msg, Announce):
        body = [msg.version, msg.timestamp, list(msg.schemas)]
    elif isinstance(msg, SyncRequest):
        body = [msg.session_id, msg.mode, list(msg.schemas)]
    elif isinstance(msg, EntryMessage):
        body = [msg.session_id, msg.entry, msg.operation]
    elif isinstance(msg, SyncDone):
        body = [msg.session_id, msg.live_mode]
    elif isinstance(msg, Have):
        body = [msg.session_id, [list(i) for i in msg.log_heights]]
    elif isinstance(msg, EmptySet):
        body = [msg.session_id, msg.can_respond]
    elif isinstance(msg, LowerBound):
        body = [msg.session_id, list(msg.value)]
    elif isinstance(msg, ItemPayload):
        body = [msg.session_id, list(msg.value)]
        if msg.can_respond is not None:
            body.append(msg.can_respond)
            if msg.upper_bound is not None:
                body.append(list(msg.upper_bound))
    elif isinstance(msg, (EmptyPayload, Done)):
        body = [msg.session_id, list(msg.upper_bound)]
    elif isinstance(msg, Fingerprint):
        body = [msg.session_id, msg.lift_type, list(msg.upper_bound)]
    elif isinstance(msg, Terminal):
        body = [msg.session_id]
    else:
        raise TypeError(f"not a replication message: {msg!r}")
    return cbor2.dumps([t, *body])


def _u64(v, what: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 1 << 64:
        raise ReplicationError(f"{what} is not a u64")
    return v


def _bool(v, what: str) -> bool:
    if not isinstance(v, bool):
        raise ReplicationError(f"{what} is not a bool")
    return v


def _bytes(v, what: str) -> bytes:
    if not isinstance(v, bytes):
        raise ReplicationError(f"{what} is not bytes")
    return v


def _schemas(v) -> tuple[str, ...]:
    if not isinstance(v, list) or len(v) > MAX_SCHEMAS or not all(isinstance(s, str) for s in v):
        raise ReplicationError("schema ids are not a list of strings")
    return tuple(v)


def _item(v, what: str = "item") -> Item:
    if not isinstance(v, list) or len(v) != 3 or not isinstance(v[0], str):
        raise ReplicationError(f"{what} is not [public_key, log_id, seq_num]")
    return (v[0], _u64(v[1], f"{what} log_id"), _u64(v[2], f"{what} seq_num"))


def read_message(data: bytes) -> Message | ReplicationError:
    """``decode``, with why it failed as the value rather than raised: a
    frame read ahead of the connection (``Connection.take``) keeps its
    reason for the moment the connection would have read it."""
    try:
        return decode(data)
    except ReplicationError as exc:
        return exc


def decode(data: bytes) -> Message:
    try:
        value = cbor2.loads(data)
    except (cbor2.CBORDecodeError, ValueError, TypeError, OverflowError, RecursionError, EOFError) as exc:
        raise ReplicationError(f"not CBOR ({exc.__class__.__name__})") from None
    if not isinstance(value, list) or not value:
        raise ReplicationError("a message must be a non-empty CBOR array")
    t, args = value[0], value[1:]

    def arity(*counts: int) -> None:
        if len(args) not in counts:
            raise ReplicationError(f"message type {t} with {len(args)} fields")

    if t == 0:
        arity(3)
        return Announce(_u64(args[1], "timestamp"), _schemas(args[2]), _u64(args[0], "version"))
    sid = _u64(args[0], "session_id") if args else None
    if t == 1:
        arity(3)
        return SyncRequest(sid, _u64(args[1], "mode"), _schemas(args[2]))
    if t == 2:
        arity(3)
        return EntryMessage(sid, _bytes(args[1], "entry"), _bytes(args[2], "operation"))
    if t == 3:
        arity(2)
        return SyncDone(sid, _bool(args[1], "live_mode"))
    if t == 10:
        arity(2)
        if not isinstance(args[1], list) or len(args[1]) > MAX_ITEMS:
            raise ReplicationError("log heights are not a list")
        return Have(sid, tuple(_item(i, "log height") for i in args[1]))
    if t == 20:
        arity(2)
        return EmptySet(sid, _bool(args[1], "can_respond"))
    if t == 21:
        arity(2)
        return LowerBound(sid, _item(args[1], "lower bound"))
    if t == 22:
        arity(2, 3, 4)
        can = _bool(args[2], "can_respond") if len(args) > 2 else None
        upper = _item(args[3], "upper bound") if len(args) > 3 else None
        return ItemPayload(sid, _item(args[1], "value"), can, upper)
    if t == 23:
        arity(2)
        return EmptyPayload(sid, _item(args[1], "upper bound"))
    if t == 24:
        arity(2)
        return Done(sid, _item(args[1], "upper bound"))
    if t == 25:
        arity(3)
        return Fingerprint(sid, _bytes(args[1], "lift_type"), _item(args[2], "upper bound"))
    if t == 26:
        arity(1)
        return Terminal(sid)
    raise ReplicationError(f"unknown message type {t!r}")
