"""The base of every engine event, and the one event every engine shares.

Events are small frozen dataclasses (h11's ``_events.py`` is the model): an
engine appends them as things happen and the caller drains them with
``events()``. Subclasses are declared ``@dataclass(frozen=True, slots=True)``
and validate their fields in ``__post_init__`` where a bad value would mean
an engine bug, so the bug fails where it happens rather than in the store.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Event:
    """Base class of everything an engine's ``events()`` yields."""


@dataclass(frozen=True, slots=True)
class Rejected(Event):
    """Input from the network was dropped; ``kind`` names the counter it was
    counted under and ``reason`` says why, in one line."""

    kind: str
    reason: str

    def __post_init__(self) -> None:
        if not self.kind or "\n" in self.reason:
            raise ValueError("a rejection has a kind and a one-line reason")
