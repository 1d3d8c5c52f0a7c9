"""One accepted offer being fetched: what is verified, and how fast it goes.

Which chunks are verified is a bitmap, written to the ledger as each window
of chunks is on disk - with the partial file, all a restart needs to carry
on asking only for the rest. Progress is reported at most every ``PROGRESS_EVERY_S`` (and at
the end); the speed counts only the bytes fetched since this run began.
"""

from __future__ import annotations

import time
from pathlib import Path

from chat_app.events import Emit

from .events import FileProgress
from .ledger import Ledger, OfferRow

PROGRESS_EVERY_S = 0.5


class Download:
    def __init__(self, row: OfferRow, partial: Path, ledger: Ledger, emit: Emit) -> None:
        self.row, self.offer, self.partial = row, row.offer, partial
        self._ledger, self._emit = ledger, emit
        self.manifest = row.manifest
        self.verified = bytearray(row.verified or bytes(-(-self.offer.chunks // 8)))
        self.done = self.offer.size - sum(map(self.offer.plain_length, self.missing()))
        self._fresh, self._started, self._shown = 0, time.monotonic(), 0.0

    def missing(self) -> list[int]:
        return [i for i in range(self.offer.chunks) if not self.verified[i // 8] >> (i % 8) & 1]

    def got_manifest(self, manifest: bytes) -> None:
        self.manifest = manifest
        self._ledger.update(self.row.number, manifest=manifest, partial=str(self.partial))

    def chunks_verified(self, indices: list[int]) -> None:
        for index in indices:
            self.verified[index // 8] |= 1 << (index % 8)
        self._ledger.update(self.row.number, verified=bytes(self.verified))
        length = sum(map(self.offer.plain_length, indices))
        self.done += length
        self._fresh += length
        now = time.monotonic()
        if now - self._shown >= PROGRESS_EVERY_S or self.done == self.offer.size:
            self._shown = now
            speed = int(self._fresh / max(now - self._started, 1e-3))
            self._emit(FileProgress(self.row.number, self.row.channel, self.offer.name, self.done, self.offer.size,
                                    speed))
