"""The participants of a channel we heard from lately: bounded, and expiring.

Per sender, a channel remembers when it last heard from them and the latest
bloom filter they sent (the watch checks acknowledged messages against it).
Anyone can send a datagram under a fresh sender id, so this table must not
grow with the number of ids seen: it holds at most ``capacity`` senders,
evicting the one heard from least recently, and forgets anyone silent for
``expiry_ms`` (by then nothing reads their entry: the watch looks back
``lost_after_ms``, bloom acknowledgement ``participant_timeout_ms``). Both
cost O(1): ``now`` never decreases, so least recently heard is first in the
table. A filter may be as long as a datagram, so the filters together are
held to ``filter_budget`` bytes as well: past it, the least recently heard
participants' filters are let go (the participants stay; the watch skips a
participant without one).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator


class Participants:
    __slots__ = ("capacity", "expiry_ms", "filter_budget", "_heard", "_filters", "_filter_bytes", "_rank", "_stamp",
                 "evicted", "_dirty")

    def __init__(self, capacity: int, expiry_ms: int, filter_budget: int) -> None:
        self.capacity = capacity
        self.expiry_ms = expiry_ms
        self.filter_budget = filter_budget
        self._heard: OrderedDict[str, int] = OrderedDict()  # least recently heard first
        self._filters: dict[str, tuple[bytes, int]] = {}
        self._filter_bytes = 0
        self._rank: dict[str, int] = {}  # when last heard, as a counter: orders the table across restores
        self._stamp = 0
        self.evicted = 0
        self._dirty: set[str] = set()  # peers changed since ``mark_saved``

    def __len__(self) -> int:
        return len(self._heard)

    def __contains__(self, peer: str) -> bool:
        return peer in self._heard

    def heard(self, peer: str, now: int) -> None:
        self._heard[peer] = now
        self._heard.move_to_end(peer)
        self._stamp += 1
        self._rank[peer] = self._stamp
        self._dirty.add(peer)
        while len(self._heard) > self.capacity:
            self._forget(next(iter(self._heard)))
            self.evicted += 1

    def set_filter(self, peer: str, data: bytes, now: int) -> None:
        if peer not in self._heard:
            return
        self._drop_filter(peer)
        self._filters[peer] = (data, now)
        self._filter_bytes += len(data)
        self._dirty.add(peer)
        if self._filter_bytes > self.filter_budget:
            for oldest in self._heard:  # least recently heard first; ``peer`` (just heard) is last
                if self._filter_bytes <= self.filter_budget or oldest == peer:
                    break
                if self._drop_filter(oldest):
                    self._dirty.add(oldest)

    def _drop_filter(self, peer: str) -> bool:
        kept = self._filters.pop(peer, None)
        if kept is not None:
            self._filter_bytes -= len(kept[0])
        return kept is not None

    def filter_of(self, peer: str) -> tuple[bytes, int] | None:
        """The latest bloom filter ``peer`` sent, and when it arrived."""
        return self._filters.get(peer)

    def items(self) -> Iterator[tuple[str, int]]:
        """(peer, last heard), least recently heard first."""
        return iter(self._heard.items())

    def next_expiry(self) -> int | None:
        for at in self._heard.values():
            return at + self.expiry_ms
        return None

    def expire(self, now: int) -> None:
        while self._heard:
            peer, at = next(iter(self._heard.items()))
            if at + self.expiry_ms > now:
                break
            self._forget(peer)

    def _forget(self, peer: str) -> None:
        del self._heard[peer]
        self._drop_filter(peer)
        del self._rank[peer]
        self._dirty.add(peer)

    # ----------------------------------------------------------- persistence
    # A store keeps ``peers`` entry by entry (``_dirty`` until ``mark_saved``).

    def export(self) -> dict[str, dict[str, list]]:
        """``{"peers": peer -> [rank, last heard, filter, filter received at]}``;
        the rank orders the table on restore, least recently heard first."""
        return {"peers": {peer: self._export_entry(peer) for peer in self._heard}}

    def changes(self) -> dict[str, dict[str, list | None]]:
        """The entries changed since ``mark_saved``, if any, shaped as ``export``; None: gone."""
        return {"peers": {peer: self._export_entry(peer) for peer in self._dirty}} if self._dirty else {}

    def mark_saved(self) -> None:
        self._dirty.clear()

    def counters(self) -> tuple[int]:
        return (self._stamp,)

    def _export_entry(self, peer: str) -> list | None:
        if peer not in self._heard:
            return None
        data, at = self._filters.get(peer, (None, None))
        return [self._rank[peer], self._heard[peer], data, at]

    def restore(self, saved: dict[str, dict[str, list]], counters: tuple[int]) -> None:
        """Back to what ``export`` and ``counters`` gave (on a fresh table)."""
        for peer, (rank, heard, data, at) in sorted(saved["peers"].items(), key=lambda kv: kv[1][0]):
            self._heard[peer] = heard
            self._rank[peer] = rank
            if data is not None:
                self._filters[peer] = (data, at)
                self._filter_bytes += len(data)
        (self._stamp,) = counters

    def latest_filters(self) -> Iterator[tuple[str, bytes, int]]:
        """``(peer, its latest filter, when it arrived)`` for each that sent one."""
        return ((peer, data, at) for peer, (data, at) in self._filters.items())
