"""Events the SDS engine reports, as small frozen dataclasses.

The caller drains them with ``Channel.events()`` after each step. They share
the ``sync.core`` base ``Event`` (and its ``Rejected``); each is validated on
construction, so an engine bug that would produce a nonsensical event fails
loudly where it happens rather than downstream in the store or UI.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sync.core.events import Event, Rejected

__all__ = [
    "Acknowledged", "Buffered", "Delivered", "EphemeralReceived", "Event", "HistoryEntry", "Lost",
    "Missing", "PossiblyAcknowledged", "Rejected", "RepairRequested", "RepairSent",
]


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """A reference to a message: its id, how to fetch it, who wrote it."""

    message_id: str
    retrieval_hint: bytes | None = None
    sender_id: str | None = None

    def __post_init__(self) -> None:
        if not self.message_id:
            raise ValueError("HistoryEntry needs a message_id")


@dataclass(frozen=True, slots=True)
class Delivered(Event):
    """A content message entered the local log.

    ``position`` is its index in the log at the moment of delivery (a message
    that arrives late is inserted before newer ones, so later positions shift).
    ``gaps`` names dependencies that were given up as lost before delivery.
    ``wire`` is the exact datagram, for the caller to store and to serve
    (and to read the causal history from, should it want it: nothing on the
    receive path does, so it is not built for every message).
    """

    message_id: str
    sender_id: str
    lamport: int
    content: bytes
    position: int
    wire: bytes = field(repr=False)
    received_at: int = 0
    own: bool = False
    gaps: tuple[str, ...] = ()
    decoded: object = field(default=None, repr=False, compare=False)
    """What the caller made of ``content`` when it handed the message over
    (``Checked.decoded``, ``Channel.send``); None if nothing, or after a restore."""

    def __post_init__(self) -> None:
        if self.position < 0:
            raise ValueError("log position must be >= 0")
        if not self.content:
            raise ValueError("only content messages are delivered")


@dataclass(frozen=True, slots=True)
class Buffered(Event):
    """A content message arrived but waits for earlier history (``missing``
    names what it waits for); ``Delivered`` follows once that is in."""

    message_id: str
    sender_id: str
    lamport: int
    content: bytes
    waiting_for: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PossiblyAcknowledged(Event):
    """Another participant's bloom filter holds one of our messages."""

    message_id: str
    peers: int

    def __post_init__(self) -> None:
        if self.peers < 1:
            raise ValueError("possibly acknowledged by at least one peer")


@dataclass(frozen=True, slots=True)
class Acknowledged(Event):
    """One of our messages is acknowledged and left the outgoing buffer.

    ``via`` is ``"causal_history"`` (someone built on it) or ``"bloom"``
    (enough distinct bloom filters held it to rule out false positives).
    """

    message_id: str
    via: str
    peers: int

    def __post_init__(self) -> None:
        if self.via not in ("causal_history", "bloom"):
            raise ValueError(f"unknown acknowledgement source {self.via!r}")


@dataclass(frozen=True, slots=True)
class AcknowledgedByMore(Event):
    """An acknowledged message of ours is held by one more participant (it
    named it in its causal history, or its bloom filter holds it): ``peers``
    distinct participants now do. ``Acknowledged`` reports only the count at
    the moment of acknowledgement - usually the first participant."""

    message_id: str
    peers: int


@dataclass(frozen=True, slots=True)
class Missing(Event):
    """Dependencies we lack; the caller may fetch them (retrieval hints help).

    Reported once, when first named: each id in one ``Missing`` only (the
    caller retries a fetch on its own, asking ``Channel.is_missing`` whether
    it still is). ``waiting`` counts the buffered messages.
    """

    entries: tuple[HistoryEntry, ...]
    waiting: int

    def __post_init__(self) -> None:
        if not self.entries:
            raise ValueError("Missing names at least one entry")


@dataclass(frozen=True, slots=True)
class Lost(Event):
    """A dependency was not found in time and is treated as irretrievably lost.

    ``released`` are the buffered messages this lets through (each then
    arrives as ``Delivered`` with the gap recorded).
    """

    entry: HistoryEntry
    released: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EphemeralReceived(Event):
    """An ephemeral message (e.g. a typing indicator): not logged, not acked."""

    sender_id: str
    content: bytes
    received_at: int


@dataclass(frozen=True, slots=True)
class RepairRequested(Event):
    """SDS-R: we attached repair requests for these ids to an outgoing message."""

    message_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RepairSent(Event):
    """SDS-R: we rebroadcast a message someone asked to be repaired."""

    message_id: str
