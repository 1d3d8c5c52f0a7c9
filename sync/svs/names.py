"""NDN Names: how SVS names groups and nodes (a NodeID is a Name).

A Name is TLV 7 holding name components, each a TLV of its own type; the
ordinary one is the GenericNameComponent, type 8. State vector entries are
sorted in NDN *canonical order* so that equal vectors encode to equal bytes
(which is what lets NDN aggregate equal Interests): component by component,
a component orders by type, then length, then bytes; a name orders before
every longer name it is a prefix of.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from sync.core import RemoteProtocolError

from . import tlv

NAME = 7
GENERIC = 8


@dataclass(frozen=True, slots=True, order=True)
class Name:
    """An NDN Name: a tuple of (component type, value) pairs."""

    components: tuple[tuple[int, bytes], ...]

    @classmethod
    def parse(cls, text: str) -> Name:
        """``/sds-chat/general`` -> two GenericNameComponents (UTF-8)."""
        parts = [part for part in text.split("/") if part]
        if not parts:
            raise ValueError(f"a name needs at least one component: {text!r}")
        return cls(tuple((GENERIC, part.encode()) for part in parts))

    @classmethod
    def of(cls, name: Name | str) -> Name:
        return name if isinstance(name, Name) else cls.parse(name)

    def __str__(self) -> str:
        return "".join("/" + (value.decode(errors="replace") if type_ == GENERIC else f"{type_}={value.hex()}")
                       for type_, value in self.components)

    def encode_components(self) -> bytes:
        return b"".join(tlv.tlv(type_, value) for type_, value in self.components)

    def encode(self) -> bytes:
        return _encoded(self)

    @classmethod
    def decode_value(cls, value: bytes) -> Name:
        """A Name from the value of a Name TLV (its components)."""
        return cls(tuple((type_, bytes(part)) for type_, part in tlv.elements(value)))

    @classmethod
    def decode(cls, data: bytes) -> Name:
        return cls.decode_value(tlv.single(data, NAME))

    def canonical_key(self) -> tuple[tuple[int, int, bytes], ...]:
        """Sorting by this key is NDN canonical order."""
        return tuple((type_, len(value), value) for type_, value in self.components)

    def __add__(self, other: Name) -> Name:
        return Name(self.components + other.components)


@lru_cache(maxsize=16_384)  # a member encodes the same few names (its group's nodes) at every save
def _encoded(name: Name) -> bytes:
    return tlv.tlv(NAME, name.encode_components())


def decode_name_value(value: bytes) -> Name:
    name = Name.decode_value(value)
    if not name.components:
        raise RemoteProtocolError("malformed", "an empty Name")
    return name
