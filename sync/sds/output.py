"""What a channel's parts hand back to the caller, collected in one place."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .events import Event


@dataclass(slots=True)
class Output:
    events: list[Event] = field(default_factory=list)
    datagrams: list[bytes] = field(default_factory=list)
    stats: Counter[str] = field(default_factory=Counter)

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def transmit(self, wire: bytes) -> None:
        self.datagrams.append(wire)

    def drain_events(self) -> list[Event]:
        events = list(self.events)
        self.events.clear()
        return events

    def drain_datagrams(self) -> list[bytes]:
        datagrams = list(self.datagrams)
        self.datagrams.clear()
        return datagrams

    def export(self) -> dict:
        """The datagrams not yet drained and the counters, as plain data:
        ``{"outbox": ..., "stats": ...}`` (events are drained before a save)."""
        return {"outbox": list(self.datagrams), "stats": dict(self.stats)}

    def restore(self, saved: dict) -> None:
        self.datagrams.extend(saved["outbox"])
        self.stats.update(saved["stats"])
