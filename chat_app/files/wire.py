"""File requests on the replication port, in the same length-prefixed frames.

A stream whose first frame starts with 0x00 0x02 asks for file chunks (a
replication stream opens with a CBOR array, never 0x00)::

    request  0x00 0x02 || CBOR ["sds-chat/file", root (32 bytes), [index, ...] | null]
    answers  CBOR ["manifest", manifest]           for null: the chunk hashes
             CBOR ["chunk", index, bytes]          one frame per index asked
             CBOR ["none", reason]                 this peer does not hold it

The asker may send further requests on the same stream. Whatever a peer
answers is checked by the asker against the offer's root before use.
"""

from __future__ import annotations

import struct

import cbor2

from chat_app.inert_text import inert

REQUEST = b"\x00\x02"
TAG = "sds-chat/file"
MAX_INDEXES = 64
_CBOR_ERRORS = (cbor2.CBORDecodeError, ValueError, TypeError, OverflowError, RecursionError)


class WireError(ValueError):
    """A frame that is not a well-formed file request or answer."""


def is_request(frame: bytes) -> bool:
    return frame[:2] == REQUEST


def encode_request(root: str, indexes: list[int] | None) -> bytes:
    return REQUEST + cbor2.dumps([TAG, bytes.fromhex(root), indexes])


def decode_request(frame: bytes) -> tuple[str, list[int] | None]:
    """(root, the chunk indexes asked, or None for the manifest)."""
    if not is_request(frame):
        raise WireError("not a file request")
    try:
        tag, root, indexes = cbor2.loads(frame[2:])
    except _CBOR_ERRORS as exc:
        raise WireError(f"file request is not a CBOR triple ({exc.__class__.__name__})") from None
    if tag != TAG or not isinstance(root, bytes) or len(root) != 32:
        raise WireError("file request lacks its tag or a 32-byte root")
    if indexes is not None and not (isinstance(indexes, list) and len(indexes) <= MAX_INDEXES and all(
            isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in indexes)):
        raise WireError(f"file request's indexes are not up to {MAX_INDEXES} whole numbers")
    return root.hex(), indexes


def encode_manifest(manifest: bytes) -> bytes:
    return cbor2.dumps(["manifest", manifest])


def encode_chunk(index: int, data: bytes) -> bytes:
    return chunk_head(index, len(data)) + data


def chunk_head(index: int, size: int) -> bytes:
    """The CBOR of ``["chunk", index, data]`` up to ``data``'s own bytes, so
    that a holder writes a chunk to its socket as it was read, never copied
    into a frame first (two copies of every chunk cost a fifth of a holder's
    time serving three peers)."""
    return b"\x83\x65chunk" + cbor2.dumps(index) + _bytes_head(size)


def _bytes_head(size: int) -> bytes:
    """A CBOR byte string's head (major type 2) for ``size`` bytes (RFC 8949 section 3)."""
    if size < 24:
        return bytes([0x40 + size])
    for extra, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if size < 1 << (8 * struct.calcsize(fmt)):
            return bytes([0x40 + extra]) + struct.pack(fmt, size)
    raise OverflowError(size)


def encode_none(reason: str) -> bytes:
    return cbor2.dumps(["none", reason])


def decode_answer(frame: bytes) -> tuple[str, object, object]:
    """("manifest", bytes, None), ("chunk", index, bytes) or ("none", reason, None)."""
    try:
        answer = cbor2.loads(frame)
    except _CBOR_ERRORS as exc:
        raise WireError(f"file answer is not CBOR ({exc.__class__.__name__})") from None
    match answer:
        case ["manifest", bytes() as manifest]:
            return "manifest", manifest, None
        case ["chunk", int() as index, bytes() as data] if not isinstance(index, bool):
            return "chunk", index, data
        case ["none", str() as reason]:
            return "none", inert(reason[:200]), None  # shown in a notice, on one line
    raise WireError("file answer is none of manifest, chunk, none")
