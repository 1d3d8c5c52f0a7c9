"""Bloom filters of received message ids, on pybloom-live.

The spec leaves the filter's format open, so ours carries its parameters with
the bits and any receiver can test membership without prior agreement:

    offset  size  field
    0       1     format version (1)
    1       1     num_slices k (hash functions, one bit slice each)
    2       4     bits_per_slice m (little-endian u32)
    6       4     capacity (u32)
    10      4     count: ids added since the last rollover (u32)
    14      8     error_rate the filter was sized for (little-endian f64)
    22      ...   k*m bits, slice after slice, little-endian bit order

Hashing is pybloom-live's ``make_hashfuncs(k, m)``: bit ``i`` of slice ``s``
is set for an id when the ``s``-th hash of its UTF-8 bytes, mod m, equals i.

The local filter rolls over at capacity: it is rebuilt from the newest half of
the ids it held, so recent ids - the ones peers still need acknowledged - are
never forgotten, and the rebuild costs O(1) amortised per id.

For a store, the ids are numbered in the order they were added: a new id is
one entry to write and the one it pushes out one to delete (``changed_ids``),
so saving a step costs the same with 10 ids or ``capacity`` of them.
"""

from __future__ import annotations

import math
import struct
from collections import deque
from functools import lru_cache

from bitarray import bitarray
from pybloom_live import BloomFilter
from pybloom_live.pybloom import make_hashfuncs

from .errors import RemoteProtocolError

FORMAT_VERSION = 1
_HEADER = struct.Struct("<BBIIId")
MAX_SLICES = 64
MAX_BITS = 1 << 20


@lru_cache(maxsize=64)
def _hash_maker(num_slices: int, bits_per_slice: int):
    return make_hashfuncs(num_slices, bits_per_slice)[0]


@lru_cache(maxsize=16_384)
def _bit_positions(num_slices: int, bits_per_slice: int, key: str) -> tuple[int, ...]:
    """Absolute bit indices of ``key``: cached, since the outgoing buffer's ids
    are tested against every filter that arrives."""
    hashes = _hash_maker(num_slices, bits_per_slice)(key)
    return tuple(s * bits_per_slice + h for s, h in enumerate(hashes))


class RollingBloom:
    """The participant's own filter of received content-message ids."""

    def __init__(self, capacity: int, error_rate: float) -> None:
        self.capacity = capacity
        self.error_rate = error_rate
        self._recent: deque[str] = deque(maxlen=capacity)
        self._next = 0  # the number the next id added gets
        self._changed: dict[int, str | None] = {}  # since ``mark_saved``: number -> id, None: pushed out
        self._filter = BloomFilter(capacity, error_rate)
        self._wire: bytes | None = None

    def __contains__(self, key: str) -> bool:
        return key in self._filter

    def __len__(self) -> int:
        return self._filter.count

    def add(self, key: str) -> None:
        if self._filter.count >= self.capacity:
            self._rebuild(self.capacity // 2)
        self._filter.add(key, skip_check=True)
        if len(self._recent) == self.capacity:
            self._changed[self._next - self.capacity] = None
        self._recent.append(key)
        self._changed[self._next] = key
        self._next += 1
        self._wire = None

    def _rebuild(self, keep: int) -> None:
        self._filter = BloomFilter(self.capacity, self.error_rate)
        recent = list(self._recent)[-keep:] if keep else []
        for key in recent:
            self._filter.add(key, skip_check=True)

    def ids(self) -> list[str]:
        """The ids in the filter now, oldest first."""
        count = self._filter.count
        return list(self._recent)[-count:] if count else []

    def to_bytes(self) -> bytes:
        if self._wire is None:
            f = self._filter
            header = _HEADER.pack(
                FORMAT_VERSION, f.num_slices, f.bits_per_slice,
                f.capacity, f.count, f.error_rate,
            )
            self._wire = header + f.bitarray.tobytes()
        return self._wire

    def export(self) -> dict:
        """How many of the newest ids are in the filter now, and the number
        the next id gets; with ``export_ids`` enough to rebuild it bit for bit."""
        return {"in_filter": self._filter.count, "next": self._next}

    def export_ids(self) -> dict[str, str]:
        """The ids the filter is built from, by number (as text)."""
        first = self._next - len(self._recent)
        return {str(number): key for number, key in enumerate(self._recent, first)}

    def changed(self) -> bool:
        """Has an id been added since ``mark_saved``? (Then ``export`` changed too.)"""
        return bool(self._changed)

    def changed_ids(self) -> dict[str, str | None]:
        """The ids added since ``mark_saved``, and those pushed out (None), by number."""
        return {str(number): key for number, key in self._changed.items()}

    def mark_saved(self) -> None:
        self._changed.clear()

    def restore(self, state: dict, ids: dict[str, str]) -> None:
        """Back to what ``export`` and ``export_ids`` gave (on a fresh filter)."""
        self._recent.extend(key for _, key in sorted((int(number), key) for number, key in ids.items()))
        self._next = state["next"]
        self._rebuild(min(state["in_filter"], self.capacity))


class WireBloom:
    """A filter decoded from another participant's message, for membership."""

    __slots__ = ("num_slices", "bits_per_slice", "count", "_bits")

    def __init__(self, num_slices: int, bits_per_slice: int, count: int, bits: bitarray) -> None:
        self.num_slices = num_slices
        self.bits_per_slice = bits_per_slice
        self.count = count
        self._bits = bits

    @classmethod
    def decode(cls, data: bytes) -> WireBloom:
        if len(data) < _HEADER.size:
            raise RemoteProtocolError("bad_bloom", f"bloom filter of {len(data)} bytes is shorter than its header")
        version, k, m, _capacity, count, _rate = _HEADER.unpack_from(data)
        if version != FORMAT_VERSION:
            raise RemoteProtocolError("bad_bloom", f"unknown bloom filter format {version}")
        if not (1 <= k <= MAX_SLICES and 1 <= m and k * m <= MAX_BITS):
            raise RemoteProtocolError("bad_bloom", f"implausible bloom parameters k={k} m={m}")
        body = data[_HEADER.size:]
        if len(body) != (k * m + 7) // 8:
            expected = (k * m + 7) // 8
            raise RemoteProtocolError("bad_bloom", f"bloom filter body is {len(body)} bytes, expected {expected}")
        bits = bitarray(endian="little")
        bits.frombytes(body)
        return cls(k, m, count, bits)

    def __contains__(self, key: str) -> bool:
        bits = self._bits
        for i in _bit_positions(self.num_slices, self.bits_per_slice, key):
            if not bits[i]:
                return False
        return True

    def false_positive_rate(self) -> float:
        """Chance that an id never added tests positive: the fill ratio of
        the bits raised to the number of slices."""
        fill = self._bits.count(1, 0, self.num_slices * self.bits_per_slice) / (
            self.num_slices * self.bits_per_slice
        )
        return fill**self.num_slices


def wire_size(capacity: int, error_rate: float) -> int:
    """Bytes a full filter of these parameters takes on the wire."""
    k = math.ceil(math.log2(1 / error_rate))
    m = math.ceil(capacity * abs(math.log(error_rate)) / (k * math.log(2) ** 2))
    return _HEADER.size + (k * m + 7) // 8
