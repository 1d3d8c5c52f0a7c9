"""A keyed deadline schedule: set, move or cancel a key's deadline in O(log n).

Engines keep several (SDS: resends, lost-dependency deadlines, SDS-R request
and response times) and answer ``get_timer()`` from their earliest. Each is a
dict of current deadlines plus a heap whose stale entries are skipped lazily,
so nothing is ever scanned linearly.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class Schedule(Generic[K]):
    __slots__ = ("_due", "_heap")

    def __init__(self) -> None:
        self._due: dict[K, int] = {}
        self._heap: list[tuple[int, K]] = []

    def __len__(self) -> int:
        return len(self._due)

    def __contains__(self, key: object) -> bool:
        return key in self._due

    def get(self, key: K) -> int | None:
        return self._due.get(key)

    def set(self, key: K, due: int) -> None:
        self._due[key] = due
        heapq.heappush(self._heap, (due, key))
        if len(self._heap) > 2 * len(self._due) + 64:
            self._heap = [(d, k) for k, d in self._due.items()]
            heapq.heapify(self._heap)

    def discard(self, key: K) -> None:
        self._due.pop(key, None)

    def next_due(self) -> int | None:
        heap, due = self._heap, self._due
        while heap and due.get(heap[0][1]) != heap[0][0]:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def pop_due(self, now: int, limit: int | None = None) -> list[K]:
        """Remove and return keys due at or before ``now``, earliest first."""
        out: list[K] = []
        while limit is None or len(out) < limit:
            at = self.next_due()
            if at is None or at > now:
                break
            _, key = heapq.heappop(self._heap)
            del self._due[key]
            out.append(key)
        return out

    def items(self) -> Iterator[tuple[K, int]]:
        """(key, deadline) pairs, earliest first."""
        return iter(sorted(self._due.items(), key=lambda kv: (kv[1], kv[0])))
