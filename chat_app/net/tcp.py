"""Replication streams: length-prefixed frames over TCP, one CBOR message each.

    frame = u32 big-endian length, then that many bytes

A frame longer than ``MAX_FRAME`` ends the stream: nothing legitimate is that
large (an Entry carries one SDS datagram).

A replication link reads with ``FrameReader``: every frame one read of the
socket brought, together, so the runtime takes the entries of a read in one
step - one SQLite commit for hundreds of entries, where a commit each made
catching up a long history cost a millisecond or more per message.
"""

from __future__ import annotations

import asyncio
import struct

MAX_FRAME = 1 << 20
READ_SIZE = 1 << 18
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


class FrameReader:
    """The frames of a stream, as many at a time as have arrived."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._buffer = bytearray()

    async def frames(self) -> list[bytes] | None:
        """The next frames (at least one), or None when the peer closed the stream
        (a frame it left unfinished is dropped, as ``read_frame`` drops it)."""
        while not (frames := self._split()):
            data = await self._reader.read(READ_SIZE)
            if not data:
                return None
            self._buffer += data
        return frames

    def _split(self) -> list[bytes]:
        buffer, at, frames = self._buffer, 0, []
        while len(buffer) - at >= _LENGTH.size:
            (length,) = _LENGTH.unpack_from(buffer, at)
            if length > MAX_FRAME:
                if frames:
                    break  # the frames before it first; the next call refuses it
                raise FrameError(f"frame of {length} bytes exceeds {MAX_FRAME}")
            start = at + _LENGTH.size
            if len(buffer) - start < length:
                break
            frames.append(bytes(buffer[start:start + length]))
            at = start + length
        del buffer[:at]
        return frames


def frame(data: bytes) -> bytes:
    return _LENGTH.pack(len(data)) + data


def frame_head(size: int) -> bytes:
    """What goes before ``size`` bytes to make them a frame, for a body
    written in pieces (``frame_head(len(a) + len(b)) + a``, then ``b``)."""
    return _LENGTH.pack(size)
