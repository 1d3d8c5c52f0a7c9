"""Events about other peers: found, heard, away, gone, and catch-up with them over replication."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from chat_app.address import Address

from .base import AppEvent


@dataclass(frozen=True, slots=True)
class PeerJoined(AppEvent):
    """A peer appeared. ``address`` is where we send to it, ``addresses`` all
    it announced (None when it was only heard from), ``found`` how we know it
    ("mdns", "--peer", "traffic"), ``channels`` None until it announces them,
    ``svs`` those of them it announces as running on State Vector Sync."""

    name: ClassVar[str] = "peer_joined"
    _optional: ClassVar[tuple[str, ...]] = ("addresses", "svs")
    _when_known: ClassVar[tuple[str, ...]] = ("channels",)  # not announced: heard from, or a static peer
    peer_id: str
    nick: str | None
    address: Address
    addresses: tuple[Address, ...] | None = None
    found: tuple[str, ...] = ()
    channels: tuple[str, ...] | None = None
    svs: tuple[str, ...] = ()


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


@dataclass(frozen=True, slots=True)
class CatchupStarted(AppEvent):
    name: ClassVar[str] = "catchup_started"
    address: Address
    channels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CatchupFinished(AppEvent):
    """``state``: "done", "live" when the stream stays open for new messages,
    or "closed" when the link closed before the catch-up finished."""

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
