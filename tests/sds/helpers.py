"""In-memory wiring for sans-I/O engine tests (the h11 ConnectionPair idea)."""

from __future__ import annotations

from sync.sds import Channel, Config
from proto.sds_pb2 import SdsMessage

T0 = 1_700_000_000_000


def make(sender: str, now: int = T0, channel: str = "general", **config) -> Channel:
    return Channel(channel, sender, now, Config(**config) if config else None)


def of(events, cls) -> list:
    return [e for e in events if isinstance(e, cls)]


def take(ch: Channel) -> list[bytes]:
    return [out.data for out in ch.datagrams_to_send(ch.lamport)]


def deliver(datagrams: list[bytes], *receivers: Channel, now: int) -> None:
    for wire in datagrams:
        for r in receivers:
            r.receive(wire, now)


def parse(wire: bytes) -> SdsMessage:
    return SdsMessage.FromString(wire)


def take_content(ch: Channel) -> list[bytes]:
    """Drain datagrams, keeping content messages (not syncs)."""
    return [w for w in take(ch) if parse(w).content]
