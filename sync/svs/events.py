"""What the SVS engine reports (``Channel.events()``), as frozen dataclasses.

A producer is named by its node (an NDN name, written ``/a/b``) and its
bootstrap time (0 for a 2021-style node without one).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from sync.core.events import Event, Rejected

__all__ = ["DataWanted", "Delivered", "Event", "Known", "Missing", "Rejected"]


@dataclass(frozen=True, slots=True)
class Delivered(Event):
    """A publication, delivered in each producer's sequence order. ``own``:
    this member just published it - the runtime commits it (and so the
    sequence number) before transmitting, so a crash never reuses ``seq``."""

    node: str
    bootstrap: int
    seq: int
    content: bytes
    own: bool = False

    def __post_init__(self) -> None:
        if self.seq < 1:
            raise ValueError("sequence numbers start at 1")


@dataclass(frozen=True, slots=True)
class Missing(Event):
    """A state vector showed publications ``low``..``high`` that this member
    lacks; they are being fetched."""

    node: str
    bootstrap: int
    low: int
    high: int

    def __post_init__(self) -> None:
        if not 1 <= self.low <= self.high:
            raise ValueError("a missing range is 1 <= low <= high")


@dataclass(frozen=True, slots=True)
class DataWanted(Event):
    """A member asked for a publication this member delivered but no longer
    caches; the runtime answers with ``Channel.provide(...)`` from its store."""

    node: str
    bootstrap: int
    seq: int
    requester: Hashable


@dataclass(frozen=True, slots=True)
class Known(Event):
    """The state vectors of ``members`` other members show this member's own
    publication ``seq``. A vector names what a member has *heard of* (spec
    section 4.4: a node updates its state as a sync interest arrives, before
    it fetches), so each of them holds the publication or is fetching it -
    and keeps retrying until it holds it. Reported when the count grows."""

    seq: int
    members: int
