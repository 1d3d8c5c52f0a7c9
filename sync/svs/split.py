"""Fitting a state vector into datagrams, however many producers there are.

The choice: **split vectors, most recently active entries first.** A vector
that fits one datagram is sent whole. A larger one (hundreds of producers) is
cut into parts, each a sync interest of its own with a Segment component
(``/<group>/<state-vector>/<part>``) and each a valid state vector in
canonical order. Entries are packed by recency - the entry updated last goes
into part 0 - so the part that matters most (new publications) is the first
to leave and the most likely to arrive; the periodic and the suppression
sync interests send every part, so every entry is still repeated each period.
A sync interest sent *on a new publication* carries part 0 only: the
publisher's own entry and as many recent ones as fit.

A receiver reads a part as a *partial* vector: entries in it are compared as
usual, entries absent from it say nothing (they are in another part), so a
split vector never looks outdated merely for being split.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

K = TypeVar("K")


def pack(entries: Iterable[tuple[K, bytes]], budget: int) -> list[list[tuple[K, bytes]]]:
    """Greedily pack (key, encoded entry) pairs, in the order given, into parts of at
    most ``budget`` bytes. An entry larger than the budget gets a part to
    itself (the datagram will be oversized; a NodeID that long is the
    application's mistake, and dropping it would stall that producer)."""
    parts: list[list[tuple[K, bytes]]] = []
    current: list[tuple[K, bytes]] = []
    size = 0
    for entry in entries:
        if current and size + len(entry[1]) > budget:
            parts.append(current)
            current, size = [], 0
        current.append(entry)
        size += len(entry[1])
    if current or not parts:
        parts.append(current)
    return parts
