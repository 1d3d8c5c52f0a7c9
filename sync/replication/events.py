"""What a replication ``Connection`` reports, on the ``sync.core`` Event base.

Two of them are requests: the connection never reads the store itself, it
asks (``HeightsWanted``, ``EntriesWanted``) and waits until the runtime
answers with ``Connection.provide_heights`` / ``provide_entries`` - in the
same step or later, after reading SQLite wherever it likes.
"""

from __future__ import annotations

from dataclasses import dataclass

from sync.core.events import Event

__all__ = ["Closed", "EntriesWanted", "EntryArrived", "EntryDropped", "EntryReceived", "HeightsWanted",
           "RemoteAnnounced", "SessionFinished"]


@dataclass(frozen=True, slots=True)
class RemoteAnnounced(Event):
    """The other side announced (or re-announced) the channels it syncs."""

    channels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HeightsWanted(Event):
    """Session ``session_id`` needs our log heights in ``channels``: answer
    with ``provide_heights(session_id, {channel: [(author, height), ...]})``,
    where a height is the highest seq up to which the author's log in that
    channel has no holes (0 if seq 1 is missing)."""

    session_id: int
    channels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EntriesWanted(Event):
    """Session ``session_id`` sends the other side what it lacks: for each
    ``(channel, author, above)`` every entry of ours by ``author`` in
    ``channel`` with seq > ``above``, in seq order - including entries beyond
    a hole in our own log. Answer with ``provide_entries(session_id,
    entries)``, in one call or in chunks (``done=False`` until the last)."""

    session_id: int
    wants: tuple[tuple[str, str, int], ...]

    def __post_init__(self) -> None:
        if not self.wants:
            raise ValueError("EntriesWanted names at least one log")


@dataclass(frozen=True, slots=True)
class EntryArrived(Event):
    """An entry arrived in session ``session_id`` (about ``channels``): the
    runtime says what it is - ``Connection.entry_checked`` - before it hands
    the connection its next frame."""

    session_id: int
    channels: tuple[str, ...]
    entry: bytes


@dataclass(frozen=True, slots=True)
class EntryReceived(Event):
    """An entry for ``channel`` arrived and passed the runtime's check and the
    session's; ``checked`` is what the runtime's check made of it, handed
    back so that the entry is read once."""

    session_id: int
    channel: str
    entry: bytes
    checked: object = None


@dataclass(frozen=True, slots=True)
class EntryDropped(Event):
    """An entry was refused and is not reported as received; ``kind`` names
    why (``EntryRefused``). If the refusal was fatal, ``Closed`` follows."""

    session_id: int
    kind: str
    reason: str


@dataclass(frozen=True, slots=True)
class SessionFinished(Event):
    """Both sides said ``SyncDone``: the session is over (``live`` False) or
    stays open to stream new entries (``live`` True)."""

    session_id: int
    channels: tuple[str, ...]
    sent: int
    received: int
    live: bool


@dataclass(frozen=True, slots=True)
class Closed(Event):
    """The conversation is over; ``reason`` is one line. Nothing after it is
    reported, and the runtime should close the stream."""

    reason: str
