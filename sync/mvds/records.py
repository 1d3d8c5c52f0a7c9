"""The MVDS state for one peer: records, and when each is next due.

A record is the spec's triple - type (OFFER, REQUEST or MESSAGE), send count,
send epoch - kept per (type, message id). Each is scheduled at its send
epoch in a keyed heap, so finding what is due never scans them all. There
are no ACK records: acks are owed once and never retransmitted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from sync.core import Schedule

from .config import Config

OFFER, REQUEST, MESSAGE = "offer", "request", "message"

Key = tuple[str, bytes]  # (record type, message id)


@dataclass(slots=True)
class Record:
    type: str
    send_count: int
    send_epoch: int


class Records:
    def __init__(self, config: Config, stats: Counter) -> None:
        self.config = config
        self.stats = stats
        self._records: dict[Key, Record] = {}
        self._due: Schedule[Key] = Schedule()

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, key: object) -> bool:
        return key in self._records

    def __getitem__(self, key: Key) -> Record:
        return self._records[key]

    def __iter__(self) -> Iterator[Key]:
        return iter(self._records)

    def items(self) -> Iterable[tuple[Key, Record]]:
        return self._records.items()

    def add(self, kind: str, mid: bytes, due: int, send_count: int = 0) -> None:
        self._records[(kind, mid)] = Record(kind, send_count, due)
        self._due.set((kind, mid), due)

    def remove(self, key: Key) -> bool:
        if self._records.pop(key, None) is None:
            return False
        self._due.discard(key)
        return True

    def next_due(self) -> int | None:
        return self._due.next_due()

    def pop_due(self, epoch: int) -> list[Key]:
        """Keys due by ``epoch``, earliest first; each must be ``sent`` or
        ``postpone``d before the payload is done."""
        return self._due.pop_due(epoch)

    def due_by(self, key: Key, epoch: int) -> None:
        """Make the record due no later than ``epoch``."""
        record = self._records[key]
        if record.send_epoch > epoch:
            self.postpone(key, epoch)

    def postpone(self, key: Key, epoch: int) -> None:
        self._records[key].send_epoch = epoch
        self._due.set(key, epoch)

    def sent(self, key: Key, epoch: int) -> None:
        """The record went out in ``epoch``: count it, and back off."""
        record = self._records[key]
        record.send_count += 1
        self.postpone(key, epoch + self.config.backoff(record.send_count))
        self.stats[f"{record.type}_sent" if record.send_count == 1 else f"{record.type}_resent"] += 1

    def align(self, keys: list[Key], epoch: int) -> None:
        """Records sent together wait together, as long as the most-sent."""
        wait = self.config.backoff(max(self._records[key].send_count for key in keys))
        for key in keys:
            self.postpone(key, epoch + wait)

    def reset(self, epoch: int) -> bool:
        """The peer is back: what backed off is due now and backs off from
        the start again. (What is due within the first backoff anyway - just
        sent, its ack perhaps on the way - keeps its time.)"""
        soon = epoch + self.config.backoff_base_epochs
        reset = False
        for key, record in self._records.items():
            if record.send_epoch > soon:
                record.send_count = 0
                self.postpone(key, epoch)
                reset = True
        return reset

    def export(self) -> list:
        return [[kind, mid, r.send_count, r.send_epoch] for (kind, mid), r in self._records.items()]

    def restore(self, rows: list) -> None:
        for kind, mid, count, epoch in rows:
            self.add(kind, mid, epoch, count)
