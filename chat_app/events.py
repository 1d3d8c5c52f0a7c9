"""What the user interfaces see: typed application events.

Every event the node reports - a delivered message, an acknowledgement, a
peer coming or going, someone typing, a catch-up - is a small frozen
dataclass under one base class, the h11 way. The TUI handles them by type;
headless mode writes each as one JSON object whose ``"event"`` field is the
class's ``name`` and whose other fields are the dataclass fields, in order.

A few fields are left out of the JSON when they carry nothing (a delivered
message's ``gaps`` and ``undecodable``, a peer's unknown ``channels``, an
acknowledgement's ``via`` unless it is a full one): scripts written against
earlier output see exactly the objects they always saw. A class says which
with ``_optional`` and ``_when_known``; every event's JSON comes from its
fields and those two, in ``AppEvent.to_json`` alone.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cache
from typing import Any, ClassVar

Address = tuple[str, int]


@dataclass(frozen=True, slots=True)
class AppEvent:
    name: ClassVar[str] = ""
    printed: ClassVar[bool] = True
    """Whether headless mode writes this event out."""
    _optional: ClassVar[tuple[str, ...]] = ()
    """Fields left out of the JSON when None, False or an empty tuple."""
    _when_known: ClassVar[tuple[str, ...]] = ()
    """Fields left out of the JSON when None (unknown); an empty tuple is written."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object headless mode prints for this event."""
        out: dict[str, Any] = {"event": self.name}
        for name, left_out in _json_shape(type(self)):
            value = getattr(self, name)
            if left_out is None or not left_out(value):
                out[name] = _plain(value)
        return out

    def json_line(self) -> str:
        return json.dumps(self.to_json(), separators=(",", ":"))


Emit = Callable[[AppEvent], None]
"""How events reach a user interface."""


def _carries_nothing(value: Any) -> bool:
    return value is None or value is False or value == ()


def _unknown(value: Any) -> bool:
    return value is None


@cache
def _json_shape(cls: type[AppEvent]) -> tuple[tuple[str, Callable[[Any], bool] | None], ...]:
    """``cls``'s fields in order, each with the test that leaves it out of the
    JSON (None: always written); worked out once per class."""
    return tuple((f.name, _carries_nothing if f.name in cls._optional else _unknown if f.name in cls._when_known
                  else None) for f in fields(cls))


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------- this peer


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
    """The nicks whose messages and typing are not shown (after ``/ignore``)."""

    name: ClassVar[str] = "ignoring"
    nicks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MessagesHeld(AppEvent):
    """Our messages wait on this peer for the channel to catch up (0: all went out)."""

    name: ClassVar[str] = "held"
    channel: str
    held: int


@dataclass(frozen=True, slots=True)
class Bye(AppEvent):
    name: ClassVar[str] = "bye"


# ----------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class MessageDelivered(AppEvent):
    """A message took its place in the channel's log (and is in the store)."""

    name: ClassVar[str] = "delivered"
    _optional: ClassVar[tuple[str, ...]] = ("gaps", "undecodable")
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
class MessageWaiting(AppEvent):
    """A message arrived before some it depends on; shown, not yet placed."""

    name: ClassVar[str] = "waiting"
    channel: str
    message_id: str
    sender_id: str
    lamport: int
    nick: str | None
    kind: str | None
    text: str | None
    waiting_for: int


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
    name: ClassVar[str] = "missing"
    channel: str
    waiting: int
    message_ids: tuple[str, ...]


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


# ------------------------------------------------------------------- typing


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


# -------------------------------------------------------------------- peers


@dataclass(frozen=True, slots=True)
class PeerJoined(AppEvent):
    """A peer appeared. ``address`` is where we send to it, ``addresses`` all
    it announced (None when it was only heard from), ``found`` how we know it
    ("mdns", "--peer", "traffic"), ``channels`` None until it announces them."""

    name: ClassVar[str] = "peer_joined"
    _optional: ClassVar[tuple[str, ...]] = ("addresses",)
    _when_known: ClassVar[tuple[str, ...]] = ("channels",)  # not announced: heard from, or a static peer
    peer_id: str
    nick: str | None
    address: Address
    addresses: tuple[Address, ...] | None = None
    found: tuple[str, ...] = ()
    channels: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class PeerUpdated(PeerJoined):
    name: ClassVar[str] = "peer_updated"


@dataclass(frozen=True, slots=True)
class PeerHeard(AppEvent):
    """A datagram came from this peer (at most one such event per peer every
    ``HEARD_EVERY_MS``): what keeps a quiet member "online" in the client.
    Headless mode does not print it; it would be a line every few seconds
    that says nothing a script acts on."""

    name: ClassVar[str] = "peer_heard"
    printed: ClassVar[bool] = False
    peer_id: str
    at: int


HEARD_EVERY_MS = 10_000


@dataclass(frozen=True, slots=True)
class PeerAway(AppEvent):
    """A peer said it is away (``reason``), or back (``reason`` None)."""

    name: ClassVar[str] = "peer_away"
    peer_id: str
    nick: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class PeerLeft(AppEvent):
    name: ClassVar[str] = "peer_left"
    peer_id: str
    nick: str | None


@dataclass(frozen=True, slots=True)
class Peers(AppEvent):
    """The answer to ``/peers``: one row per peer (see ``chat_app.peers``:
    address, addresses, how found, last heard, whether it answers), and the
    addresses and port others reach us at."""

    name: ClassVar[str] = "peers"
    peers: tuple[dict[str, Any], ...]
    addresses: tuple[str, ...]
    port: int


# ------------------------------------------------------------------ catch-up


@dataclass(frozen=True, slots=True)
class CatchupStarted(AppEvent):
    name: ClassVar[str] = "catchup_started"
    address: Address
    channels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CatchupFinished(AppEvent):
    """``state``: "done", or "live" when the stream stays open for new messages."""

    name: ClassVar[str] = "catchup"
    address: Address
    channels: tuple[str, ...]
    received: int
    sent: int
    state: str


@dataclass(frozen=True, slots=True)
class ReplicationClosed(AppEvent):
    name: ClassVar[str] = "replication_closed"
    address: Address
    reason: str


# ------------------------------------------------------------------- people


@dataclass(frozen=True, slots=True)
class Whois(AppEvent):
    """Everyone who has used ``nick``: one entry per key (``sender_id``,
    ``fingerprint``, ``short`` - the suffix that tells equal nicks apart -,
    ``addresses``, ``first_seen``, ``last_seen``, ``trusted``, and ``was``: the
    sender id it had before keys, if it proved it)."""

    name: ClassVar[str] = "whois"
    nick: str
    people: tuple[dict, ...]


@dataclass(frozen=True, slots=True)
class Trusted(AppEvent):
    """The user compared fingerprints: ``nick`` is the holder of this key."""

    name: ClassVar[str] = "trusted"
    nick: str
    fingerprint: str


@dataclass(frozen=True, slots=True)
class KeyChanged(AppEvent):
    """Someone speaks as a trusted nick with another key: not the person trusted."""

    name: ClassVar[str] = "key_changed"
    nick: str
    sender_id: str
    fingerprint: str
    trusted_fingerprint: str


# ---------------------------------------------------------- direct messages


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


@dataclass(frozen=True, slots=True)
class DmAcknowledged(AppEvent):
    """``peer_id`` acknowledged our direct message (its MVDS ack): it holds it."""

    name: ClassVar[str] = "dm_ack"
    channel: str
    peer_id: str
    message_id: str
