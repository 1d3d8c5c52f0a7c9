"""Events about this peer itself: ready, joined and parted channels, its nick, errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .base import AppEvent


@dataclass(frozen=True, slots=True)
class Ready(AppEvent):
    """Listening; ``addresses`` are the ones we announce (others reach us there)."""

    name: ClassVar[str] = "ready"
    _optional: ClassVar[tuple[str, ...]] = ("private", "svs")
    peer_id: str
    nick: str
    port: int
    addresses: tuple[str, ...]
    channels: tuple[str, ...]
    private: tuple[str, ...] = ()  # which of ``channels`` are private (encrypted, known outside by a tag)
    svs: tuple[str, ...] = ()  # which of ``channels`` run on State Vector Sync (the others: SDS)


@dataclass(frozen=True, slots=True)
class Joined(AppEvent):
    """``channel`` is now the current one. ``already``: it was joined before
    (``/join`` of a joined channel switches to it; nothing is announced)."""

    name: ClassVar[str] = "joined"
    _optional: ClassVar[tuple[str, ...]] = ("private", "already", "svs")
    channel: str
    private: bool | None = None  # True for a private channel (left out of the JSON otherwise)
    already: bool = False  # joined before: the user interface switches to it
    svs: bool = False  # the channel runs on State Vector Sync (left out of the JSON otherwise)


@dataclass(frozen=True, slots=True)
class Parted(AppEvent):
    name: ClassVar[str] = "parted"
    channel: str


@dataclass(frozen=True, slots=True)
class NickChanged(AppEvent):
    name: ClassVar[str] = "nick"
    old: str
    nick: str


@dataclass(frozen=True, slots=True)
class Error(AppEvent):
    """A command of ours that could not be done, with a one-line reason."""

    name: ClassVar[str] = "error"
    reason: str


@dataclass(frozen=True, slots=True)
class Ignoring(AppEvent):
    """The people whose messages and typing are not shown (after ``/ignore``):
    their ids, and the nick each was last seen under, in the same order."""

    name: ClassVar[str] = "ignoring"
    nicks: tuple[str, ...]
    sender_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MessagesHeld(AppEvent):
    """Our messages wait on this peer for the channel to catch up (0: all went out)."""

    name: ClassVar[str] = "held"
    channel: str
    held: int


@dataclass(frozen=True, slots=True)
class Bye(AppEvent):
    name: ClassVar[str] = "bye"
