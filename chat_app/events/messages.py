"""Events about a channel's messages: delivered, changed, waiting, acknowledged, missing, lost, rejected
input, typing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from chat_app.address import Address
from chat_app.file_offer import FileOffer

from .base import AppEvent


@dataclass(frozen=True, slots=True)
class MessageDelivered(AppEvent):
    """A message took its place in the channel's log (and is in the store)."""

    name: ClassVar[str] = "delivered"
    _optional: ClassVar[tuple[str, ...]] = ("gaps", "undecodable", "about")
    _unprinted: ClassVar[tuple[str, ...]] = ("offer",)
    channel: str
    position: int
    message_id: str
    sender_id: str
    lamport: int
    nick: str | None
    kind: str | None
    text: str | None
    seq: int | None
    own: bool
    gaps: tuple[str, ...] = ()
    undecodable: str | None = None
    about: str | None = None  # a reply, reaction, edit or deletion: the id of the message it is about
    offer: FileOffer | None = None  # a file message: its offer, parsed once when its payload was decoded


@dataclass(frozen=True, slots=True)
class TopicChanged(AppEvent):
    """The channel's topic: the latest ``topic`` message in log order (sent
    on a change, on joining a channel that has one, and on ``/topic``)."""

    name: ClassVar[str] = "topic"
    channel: str
    topic: str
    nick: str | None
    message_id: str


@dataclass(frozen=True, slots=True)
class MessageChanged(AppEvent):
    """What a message has become, from the edits, deletions and reactions
    about it in the log (``chat_app.annotations``): sent when one of them is
    delivered, and when a message arrives after some about it."""

    name: ClassVar[str] = "changed"
    channel: str
    message_id: str
    text: str
    edited: bool
    deleted: bool
    reactions: tuple[tuple[str, int], ...]  # (emoji, how many people)


@dataclass(frozen=True, slots=True)
class AboutRejected(AppEvent):
    """A reaction, edit or deletion that changes nothing: the message it names
    is not in the log, or is someone else's to edit or delete. It stays
    stored, since the log is the same on every peer; it is shown nowhere."""

    name: ClassVar[str] = "about_rejected"
    channel: str
    message_id: str
    about: str
    reason: str


@dataclass(frozen=True, slots=True)
class MessageWaiting(AppEvent):
    """A message arrived before some it depends on; shown, not yet placed."""

    name: ClassVar[str] = "waiting"
    _unprinted: ClassVar[tuple[str, ...]] = ("offer",)
    channel: str
    message_id: str
    sender_id: str
    lamport: int
    nick: str | None
    kind: str | None
    text: str | None
    waiting_for: int
    offer: FileOffer | None = None  # a file message: its offer, parsed once when its payload was decoded


@dataclass(frozen=True, slots=True)
class MessageAcknowledged(AppEvent):
    """``state`` is "acknowledged" (``via`` says how) or "possibly_acknowledged"."""

    name: ClassVar[str] = "ack"
    _optional: ClassVar[tuple[str, ...]] = ("via",)
    channel: str
    message_id: str
    state: str
    peers: int
    via: str | None = None


@dataclass(frozen=True, slots=True)
class MessagesMissing(AppEvent):
    """History named that we lack: ``message_ids`` are newly missing (each
    is reported once, when first named; the runtime asks for it again on
    its own), ``waiting`` the messages held for history."""

    name: ClassVar[str] = "missing"
    channel: str
    waiting: int
    message_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FetchAsked(AppEvent):
    """We asked for missing messages: of ``to`` (their author), or of the
    whole channel (``to`` null); ``again`` of this round's ids were asked for
    before. What a benchmark reads to see where recovery's seconds go."""

    name: ClassVar[str] = "fetch"
    channel: str
    message_ids: tuple[str, ...]
    to: Address | None
    again: int


@dataclass(frozen=True, slots=True)
class MessageLost(AppEvent):
    name: ClassVar[str] = "lost"
    channel: str
    message_id: str
    released: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DatagramRejected(AppEvent):
    """Input from the network that was dropped, and why."""

    name: ClassVar[str] = "rejected"
    kind: str
    reason: str


@dataclass(frozen=True, slots=True)
class Typing(AppEvent):
    name: ClassVar[str] = "typing"
    channel: str
    peer_id: str
    nick: str
    expires_at: int


@dataclass(frozen=True, slots=True)
class TypingStopped(AppEvent):
    name: ClassVar[str] = "typing_stopped"
    channel: str
    peer_id: str
