"""Fetching a file's chunks from one holder, checking each as it arrives.

``fetch_from`` asks one address for the manifest (once per download: it is
checked against the offer's root and kept), then for the chunks not yet
verified, a window at a time. Every chunk is checked against its hash,
opened (private files) and written in place on a worker thread. When a
window is in and the next asked for (or the holder fails midway), the
partial file is synced to disk on the worker thread and only then are its
chunks reported to ``verified``, so the record never claims a chunk a crash could lose, and a
dropped link or a restart loses at most one window. (Reported chunk by
chunk, each report a commit of the ledger on the event loop, a 1 GB file
made 4,000 commits; with the file's writeback piling up, one of them held
the chat for 1.6 s.) Whatever goes wrong with this
holder - it cannot be reached, does not hold the file, sends a chunk that
does not match, or is slower than ``SLOW_S`` a chunk - is ``SourceFailed``
with a one-line reason, and the caller tries another.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from concurrent.futures import Executor

from chat_app.address import Address
from chat_app.file_offer import CHUNK_SIZE, FileOffer
from chat_app.net.tcp import FrameError, frame, read_frame

from .chunks import HASH, ChunkError, check_and_write, manifest_root
from .wire import WireError, decode_answer, encode_request

CONNECT_S = 5.0
SLOW_S = 10.0
WINDOW = 32
READ_AHEAD = 2 * CHUNK_SIZE  # what the stream buffers before it stops reading the socket


class SourceFailed(Exception):
    """This holder will not do; the message says why, in one line."""


async def fetch_from(address: Address, offer: FileOffer, manifest: bytes | None, missing: list[int], fd: int,
                     pool: Executor, got_manifest: Callable[[bytes], None],
                     verified: Callable[[list[int]], None]) -> None:
    try:
        async with asyncio.timeout(CONNECT_S):
            reader, writer = await asyncio.open_connection(*address, limit=READ_AHEAD)
    except (TimeoutError, OSError) as exc:
        raise SourceFailed(f"cannot connect ({exc.__class__.__name__})") from None
    try:
        if manifest is None:
            manifest = await _manifest(reader, writer, offer)
            got_manifest(manifest)
        loop = asyncio.get_running_loop()
        written: list[int] = []
        try:
            for start in range(0, len(missing), WINDOW):
                window = missing[start:start + WINDOW]
                for part in range(0, len(window), 64):
                    writer.write(frame(encode_request(offer.root, window[part:part + 64])))
                if written:  # the window before, synced while this one travels
                    await _kept(loop, pool, fd, written, verified)
                expected = set(window)
                while expected:
                    kind, index, data = await _answer(reader)
                    if kind == "none":
                        raise SourceFailed(f"does not hold it ({index})")
                    if kind != "chunk" or index not in expected:
                        raise SourceFailed("answered with something not asked")
                    try:
                        await loop.run_in_executor(pool, check_and_write, fd, manifest, index, data,
                                                   offer.chunk_size, offer.key)
                    except ChunkError as exc:
                        raise SourceFailed(f"sent a bad chunk, refused: {exc}") from None
                    expected.discard(index)
                    written.append(index)
            await _kept(loop, pool, fd, written, verified)
        except SourceFailed:
            if written:  # what this holder gave before it failed is kept too
                await _kept(loop, pool, fd, written, verified)
            raise
    finally:
        writer.close()


async def _kept(loop, pool: Executor, fd: int, written: list[int], verified: Callable[[list[int]], None]) -> None:
    """Sync the chunks ``written`` to disk, off the event loop, then report them verified."""
    await loop.run_in_executor(pool, os.fdatasync, fd)
    verified(written[:])
    written.clear()


async def _manifest(reader, writer, offer: FileOffer) -> bytes:
    writer.write(frame(encode_request(offer.root, None)))
    kind, manifest, _ = await _answer(reader)
    if kind == "none":
        raise SourceFailed(f"does not hold it ({manifest})")
    if kind != "manifest" or len(manifest) != offer.chunks * HASH or manifest_root(manifest) != offer.root:
        raise SourceFailed("sent a manifest that does not match the offer, refused")
    return manifest


async def _answer(reader) -> tuple[str, object, object]:
    try:
        async with asyncio.timeout(SLOW_S):
            data = await read_frame(reader)
    except TimeoutError:
        raise SourceFailed(f"too slow (nothing for {SLOW_S:.0f} s)") from None
    except (FrameError, OSError, ConnectionError) as exc:
        raise SourceFailed(f"stream failed ({exc.__class__.__name__})") from None
    if data is None:
        raise SourceFailed("hung up")
    try:
        return decode_answer(data)
    except WireError as exc:
        raise SourceFailed(str(exc)) from None
