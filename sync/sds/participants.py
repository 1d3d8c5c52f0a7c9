"""The participants of a channel we heard from lately: bounded, and expiring.

Per sender, a channel remembers when it last heard from them and the latest
bloom filter they sent (the watch checks acknowledged messages against it).
Anyone can send a datagram under a fresh sender id, so this table must not
grow with the number of ids seen: it holds at most ``capacity`` senders,
evicting the one heard from least recently, and forgets anyone silent for
``expiry_ms`` (by then nothing reads their entry: the watch looks back
``lost_after_ms``, bloom acknowledgement ``participant_timeout_ms``). Both
cost O(1): ``now`` never decreases, so least recently heard is first in the
table.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator


class Participants:
    __slots__ = ("capacity", "expiry_ms", "_heard", "_filters", "evicted")

    def __init__(self, capacity: int, expiry_ms: int) -> None:
        self.capacity = capacity
        self.expiry_ms = expiry_ms
        self._heard: OrderedDict[str, int] = OrderedDict()  # least recently heard first
        self._filters: dict[str, tuple[bytes, int]] = {}
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._heard)

    def heard(self, peer: str, now: int) -> None:
        self._heard[peer] = now
        self._heard.move_to_end(peer)
        while len(self._heard) > self.capacity:
            self._forget(next(iter(self._heard)))
            self.evicted += 1

    def set_filter(self, peer: str, data: bytes, now: int) -> None:
        if peer in self._heard:
            self._filters[peer] = (data, now)

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
        self._filters.pop(peer, None)

    def export(self) -> tuple[list, list]:
        return ([[peer, at] for peer, at in self._heard.items()],
                [[peer, data, at] for peer, (data, at) in self._filters.items()])

    def restore(self, heard: list, filters: list) -> None:
        self._heard = OrderedDict((peer, at) for peer, at in heard)
        self._filters = {peer: (data, at) for peer, data, at in filters}
