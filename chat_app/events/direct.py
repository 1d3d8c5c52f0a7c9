"""Events of direct conversations (MVDS): opened, delivered, acknowledged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from chat_app.file_offer import FileOffer

from .base import AppEvent


@dataclass(frozen=True, slots=True)
class Invited(AppEvent):
    """``nick`` (``peer_id``) invites us to the private channel ``channel``:
    nothing happens until the user joins it (``/join #channel``), which then
    takes the key that came with the invitation instead of a passphrase."""

    name: ClassVar[str] = "invited"
    channel: str
    peer_id: str
    nick: str | None


@dataclass(frozen=True, slots=True)
class InviteSent(AppEvent):
    """Our invitation to ``channel`` went to ``nick``, sealed to them alone."""

    name: ClassVar[str] = "invite_sent"
    channel: str
    peer_id: str
    nick: str | None


@dataclass(frozen=True, slots=True)
class DmOpened(AppEvent):
    """A direct conversation with ``peer_id`` (``/query``, or their first
    message); ``channel`` (``@`` and their id) names it in the store and UI."""

    name: ClassVar[str] = "dm_open"
    channel: str
    peer_id: str
    nick: str | None


@dataclass(frozen=True, slots=True)
class DmDelivered(AppEvent):
    """A direct message is in the store: theirs, delivered (exactly once, in
    order), or ours, sent (``own``; ``dm_ack`` follows when they hold it)."""

    name: ClassVar[str] = "dm_delivered"
    _optional: ClassVar[tuple[str, ...]] = ("about",)
    _unprinted: ClassVar[tuple[str, ...]] = ("offer",)
    channel: str
    peer_id: str
    peer_nick: str | None  # the other person's nick, as we know it
    message_id: str
    sender_id: str
    timestamp: int  # the MVDS timestamp: orders the conversation as a lamport orders a channel
    nick: str | None
    kind: str | None
    text: str | None
    sent_at: int | None
    own: bool
    about: str | None = None  # a reply, reaction, edit or deletion: the id of the message it is about
    offer: FileOffer | None = None  # a file message: its offer, parsed once when its payload was decoded


@dataclass(frozen=True, slots=True)
class DmAcknowledged(AppEvent):
    """``peer_id`` acknowledged our direct message (its MVDS ack): it holds it."""

    name: ClassVar[str] = "dm_ack"
    channel: str
    peer_id: str
    message_id: str
