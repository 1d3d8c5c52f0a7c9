"""Replication streams: length-prefixed frames over TCP, one CBOR message each.

    frame = u32 big-endian length, then that many bytes

A frame longer than ``MAX_FRAME`` ends the stream: nothing legitimate is that
large (an Entry carries one SDS datagram).
"""

from __future__ import annotations

import asyncio
import struct

MAX_FRAME = 1 << 20
_LENGTH = struct.Struct(">I")


class FrameError(Exception):
    """The stream broke the framing (oversized frame)."""


async def read_frame(reader: asyncio.StreamReader) -> bytes | None:
    """The next frame, or None when the peer closed the stream."""
    try:
        header = await reader.readexactly(_LENGTH.size)
    except asyncio.IncompleteReadError:
        return None
    (length,) = _LENGTH.unpack(header)
    if length > MAX_FRAME:
        raise FrameError(f"frame of {length} bytes exceeds {MAX_FRAME}")
    try:
        return await reader.readexactly(length)
    except asyncio.IncompleteReadError:
        return None


def frame(data: bytes) -> bytes:
    return _LENGTH.pack(len(data)) + data
