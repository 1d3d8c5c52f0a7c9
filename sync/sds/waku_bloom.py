"""The bloom filter of @waku/sds, the reference JavaScript SDS, bit for bit.

Its receive path reads every non-empty ``bloom_filter`` in this one fixed
format (and throws on anything shorter), so a participant that wants to be
understood by it must send exactly this:

* capacity 10,000 ids at error rate 0.001, which its probability table turns
  into k = 10 hash functions and 15 bits per id: m = 150,000 bits;
* the bits live in 1 + m // 64 = 2,344 unsigned 64-bit words, bit ``h`` in
  word ``h // 64`` at bit ``h % 64``, serialized big-endian: 18,752 bytes;
* the ``i``-th hash of an id ``s`` is Kirsch-Mitzenmacher double hashing,
  ``(|h(s)| mod m + i * (|h(s + " b")| mod m)) mod m``, where ``h`` is
  MurmurHash3 x86_32 with seed 0 read as a signed int32.

``h`` runs over the id's characters, one value per code point (its first
UTF-16 unit, as JavaScript's ``Array.from`` splits the string), not over
UTF-8 bytes. For ASCII - every message id either side
ever derives - the two are the same, and the C implementation in ``mmh3``
does the work; anything else takes the faithful pure-Python transcription.

Word ``w``'s big-endian bytes put bit ``b`` in byte ``7 - b // 8``, so in a
little-endian bit array over the serialized bytes, bit ``h`` sits at index
``h ^ 56``: membership tests and serialization need no conversion.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

import mmh3
from bitarray import bitarray

from .errors import RemoteProtocolError

CAPACITY = 10_000
ERROR_RATE = 0.001
NUM_HASHES = 10
NUM_BITS = 150_000
NUM_WORDS = 1 + NUM_BITS // 64
WIRE_BYTES = NUM_WORDS * 8
"""18,752: the length of every filter an @waku/sds participant sends."""

_MASK = 0xFFFFFFFF


def _murmur3_units(units: list[int]) -> int:
    """MurmurHash3 x86_32, seed 0, over ``units`` as the compiled reference
    reads them: each unit is or-ed into the block whole, even above 0xFF."""
    h = 0
    blocks = len(units) // 4 * 4
    for i in range(0, blocks, 4):
        k = 0
        for j in (3, 2, 1, 0):
            k = ((k << 8) & _MASK) | units[i + j]
        h ^= _mix(k & _MASK)
        h = ((h << 13) | (h >> 19)) & _MASK
        h = (h * 5 + 0xE6546B64) & _MASK
    k = 0
    for j in range(len(units) - blocks - 1, -1, -1):
        k = ((k << 8) & _MASK) | units[blocks + j]
    h ^= _mix(k & _MASK)
    h ^= len(units)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def _mix(k: int) -> int:
    k = (k * 0xCC9E2D51) & _MASK
    k = ((k << 15) | (k >> 17)) & _MASK
    return (k * 0x1B873593) & _MASK


def murmur3(text: str) -> int:
    """The reference's ``h``: a signed 32-bit MurmurHash3 of ``text``."""
    if text.isascii():
        return mmh3.hash(text, 0, signed=True)
    return _murmur3_units(_js_code_point_heads(text))


def _js_code_point_heads(text: str) -> list[int]:
    """``Array.from(text).map(c => c.charCodeAt(0))``: walk the UTF-16 units,
    a surrogate pair being one code point, and keep each one's first unit."""
    raw = text.encode("utf-16-le", "surrogatepass")
    units = [int.from_bytes(raw[i:i + 2], "little") for i in range(0, len(raw), 2)]
    heads, i = [], 0
    while i < len(units):
        heads.append(units[i])
        pair = 0xD800 <= units[i] <= 0xDBFF and i + 1 < len(units) and 0xDC00 <= units[i + 1] <= 0xDFFF
        i += 2 if pair else 1
    return heads


def hash_n(item: str, n: int, max_value: int) -> int:
    """The reference's ``hashN(item, n, maxValue)``."""
    a = abs(murmur3(item)) % max_value
    b = abs(murmur3(item + " b")) % max_value
    return abs(a + n * b) % max_value


@lru_cache(maxsize=16_384)
def bit_indices(key: str) -> tuple[int, ...]:
    """Indices of ``key``'s bits in the little-endian bit array over the wire
    bytes. Cached: our outgoing ids are tested against every filter that
    arrives. The two hashes are computed once, not once per index."""
    a = abs(murmur3(key)) % NUM_BITS
    b = abs(murmur3(key + " b")) % NUM_BITS
    return tuple(((a + i * b) % NUM_BITS) ^ 56 for i in range(NUM_HASHES))


class WakuBloom:
    """A filter in the @waku/sds format: built from ids, or decoded."""

    __slots__ = ("_bits", "_wire")

    def __init__(self, ids: Iterable[str] = (), *, wire: bytes | None = None) -> None:
        """Built from ``ids``, or decoded from ``wire`` (see ``decode``)."""
        self._bits = bitarray(endian="little")
        self._bits.frombytes(bytes(WIRE_BYTES) if wire is None else wire)
        self._wire = wire
        for key in ids:
            self.add(key)

    def add(self, key: str) -> None:
        bits = self._bits
        for i in bit_indices(key):
            bits[i] = 1
        self._wire = None

    def __contains__(self, key: str) -> bool:
        bits = self._bits
        return all(bits[i] for i in bit_indices(key))

    def to_bytes(self) -> bytes:
        if self._wire is None:
            self._wire = self._bits.tobytes()
        return self._wire

    @classmethod
    def decode(cls, data: bytes) -> WakuBloom:
        if len(data) != WIRE_BYTES:
            raise RemoteProtocolError("bad_bloom", f"@waku/sds filter of {len(data)} bytes, expected {WIRE_BYTES}")
        return cls(wire=bytes(data))

    def false_positive_rate(self) -> float:
        """Chance that an id never added tests positive: the fill ratio of
        the m bits, raised to the number of hashes."""
        return (self._bits.count(1) / NUM_BITS) ** NUM_HASHES
