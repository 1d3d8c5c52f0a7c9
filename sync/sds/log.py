"""The local log: delivered message ids in ``(lamport, message_id)`` order.

Kept in a sorted list so an insert costs O(log n) however long the history.
Beside the order it remembers, per message, its sender and retrieval hint
(to cite it in causal histories), the ``causal_history_size`` messages most
recently delivered (what the next message cites), and the ids given up as
lost (bounded: one referenced again after it is forgotten is waited for
again).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from sortedcontainers import SortedList

from .events import HistoryEntry


@dataclass(slots=True)
class LogEntry:
    lamport: int
    sender_id: str
    retrieval_hint: bytes | None


class LogView(Sequence[str]):
    """Read-only view of the delivered message ids, in log order."""

    __slots__ = ("_order",)

    def __init__(self, order: SortedList) -> None:
        self._order = order

    def __len__(self) -> int:
        return len(self._order)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index):
        if isinstance(index, slice):
            return [key[1] for key in self._order[index]]
        return self._order[index][1]

    def __iter__(self) -> Iterator[str]:
        return (key[1] for key in self._order)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __repr__(self) -> str:
        return f"LogView({len(self)} messages)"


class LocalLog:
    __slots__ = ("order", "entries", "lost", "_lost_stamp", "_lost_dirty", "recent", "max_lost")

    def __init__(self, history_size: int, max_lost: int) -> None:
        self.order: SortedList = SortedList()
        self.entries: dict[str, LogEntry] = {}
        self.lost: dict[str, int] = {}  # id -> when given up, as a counter; oldest first
        self._lost_stamp = 0
        self._lost_dirty: set[str] = set()  # changed since ``mark_saved`` (a store writes each alone)
        self.recent: deque[str] = deque(maxlen=history_size)
        self.max_lost = max_lost

    def __contains__(self, message_id: str) -> bool:
        return message_id in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def newest_lamport(self) -> int:
        return self.order[-1][0] if self.order else 0

    def sender_of(self, message_id: str) -> str | None:
        entry = self.entries.get(message_id)
        return entry.sender_id if entry else None

    def settled(self, message_id: str) -> bool:
        """In the log, or given up as lost: nothing to wait for."""
        return message_id in self.entries or message_id in self.lost

    def unsettled(self, message_ids: tuple[str, ...]) -> set[str]:
        """Those of ``message_ids`` neither in the log nor given up."""
        entries, lost = self.entries, self.lost
        return {mid for mid in message_ids if mid not in entries and mid not in lost}

    def insert(self, message_id: str, lamport: int, sender_id: str, hint: bytes | None) -> int:
        """Add a delivered message; returns its position."""
        key, order = (lamport, message_id), self.order
        newest = not order or key > order[-1]  # nearly always: then its position needs no search
        order.add(key)
        self.entries[message_id] = LogEntry(lamport, sender_id, hint)
        self.recent.append(message_id)
        if self.lost.pop(message_id, None) is not None:
            self._lost_dirty.add(message_id)
        return len(order) - 1 if newest else order.bisect_left(key)

    def add_lost(self, message_id: str) -> None:
        self._lost_stamp += 1
        self.lost.pop(message_id, None)  # to the end: the newest
        self.lost[message_id] = self._lost_stamp
        self._lost_dirty.add(message_id)
        if len(self.lost) > self.max_lost:
            oldest = next(iter(self.lost))
            del self.lost[oldest]
            self._lost_dirty.add(oldest)

    def history(self) -> list[HistoryEntry]:
        """What the next message cites: the most recently delivered."""
        return [HistoryEntry(mid, self.entries[mid].retrieval_hint, self.entries[mid].sender_id)
                for mid in self.recent]

    # ----------------------------------------------------------- persistence
    # The delivered messages are the caller's to keep (``rows``, ``load``);
    # the lost ids a store keeps entry by entry, the recent ids whole.

    def rows(self) -> list[list]:
        return [[lamport, mid, self.entries[mid].sender_id, self.entries[mid].retrieval_hint]
                for lamport, mid in self.order]

    def load(self, rows) -> None:
        for lamport, mid, sender, hint in rows:
            self.order.add((lamport, mid))
            self.entries[mid] = LogEntry(lamport, sender, hint)

    def export(self) -> dict[str, dict[str, int]]:
        """``{"lost": message id -> when given up, as a counter}``."""
        return {"lost": dict(self.lost)}

    def changes(self) -> dict[str, dict[str, int | None]]:
        """The entries changed since ``mark_saved``, if any, shaped as ``export``; None: gone."""
        return {"lost": {mid: self.lost.get(mid) for mid in self._lost_dirty}} if self._lost_dirty else {}

    def mark_saved(self) -> None:
        self._lost_dirty.clear()

    def counters(self) -> tuple[int]:
        return (self._lost_stamp,)

    def export_recent(self) -> list[str]:
        """What the next message cites, oldest first."""
        return list(self.recent)

    def restore(self, saved: dict[str, dict[str, int]], recent: list[str], counters: tuple[int]) -> None:
        """Back to what ``export``, ``export_recent`` and ``counters`` gave (after ``load``)."""
        self.lost = dict(sorted(saved["lost"].items(), key=lambda kv: kv[1]))
        self.recent.extend(recent)
        (self._lost_stamp,) = counters
