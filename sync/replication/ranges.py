"""Items, ranges and fingerprints for set reconciliation of log heights.

An item is (public_key, log_id, seq_num): one log at its height. ``ItemSet``
keeps one side's items sorted with prefix sums of their hashes, so any
range's fingerprint (``lift``) costs O(log n), and finds an item by its hash
for a range that differs by exactly one. ``separator`` picks the short bounds
that ranges are cut at.
"""

from __future__ import annotations

import bisect
import struct

import xxhash

from .messages import Item, ReplicationError

MIN: Item = ("", 0, 0)
INF = None  # an upper bound past every item (on the wire: MIN)
MASK = (1 << 64) - 1


def item_hash(item: Item) -> int:
    return xxhash.xxh64_intdigest(f"{item[0]}\x00{item[1]}\x00{item[2]}".encode())


def log_hash(item: tuple) -> bytes:
    """4 bytes naming an item's log, whatever its height."""
    return xxhash.xxh32_digest(f"{item[0]}\x00{item[1]}".encode())


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    n, shift = 0, 0
    for i in range(at, min(len(data), at + 10)):
        n |= (data[i] & 0x7F) << shift
        shift += 7
        if not data[i] & 0x80:
            return n, i + 1
    raise ReplicationError("fingerprint has a number cut off")


def lift(total: int, count: int, only: Item | None = None) -> bytes:
    """Sum and count; for a range of one item also its log's hash and its
    height, which let the other side tell "your log at height s" apart from
    "a log I lack" without the whole item."""
    out = struct.pack(">Q", total & MASK) + _varint(count)
    return out + log_hash(only) + _varint(only[2]) if only is not None else out


def unlift(data: bytes) -> tuple[int, int, tuple[bytes, int] | None]:
    """(sum, count, (log hash, height) of the one item or None)."""
    if len(data) < 9:
        raise ReplicationError("fingerprint is not 8 bytes and a count")
    count, at = _read_varint(data, 8)
    only = None
    if at < len(data):
        if count != 1 or len(data) < at + 5:
            raise ReplicationError("fingerprint has stray bytes after its count")
        seq, end = _read_varint(data, at + 4)
        if end != len(data) or seq >= 1 << 64:
            raise ReplicationError("fingerprint has stray bytes after its height")
        only = (data[at:at + 4], seq)
    return struct.unpack(">Q", data[:8])[0], count, only


def separator(prev: Item, nxt: Item) -> Item:
    """The shortest bound b with prev < b <= nxt, of the form (string, 0, 0)
    or (public_key, log_id, 0), so that it never splits a log's heights."""
    a, b = prev[0], nxt[0]
    if a != b:
        n = 0
        while n < len(a) and a[n] == b[n]:
            n += 1
        return (b[: n + 1], 0, 0)  # b differs from a at n, or a is a prefix of b
    return (b, nxt[1], 0)  # one author, two logs


def below(upper: Item | None, other: Item | None) -> bool:
    """upper <= other, where None is past every item."""
    return other is None or (upper is not None and upper <= other)


class ItemSet:
    """One side's sorted heights with prefix sums of their hashes."""

    def __init__(self, items: list[Item]) -> None:
        highest: dict[tuple[str, int], int] = {}
        for pk, log, seq in items:
            highest[(pk, log)] = max(seq, highest.get((pk, log), 0))
        self.items = sorted((pk, log, seq) for (pk, log), seq in highest.items())
        self.hashes = [item_hash(item) for item in self.items]
        self.sums = [0]
        for h in self.hashes:
            self.sums.append((self.sums[-1] + h) & MASK)
        self._by_hash: dict[int, int] | None = None

    def __len__(self) -> int:
        return len(self.items)

    def span(self, lower: Item, upper: Item | None) -> tuple[int, int]:
        lo = bisect.bisect_left(self.items, lower)
        hi = len(self.items) if upper is INF else bisect.bisect_left(self.items, upper)
        return lo, max(lo, hi)

    def fingerprint(self, lo: int, hi: int) -> tuple[int, int]:
        return (self.sums[hi] - self.sums[lo]) & MASK, hi - lo

    def find(self, h: int, lo: int, hi: int) -> int | None:
        """The index of my item with hash ``h`` if it lies in [lo, hi)."""
        if self._by_hash is None:  # built on the first difference only
            self._by_hash = {x: i for i, x in enumerate(self.hashes)}
        i = self._by_hash.get(h)
        return i if i is not None and lo <= i < hi else None

    def height(self, pk: str, log: int) -> int | None:
        i = bisect.bisect_left(self.items, (pk, log, 0))
        return self.items[i][2] if i < len(self.items) and self.items[i][:2] == (pk, log) else None

    def split(self, lo: int, hi: int, parts: int) -> list[Item]:
        """Bounds cutting items[lo:hi] into ``parts`` non-empty pieces of
        roughly equal size; each bound is the shortest separator found within
        a quarter piece of the ideal cut."""
        bounds, prev, n = [], lo, hi - lo
        for k in range(1, parts):
            ideal, slack = lo + n * k // parts, n // (4 * parts)
            a, b = max(prev + 1, ideal - slack), min(hi - 1, ideal + slack)
            if a > b:
                continue
            bound = separator(self.items[a - 1], self.items[b])
            bounds.append(bound)
            prev = bisect.bisect_left(self.items, bound, a, b + 1)
        return bounds
