"""Caches bounded in bytes as well as in entries, least recently used out first.

What peers send is cached in a few places (where datagrams already verified
were routed), each for work repeated across steps. A bound on entries alone
is not a bound on memory: anyone with a key can send valid datagrams up to
64 KB, and 9,000 of them kept 475 MiB alive.
So each entry is charged a size - what it holds of the input, counted twice
where a parsed copy sits beside the bytes - and past either bound the least
recently used entries go. (It lives with the crypto layer, the lowest that
uses it, which imports nothing else of the application.)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

OVERHEAD = 200
"""Bytes charged per entry beyond its data: the key, the tuple, the dict's slot."""


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
