"""What a well-formed SDS message is, and which message ids are real.

Only real messages get in. A message that would be logged (a content
message: Lamport timestamp and content) must carry an id derived from its
fields in exactly one of two ways:

* ours: ``compute_message_id(sender_id, channel_id, lamport, content)``, the
  first 128 bits of a SHA-256 over the length-prefixed fields, in lowercase
  hex (32 characters);
* the reference JavaScript implementation's (@waku/sds): the lowercase hex
  SHA-256 of the content alone (64 characters).

Sync messages (a timestamp, no content) carry ours over empty content, or
the reference implementation's ``sync-`` and a random base-36 tag; ephemeral
messages (content, no timestamp) either derivation over their content. An id
that matches none of these - a flipped byte anywhere in the fields it
covers, a field replaced, content emptied - is refused, so a corrupted or
forged datagram is never delivered, stored or forwarded.

Well-formed, for what the ids do not cover:

* a sender id: 1-128 characters, ASCII letters, digits and ``. _ : + / = @ -``
  (hex, base58 and base64 peer ids all fit; no spaces, controls or NUL);
* a channel id: 1-128 printable characters, no whitespace;
* a causal-history or repair-request entry: names a content message (32 or
  64 lowercase hex characters), not the message itself, each at most once,
  with a well-formed sender id if any and a retrieval hint within bounds;
* a Lamport timestamp fits a signed 64-bit integer, which is what SQLite
  stores and what the reference implementation's bigint carries.
"""

from __future__ import annotations

import re
from functools import lru_cache
from hashlib import sha256

from sync.core.errors import RemoteProtocolError

from proto.sds_pb2 import SdsMessage

from .ids import compute_message_id

MAX_ID_CHARS = 128
MAX_LAMPORT = (1 << 63) - 1
SENDER_ID = re.compile(r"[A-Za-z0-9._:+/=@-]{1,128}")
CONTENT_ID = re.compile(r"[0-9a-f]{32}|[0-9a-f]{64}")
CONTENT_IDS = re.compile(r"(?:[0-9a-f]{32}|[0-9a-f]{64})(?:\n(?:[0-9a-f]{32}|[0-9a-f]{64}))*")
"""Content message ids, one a line: a whole history checked in one match."""
REFERENCE_SYNC_ID = re.compile(r"sync-[0-9a-z]{1,32}")


def sender_id_problem(value: str) -> str | None:
    return None if SENDER_ID.fullmatch(value) else f"sender id {_show(value)} is not well-formed"


@lru_cache(maxsize=256)  # a peer sees a handful of channel ids, over and over
def channel_id_problem(value: str) -> str | None:
    if not 1 <= len(value) <= MAX_ID_CHARS or not value.isprintable() or any(c.isspace() for c in value):
        return f"channel id {_show(value)} is not well-formed"
    return None


OURS, REFERENCE, REFERENCE_SYNC = "ours", "reference", "reference_sync"
"""Which derivation a message id was found to be (``check`` returns it): so
whoever needs a particular one - the signed envelope wants ours - asks, and
the id is hashed once."""


def derivation(mid: str, sender_id: str, channel_id: str, lamport: int | None, content: bytes) -> str | None:
    """Which of the derivations its kind allows the id ``mid`` of a message
    with these fields is, if any. Ours is tried first (what sds-chat sends),
    the reference's content hash only when ours does not match."""
    if mid == compute_message_id(sender_id, channel_id, lamport, content):
        return OURS
    if content:
        return REFERENCE if len(mid) == 64 and mid == sha256(content).hexdigest() else None
    return REFERENCE_SYNC if REFERENCE_SYNC_ID.fullmatch(mid) else None


def check(msg: SdsMessage, max_hint_bytes: int) -> tuple[str, tuple[str, ...]]:
    """Raise ``RemoteProtocolError`` unless ``msg`` is well-formed and its id
    is one of the derivations its kind allows; which one it is, and the ids
    its causal history names, in order (read here once: a field of a parsed
    entry costs about 0.4 µs each time it is read)."""
    sender_id, channel_id = msg.sender_id, msg.channel_id
    for problem in (sender_id_problem(sender_id), channel_id_problem(channel_id)):
        if problem:
            raise RemoteProtocolError("malformed", problem)
    stamped, content = msg.HasField("lamport_timestamp"), msg.content
    if not stamped and not content:
        raise RemoteProtocolError("malformed", "neither a Lamport timestamp nor content")
    lamport = msg.lamport_timestamp if stamped else None
    if stamped and lamport > MAX_LAMPORT:
        raise RemoteProtocolError("clock", f"Lamport timestamp {lamport} exceeds 2^63 - 1")
    mid = msg.message_id
    found = derivation(mid, sender_id, channel_id, lamport, content)
    if found is None:
        raise RemoteProtocolError("forged_id", f"message id {_show(mid)} is not derived from the message's fields")
    history = msg.causal_history
    cited = _check_entries("causal_history", history, mid, max_hint_bytes) if history else ()
    if requests := msg.repair_request:
        _check_entries("repair_request", requests, mid, max_hint_bytes)
    return found, cited


def _check_entries(name: str, entries, mid: str, max_hint_bytes: int) -> tuple[str, ...]:
    """Each entry names a content message, none twice nor ``mid`` itself,
    with a well-formed sender if it has one and a hint of at most
    ``max_hint_bytes``; the ids, in order. Checked over all of them at once: reading a field of
    a parsed entry costs about 0.4 µs, and 256 entries checked one by one
    took a millisecond."""
    ids, senders = [], set()
    for entry in entries:
        ids.append(entry.message_id)
        senders.add(entry.sender_id)
        if len(entry.retrieval_hint) > max_hint_bytes:
            raise RemoteProtocolError("malformed", f"{name} entry has a retrieval hint over {max_hint_bytes} bytes")
    joined = "\n".join(ids)
    if joined.count("\n") != len(ids) - 1 or not CONTENT_IDS.fullmatch(joined):
        bad = next(ref for ref in ids if not CONTENT_ID.fullmatch(ref))
        raise RemoteProtocolError("malformed", f"{name} names {_show(bad)}, not a message id")
    if len(set(ids)) != len(ids) or mid in ids:
        seen: set[str] = set()
        ref = next(ref for ref in ids if ref == mid or ref in seen or seen.add(ref))
        raise RemoteProtocolError("malformed", f"{name} names {_show(ref)} twice or names itself")
    for sender in senders:
        problem = sender_id_problem(sender) if sender else None
        if not sender and any(entry.HasField("sender_id") for entry in entries if not entry.sender_id):
            problem = sender_id_problem(sender)  # set, but empty
        if problem:
            raise RemoteProtocolError("malformed", f"{name} entry: {problem}")
    return tuple(ids)


def _show(value: str) -> str:
    """A value for a one-line reason: escaped, and cut short."""
    text = value[:40].encode("unicode_escape").decode("ascii")
    return repr(text + ("…" if len(value) > 40 else ""))
