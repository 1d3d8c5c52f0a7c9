"""Events the MVDS engine reports, as small frozen dataclasses under the
``sync.core`` base ``Event`` (``Rejected`` is the shared one)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sync.core.events import Event, Rejected
from sync.core.protocol import Peer

__all__ = ["DmAcknowledged", "DmDelivered", "Event", "Rejected"]


@dataclass(frozen=True, slots=True)
class DmDelivered(Event):
    """A message from ``peer`` is delivered: exactly once, and after every
    earlier message of its conversation (``group_id``) from that peer."""

    peer: Peer
    group_id: bytes
    message_id: bytes
    timestamp: int
    body: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if len(self.message_id) != 32 or not self.body:
            raise ValueError("a delivered message has a 32-byte id and a body")


@dataclass(frozen=True, slots=True)
class DmAcknowledged(Event):
    """``peer`` acknowledged one of our messages: it holds it, and we stopped
    retransmitting it."""

    peer: Peer
    group_id: bytes
    message_id: bytes

    def __post_init__(self) -> None:
        if len(self.message_id) != 32:
            raise ValueError("a message id is 32 bytes")
