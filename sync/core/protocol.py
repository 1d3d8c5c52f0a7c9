"""The surface every engine offers: ``Engine``, and ``Outgoing`` datagrams.

See ``sync.core`` for the contract in prose; this module states it as types
so a runtime can be written against one interface whatever the engine.
"""

from __future__ import annotations

import enum
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .events import Event


class Broadcast(enum.Enum):
    """The type of ``BROADCAST``, the one address that is not a peer."""

    BROADCAST = "broadcast"

    def __repr__(self) -> str:
        return "BROADCAST"


BROADCAST = Broadcast.BROADCAST
"""``Outgoing.to`` for "every peer of this engine": everyone in the channel
for a datagram engine, the other end of the stream for a stream engine."""

Peer = Hashable
"""A peer as the runtime names it (an address, a key...): opaque to engines,
which only ever hand back what the runtime passed in as ``source``."""


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One datagram (or stream message) to transmit, and to whom."""

    data: bytes
    to: Broadcast | Peer = BROADCAST

    def __post_init__(self) -> None:
        if not isinstance(self.data, bytes):
            raise TypeError("Outgoing.data must be bytes")


@runtime_checkable
class Engine(Protocol):
    """What the runtime may call on any engine (see ``sync.core``)."""

    def receive(self, data: bytes, now: int, source: Peer | None = None) -> None:
        """Feed bytes from the network. Never raises for bad bytes."""

    def events(self) -> Iterator[Event]:
        """Drain the events produced since the last call, oldest first."""

    def datagrams_to_send(self, now: int) -> list[Outgoing]:
        """Drain what is to be transmitted, in order."""

    def get_timer(self) -> int | None:
        """The absolute time (ms) ``handle_timer`` next has work, or None."""

    def handle_timer(self, now: int) -> None:
        """Do whatever fell due by ``now`` (early or repeated calls are harmless)."""

    def export_state(self) -> dict[str, Any]:
        """Everything needed to rebuild the engine, as plain data."""


@runtime_checkable
class MessageEngine(Engine, Protocol):
    """A datagram engine whose every datagram is one protocol message, which
    a router may have to read before the engine (its channel, its sender):
    ``parse`` reads and checks the bytes once, and ``receive_message`` takes
    what it made, so nothing is parsed or checked twice. ``receive(data)``
    is ``receive_message(parse(data))``, with a refusal reported instead
    of raised."""

    def parse(self, data: bytes) -> Any:
        """``data`` read and checked; raises ``RemoteProtocolError`` for bad bytes."""

    def receive_message(self, parsed: Any, now: int, source: Peer | None = None) -> None:
        """Feed one message ``parse`` (or the same function of the engine's
        package) made. Never raises for what the network sent."""
