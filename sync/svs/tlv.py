"""NDN TLV: the type-length-value framing every SVS packet is made of.

NDN packet format v0.3: TLV-TYPE and TLV-LENGTH are *variable-length
numbers* - one byte below 253, else a marker byte (253, 254, 255) and the
number in 2, 4 or 8 bytes, big-endian. A *NonNegativeInteger* value is 1, 2,
4 or 8 bytes, big-endian. Types below 32, and odd types, are *critical*: a
reader that does not know one must reject the packet; any other unknown type
is skipped. Decoding errors raise ``RemoteProtocolError("malformed", ...)``.
"""

from __future__ import annotations

from collections.abc import Iterator

from sync.core import RemoteProtocolError

MAX_NUMBER = (1 << 64) - 1


def encode_number(n: int) -> bytes:
    """A TLV-TYPE or TLV-LENGTH in its shortest form."""
    if n < 0 or n > MAX_NUMBER:
        raise ValueError(f"TLV number out of range: {n}")
    if n < 253:
        return bytes((n,))
    if n <= 0xFFFF:
        return b"\xfd" + n.to_bytes(2, "big")
    if n <= 0xFFFFFFFF:
        return b"\xfe" + n.to_bytes(4, "big")
    return b"\xff" + n.to_bytes(8, "big")


def encode_nonneg(n: int) -> bytes:
    """A NonNegativeInteger value: the shortest of 1, 2, 4 or 8 bytes."""
    if n < 0 or n > MAX_NUMBER:
        raise ValueError(f"NonNegativeInteger out of range: {n}")
    for size in (1, 2, 4, 8):
        if n < 1 << (8 * size):
            return n.to_bytes(size, "big")
    raise AssertionError("unreachable")


def decode_nonneg(value: bytes) -> int:
    if len(value) not in (1, 2, 4, 8):
        raise RemoteProtocolError("malformed", f"a NonNegativeInteger of {len(value)} bytes")
    return int.from_bytes(value, "big")


def tlv(type_: int, value: bytes) -> bytes:
    return encode_number(type_) + encode_number(len(value)) + value


def is_critical(type_: int) -> bool:
    return type_ < 32 or type_ % 2 == 1


def read_number(data: bytes | memoryview, pos: int) -> tuple[int, int]:
    """The variable-length number at ``pos`` and the position after it."""
    if pos >= len(data):
        raise RemoteProtocolError("malformed", "TLV cut short")
    first = data[pos]
    if first < 253:
        return first, pos + 1
    size = {253: 2, 254: 4, 255: 8}[first]
    end = pos + 1 + size
    if end > len(data):
        raise RemoteProtocolError("malformed", "TLV number cut short")
    return int.from_bytes(data[pos + 1:end], "big"), end


def elements(data: bytes) -> Iterator[tuple[int, bytes]]:
    """Each (type, value) in ``data``, a concatenation of TLV elements."""
    pos = 0
    while pos < len(data):
        type_, pos = read_number(data, pos)
        length, pos = read_number(data, pos)
        if pos + length > len(data):
            raise RemoteProtocolError("malformed", f"TLV {type_} claims {length} bytes, {len(data) - pos} left")
        yield type_, data[pos:pos + length]
        pos += length


def single(data: bytes, expected: int) -> bytes:
    """The value of ``data``, which must be exactly one TLV of type ``expected``."""
    parts = list(elements(data))
    if len(parts) != 1 or parts[0][0] != expected:
        raise RemoteProtocolError("malformed", f"expected one TLV of type {expected}")
    return parts[0][1]


def unknown(type_: int, where: str) -> None:
    """Skip a non-critical unknown element; refuse a critical one."""
    if is_critical(type_):
        raise RemoteProtocolError("malformed", f"unknown critical TLV {type_} in {where}")
