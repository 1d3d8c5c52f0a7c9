"""``Files``: offers, downloads and serving, beside the node's runtime.

Offering hashes the file on a worker thread and sends the offer as a
``file`` chat message; the bytes stay where they are. A ``file`` message
delivered in any conversation is recorded (``files.sqlite``) and announced
with a number; ``/accept N`` (or the automatic size limit) starts its
download, which asks the holders one after another - the sender first,
then every peer known - until every chunk is verified, waiting
``RETRY_S`` between rounds while none will do. A download survives a
dropped link or a restart: the partial file and its verified chunks are
kept, and accepted downloads resume when the node starts.
"""

from __future__ import annotations

import asyncio
import logging
import mimetypes
import os
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from chat_app import events as ev
from chat_app.address import Address
from chat_app.file_offer import CHUNK_SIZE, FileOffer, OfferError

from .chunks import describe, file_sha256
from .download import Download
from .events import FileList, FileOffered, FileReceived, FileSourceLeft
from .fetch import SourceFailed, fetch_from
from .ledger import Ledger, OfferRow
from .names import safe_name, unused_path
from .serve import serve
from .settings import load_settings

log = logging.getLogger(__name__)

RETRY_S = 3.0

Holders = Callable[[str], list[Address]]
"""The addresses to ask for a file, the sender's (by id) first."""


class Files:
    def __init__(self, data_dir: Path, emit: ev.Emit, holders: Holders, keep_all: bool = False) -> None:
        """``keep_all``: fetch every offer, whatever its size - a store peer keeps files as it keeps history."""
        self._emit, self._holders, self.keep_all = emit, holders, keep_all
        self.settings, problem = load_settings(data_dir)
        if problem is not None:
            emit(ev.Error(problem))
        self.ledger = Ledger(data_dir)
        self.partials = data_dir / "files-partial"
        self.pool = ThreadPoolExecutor(2, thread_name_prefix="sds-chat-files")
        self._downloads: dict[str, asyncio.Task] = {}  # by root

    def start(self) -> None:
        for row in self.ledger.offers("accepted"):  # interrupted by a restart: carry on
            self._begin(row)

    async def stop(self) -> None:
        for task in self._downloads.values():
            task.cancel()
        await asyncio.gather(*self._downloads.values(), return_exceptions=True)
        self.pool.shutdown(wait=True)
        self.ledger.close()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, first: bytes) -> None:
        await serve(reader, writer, first, self.ledger, self.pool)

    # ----------------------------------------------------------------- offering

    async def offer(self, path: str, encrypted: bool) -> FileOffer | None:
        """Hash ``path`` (off the loop) and keep it to serve: the offer to send, or None (an error said why)."""
        file = Path(path).expanduser()
        key = secrets.token_bytes(32) if encrypted else None
        try:
            described = await asyncio.get_running_loop().run_in_executor(self.pool, describe, file, CHUNK_SIZE, key)
            offer = FileOffer(safe_name(file.name), described.size, CHUNK_SIZE, described.sha256, described.root,
                              mimetypes.guess_type(file.name)[0] or "application/octet-stream", key)
        except (OSError, OfferError) as exc:
            self._emit(ev.Error(f"cannot offer {path}: {getattr(exc, 'strerror', None) or exc}"))
            return None
        self.ledger.hold(offer.root, file.resolve(), offer.size, offer.chunk_size, key, described.manifest)
        return offer

    def observe(self, event: ev.AppEvent) -> None:
        """A delivered ``file`` message, in a channel or a direct conversation,
        becomes an offer: the one its payload's decoding parsed, carried by the
        event (none: a row stored before offers were checked, not an offer)."""
        match event:
            case ev.MessageDelivered(offer=FileOffer() as offer, own=own) | \
                    ev.DmDelivered(offer=FileOffer() as offer, own=own):
                pass
            case _:
                return
        row = self.ledger.offered(event.message_id, event.channel, event.sender_id, event.nick, offer,
                                  "sent" if own else "offered")
        if row is None:
            return
        auto = not own and (self.keep_all or offer.size <= self.settings.auto_accept_bytes)
        self._emit(FileOffered(row.number, row.channel, row.nick, offer.name, offer.size, offer.media, offer.sha256,
                               own, auto))
        if auto:
            self.accept(row.number)

    # ---------------------------------------------------------------- receiving

    def accept(self, number: int | None) -> None:
        """Fetch offer ``number``, or (None) the latest not yet accepted."""
        if number is None:
            waiting = self.ledger.offers("offered")
            if not waiting:
                return self._emit(ev.Error("no file offer waiting; /files lists them"))
            number = waiting[-1].number
        row = self.ledger.offer(number)
        if row is None or row.state == "sent":
            return self._emit(ev.Error(f"no file offer {number}; /files lists them"))
        if row.state == "done":
            return self._emit(ev.Error(f"file {number} is already saved as {row.saved}"))
        self.ledger.update(number, state="accepted")
        self._begin(row)

    def listing(self) -> FileList:
        return FileList(tuple({"number": r.number, "channel": r.channel, "nick": r.nick, "name": r.offer.name,
                               "size": r.offer.size, "state": r.state, "saved": r.saved}
                              for r in self.ledger.offers()))

    def _begin(self, row: OfferRow) -> None:
        """Fetch an accepted offer's file - unless these very bytes are here
        (offered twice), or being fetched already (one partial file a root)."""
        root = row.offer.root
        if (held := self.ledger.held(root)) is not None:
            self.ledger.update(row.number, state="done", saved=str(held.path))
            self._emit(FileReceived(row.number, row.channel, row.offer.name, str(held.path), row.offer.size,
                                    row.offer.sha256))
        elif root not in self._downloads:
            task = asyncio.ensure_future(self._fetch(row))
            self._downloads[root] = task
            task.add_done_callback(lambda _: self._downloads.pop(root, None))

    async def _fetch(self, row: OfferRow) -> None:
        self.partials.mkdir(parents=True, exist_ok=True)
        download = Download(row, self.partials / f"{row.offer.root}.part", self.ledger, self._emit)
        missing = download.missing()
        fd = os.open(download.partial, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            while missing:
                for address in self._holders(row.sender_id):
                    try:
                        await fetch_from(address, row.offer, download.manifest, missing, fd, self.pool,
                                         download.got_manifest, download.chunks_verified)
                    except SourceFailed as exc:
                        self._emit(FileSourceLeft(row.number, f"{address[0]}:{address[1]}", str(exc)))
                    if not (missing := download.missing()):
                        break
                else:  # nobody would do: try them all again in a while
                    await asyncio.sleep(RETRY_S)
        finally:
            os.close(fd)
        await self._finish(row, download.partial)

    async def _finish(self, row: OfferRow, partial: Path) -> None:
        offer = row.offer
        if await asyncio.get_running_loop().run_in_executor(self.pool, file_sha256, partial) != offer.sha256:
            partial.unlink()
            self.ledger.update(row.number, state="bad", verified=None, manifest=None)
            return self._emit(ev.Error(f"file {row.number}: every chunk matched but the whole file does not "
                                       "match the offer's SHA-256; it was offered wrongly and is not saved"))
        self.settings.downloads.mkdir(parents=True, exist_ok=True)
        saved = unused_path(self.settings.downloads, offer.name)
        os.replace(partial, saved)
        manifest = self.ledger.offer(row.number).manifest or b""
        self.ledger.hold(offer.root, saved, offer.size, offer.chunk_size, offer.key, manifest)
        self.ledger.update(row.number, state="done", saved=str(saved), verified=None, partial=None)
        self._emit(FileReceived(row.number, row.channel, offer.name, str(saved), offer.size, offer.sha256))
        for other in self.ledger.offers("accepted"):  # the same file, offered again and accepted meanwhile
            if other.offer.root == offer.root:
                self._begin(other)
