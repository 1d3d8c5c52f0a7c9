"""Tables bounded in size, the entry used longest ago out first.

Much of what a peer keeps is keyed by what others choose - sender ids,
service names, addresses, channel names - and anyone can make more of those:
such a table keeps the latest so many (``Latest``). What peers send is also
cached in a few places (where datagrams already verified were routed), each
for work repeated across steps, and there a bound on entries alone is not a
bound on memory: anyone with a key can send valid datagrams up to 64 KB, and
9,000 of them kept 475 MiB alive. So a cache (``ByteLru``) charges each entry
a size - what it holds of the input, counted twice where a parsed copy sits
beside the bytes - and past either bound the least recently used go.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

OVERHEAD = 200
"""Bytes charged per entry beyond its data: the key, the tuple, the dict's slot."""


class Latest(Generic[K, V]):
    """A mapping that keeps the ``capacity`` entries put or touched latest,
    oldest first. Reading (``get``, ``in``) is not a use: the caller says
    what counts as one (``touch``)."""

    __slots__ = ("capacity", "_entries")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[K, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __iter__(self) -> Iterator[K]:
        return iter(self._entries)

    def __getitem__(self, key: K) -> V:
        return self._entries[key]

    def __delitem__(self, key: K) -> None:
        del self._entries[key]

    def get(self, key: K, default: Any = None) -> Any:
        return self._entries.get(key, default)

    def items(self):
        return self._entries.items()

    def values(self):
        return self._entries.values()

    def put(self, key: K, value: V) -> K | None:
        """Keep ``value`` under ``key`` as the latest; the key dropped to make room, if any."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self.capacity:
            return self._entries.popitem(last=False)[0]
        return None

    def touch(self, key: K) -> None:
        """``key`` (held) was used: it is the latest now."""
        self._entries.move_to_end(key)

    def pop(self, key: K, default: Any = None) -> Any:
        return self._entries.pop(key, default)

    def clear(self) -> None:
        self._entries.clear()


class ByteLru:
    __slots__ = ("capacity", "max_bytes", "bytes", "_entries")

    def __init__(self, capacity: int, max_bytes: int) -> None:
        self.capacity, self.max_bytes = capacity, max_bytes
        self.bytes = 0
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def get(self, key: Hashable, default: Any = None) -> Any:
        entry = self._entries.get(key)
        if entry is None:
            return default
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        """Keep ``value`` under ``key``, charged ``size`` bytes (plus ``OVERHEAD``)."""
        old = self._entries.pop(key, None)
        if old is not None:
            self.bytes -= old[1]
        size += OVERHEAD
        self._entries[key] = (value, size)
        self.bytes += size
        while len(self._entries) > self.capacity or self.bytes > self.max_bytes:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.bytes -= dropped

    def clear(self) -> None:
        self._entries.clear()
        self.bytes = 0
