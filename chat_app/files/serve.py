"""Serving the files this peer holds to whoever asks on the replication port.

Any peer that holds every byte of a file serves it, whoever offered it: the
asker checks each chunk against the offer's root, so a holder needs no
trust. Chunks are read (and sealed) on a worker thread, the next one while
the one before goes out, and written to a socket that may hold about two
before the writer waits: a slow asker holds three chunks of memory here,
never the file, and a fast one never waits for the disk between two.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from concurrent.futures import Executor

from chat_app.file_offer import CHUNK_SIZE
from chat_app.net.tcp import FrameError, frame, frame_head, read_frame

from .chunks import read_chunk
from .ledger import Held, Ledger
from .wire import WireError, chunk_head, decode_request, encode_manifest, encode_none

log = logging.getLogger(__name__)

IDLE_S = 30.0
SEND_AHEAD = 2 * CHUNK_SIZE + (64 << 10)


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bytes, ledger: Ledger,
                pool: Executor) -> None:
    # a chunk and the next queued for the socket before drain() waits: it never runs dry
    writer.transport.set_write_buffer_limits(high=SEND_AHEAD)
    request: bytes | None = first
    try:
        while request is not None:
            root, indexes = decode_request(request)
            held = ledger.held(root)
            if held is None:
                writer.write(frame(encode_none("not held here")))
            elif indexes is None:
                writer.write(frame(encode_manifest(held.manifest)))
            else:
                await _send_chunks(writer, held, indexes, pool)
            await writer.drain()
            async with asyncio.timeout(IDLE_S):
                request = await read_frame(reader)
    except WireError as exc:
        log.info("file request refused: %s", exc)
    except FileNotFoundError:
        writer.write(frame(encode_none("the file is gone here")))
    except (TimeoutError, FrameError, OSError, ConnectionError) as exc:
        log.debug("file stream ended: %s", exc.__class__.__name__)
    except RuntimeError:  # the worker threads are shut down: we are leaving
        log.debug("file stream ended at quit")
    finally:
        writer.close()


async def _send_chunks(writer: asyncio.StreamWriter, held: Held, indexes: list[int], pool: Executor) -> None:
    """The chunks asked for, up to one past the end (which is said instead)."""
    loop = asyncio.get_running_loop()
    chunks = len(held.manifest) // 32
    wanted = list(itertools.takewhile(lambda i: i < chunks, indexes))

    def read(index: int) -> asyncio.Future:
        return loop.run_in_executor(pool, read_chunk, held.path, index, held.chunk_size, held.key)
    reading = read(wanted[0]) if wanted else None
    for k, index in enumerate(wanted):
        data = await reading
        if k + 1 < len(wanted):
            reading = read(wanted[k + 1])  # the next chunk is read from disk while this one goes
        head = chunk_head(index, len(data))
        writer.write(frame_head(len(head) + len(data)) + head)
        writer.write(data)  # as it was read: never copied into a frame
        await writer.drain()
    if len(wanted) < len(indexes):
        writer.write(frame(encode_none(f"chunk {indexes[len(wanted)]} is past the end")))
