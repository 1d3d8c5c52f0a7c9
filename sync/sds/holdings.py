"""What each sender has the incoming buffer keep for it, in count and bytes.

A sender with a valid key can send messages naming history that exists
nowhere: each such message waits, and each made-up id is chased. So what
waits is *charged* to a sender - its own waiting messages, and every missing
id charged to it (to the sender of the first message that waits for it, or,
while no message waits for it, to the sender whose sync message named it) -
and ``IncomingBuffer`` holds every sender to a share of it (``Config``:
``max_held_per_sender``, ``max_missing_per_sender``,
``max_held_bytes_per_sender``) and everyone together to the totals.

This module only keeps the books: per sender, its waiting messages and the
ids no message waits for (*bare*), each oldest first (what is evicted first
when the totals are full), how many missing ids it is charged for and how
many bytes; and which sender holds the most bytes, in O(log n).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from sortedcontainers import SortedList

from proto.sds_pb2 import HistoryEntry as PbHistoryEntry

from .events import HistoryEntry

OVERHEAD = 100
"""Bytes charged per kept item beyond its own: its records in memory and its row in the store."""


def missing_cost(entry: HistoryEntry | PbHistoryEntry) -> int:
    return len(entry.message_id) + len(entry.retrieval_hint or b"") + len(entry.sender_id or "") + OVERHEAD


def held_cost(wire: bytes) -> int:
    return len(wire) + OVERHEAD


@dataclass(slots=True)
class Share:
    held: OrderedDict[str, None] = field(default_factory=OrderedDict)  # its waiting messages, oldest first
    bare: OrderedDict[str, None] = field(default_factory=OrderedDict)  # missing ids it named that nobody waits for
    missing: int = 0  # missing ids charged to it (bare or not)
    bytes: int = 0


class Holdings:
    def __init__(self) -> None:
        self.shares: dict[str, Share] = {}
        self._by_bytes: SortedList = SortedList()  # (bytes, sender)
        self.held = 0
        self.missing = 0
        self.bare = 0
        self.bytes = 0

    def share(self, sender: str) -> Share:
        return self.shares.get(sender) or Share()

    def largest(self) -> str | None:
        """The sender charged the most bytes."""
        return self._by_bytes[-1][1] if self._by_bytes else None

    def charge(self, sender: str, nbytes: int, *, missing: int = 0, held: str | None = None, unheld: str | None = None,
               bare: str | None = None, unbare: str | None = None) -> None:
        """Add ``nbytes`` (negative: release) and ``missing`` ids to ``sender``'s
        share; ``held``/``unheld`` a waiting message and ``bare``/``unbare``
        an id nobody waits for join or leave it."""
        share = self.shares.get(sender)
        if share is None:
            share = self.shares[sender] = Share()
        else:
            self._by_bytes.remove((share.bytes, sender))
        share.bytes += nbytes
        share.missing += missing
        self.bytes += nbytes
        self.missing += missing
        if held is not None:
            share.held[held] = None
            self.held += 1
        if unheld is not None:
            del share.held[unheld]
            self.held -= 1
        if bare is not None:
            share.bare[bare] = None
            self.bare += 1
        if unbare is not None:
            del share.bare[unbare]
            self.bare -= 1
        if share.held or share.bare or share.missing or share.bytes:
            self._by_bytes.add((share.bytes, sender))
        else:
            del self.shares[sender]
