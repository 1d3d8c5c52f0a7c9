"""Serving the files this peer holds to whoever asks on the replication port.

Any peer that holds every byte of a file serves it, whoever offered it: the
asker checks each chunk against the offer's root, so a holder needs no
trust. Chunks are read (and sealed) on a worker thread and written one at a
time, each drained before the next is read: a slow asker holds one chunk of
memory here, never the file.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Executor

from chat_app.net.tcp import FrameError, frame, read_frame

from .chunks import read_chunk
from .ledger import Ledger
from .wire import WireError, decode_request, encode_chunk, encode_manifest, encode_none

log = logging.getLogger(__name__)

IDLE_S = 30.0


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bytes, ledger: Ledger,
                pool: Executor) -> None:
    loop = asyncio.get_running_loop()
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
                chunks = len(held.manifest) // 32
                for index in indexes:
                    if index >= chunks:
                        writer.write(frame(encode_none(f"chunk {index} is past the end")))
                        break
                    data = await loop.run_in_executor(pool, read_chunk, held.path, index, held.chunk_size, held.key)
                    writer.write(frame(encode_chunk(index, data)))
                    await writer.drain()
            await writer.drain()
            request = await asyncio.wait_for(read_frame(reader), IDLE_S)
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
