"""An SVS member's state as plain data: the layout's version and the
encodings its parts share (``Channel.export_state`` puts the parts'
exports together; each part exports and restores its own fields).

Producers travel as ``[encoded NodeID Name, bootstrap]``; addresses, which
are whatever the runtime passes as ``source``, have their tuples written as
lists (CBOR has no tuples) and turned back on restore.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .names import Name
from .vector import Producer

VERSION = 1


def seed_for(producer: Producer) -> bytes:
    return hashlib.sha256(producer.node.encode() + producer.bootstrap.to_bytes(8, "big")).digest()


def address_to_plain(address: Any) -> Any:
    return [address_to_plain(a) for a in address] if isinstance(address, (tuple, list)) else address


def address_from_plain(address: Any) -> Any:
    return tuple(address_from_plain(a) for a in address) if isinstance(address, list) else address


def vector_to_plain(vector: dict[Producer, int]) -> list:
    return [[p.node.encode(), p.bootstrap, seq] for p, seq in vector.items()]


def vector_from_plain(entries: list) -> dict[Producer, int]:
    return {Producer(Name.decode(n), b): seq for n, b, seq in entries}


def name_to_plain(name: Name | None) -> bytes | None:
    return None if name is None else name.encode()


def name_from_plain(data: bytes | None) -> Name | None:
    return None if data is None else Name.decode(data)
