"""Fitting a state vector into datagrams, however many producers there are.

The choice: **split vectors for the whole state, the most recently active
entries for a new publication.**

* A vector that fits one datagram is sent whole.
* A larger one (hundreds of producers), when the periodic or the suppression
  timer sends the whole state, is cut in canonical order into parts, each a
  sync interest of its own named ``/<group>/<state-vector>/<k>/<last>``
  (two SegmentNameComponents: part k of 0..last). Part k speaks for the
  stretch of NodeIDs from its first entry to its last (part 0 from the very
  start, the last part to the very end); consecutive parts share one entry,
  so together they leave no gap. Inside its stretch a part is read like a
  whole vector - an entry it lacks counts as 0 - so a member that is missing
  producers is still seen to be outdated, and answered.
* A sync interest sent *on a new publication* is one datagram: an *excerpt*
  ``/<group>/<state-vector>/<0>`` with the publisher's own entry first, then
  the most recently updated ones as they fit. An excerpt speaks only for the
  entries it holds, so it never looks outdated for what it leaves out.
"""

from __future__ import annotations

from typing import TypeVar

K = TypeVar("K")


def pack(entries: list[tuple[K, bytes]], budget: int) -> list[list[tuple[K, bytes]]]:
    """Pack (key, encoded entry) pairs, already in canonical order, into parts
    of at most ``budget`` bytes; each part after the first opens with the last
    entry of the part before, so the parts' stretches leave no gap between
    them. An entry that cannot share a part still gets one (the datagram is
    then oversized: a NodeID that long is the application's mistake, and
    dropping it would stall that producer)."""
    parts: list[list[tuple[K, bytes]]] = [[]]
    size = 0
    for entry in entries:
        current = parts[-1]
        if len(current) > 1 and size + len(entry[1]) > budget:
            parts.append([current[-1]])
            size = len(current[-1][1])
        parts[-1].append(entry)
        size += len(entry[1])
    return parts


def excerpt(entries: list[tuple[K, bytes]], budget: int) -> list[tuple[K, bytes]]:
    """As many entries as fit, in the order given (most recent first)."""
    out, size = [], 0
    for entry in entries:
        if out and size + len(entry[1]) > budget:
            break
        out.append(entry)
        size += len(entry[1])
    return out
