"""Message ids and the SDS-R hash: SHA-256 over length-prefixed fields."""

from __future__ import annotations

from hashlib import sha256

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
