"""The peer table: who is out there, where, and whether they still talk.

A peer is learned three ways: announced over mDNS (with nick and channels),
configured with ``--peer`` (a static address, no id), or heard from (an SDS
datagram names its sender). Methods return the application events to
report; they never send anything themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from chat_app import events as ev
from chat_app.net.udp import Address

PEER_SILENT_MS = 45_000
"""A peer sharing a channel with us syncs at least every ~23 s (the engine's
keep-alive); this long without a datagram and it has gone (crashed, or its
goodbye was lost)."""


@dataclass
class Peer:
    peer_id: str
    address: Address
    nick: str | None = None
    channels: tuple[str, ...] | None = None  # None: not announced (heard or static)
    last_seen: int = 0
    announced: bool = False  # present in mDNS
    reported_at: int = 0  # when a PeerHeard event last went out

    def shares(self, channels: Iterable[str]) -> bool:
        return self.channels is None or any(c in self.channels for c in channels)


class PeerTable:
    def __init__(self, static: Iterable[Address] = ()) -> None:
        self.static: list[Address] = list(static)
        self.by_id: dict[str, Peer] = {}

    def get(self, peer_id: str) -> Peer | None:
        return self.by_id.get(peer_id)

    def __iter__(self):
        return iter(list(self.by_id.values()))

    def heard(self, peer_id: str, addr: Address, now: int) -> tuple[list[ev.AppEvent], bool]:
        """A datagram from ``peer_id`` came from ``addr``: (events, whether it is new)."""
        peer = self.by_id.get(peer_id)
        if peer is None:
            self.by_id[peer_id] = Peer(peer_id, addr, last_seen=now, reported_at=now)
            return [ev.PeerJoined(peer_id, None, tuple(addr))], True
        out: list[ev.AppEvent] = []
        if now - peer.reported_at >= ev.HEARD_EVERY_MS:
            peer.reported_at = now
            out.append(ev.PeerHeard(peer_id, now))
        peer.last_seen = now
        if not peer.announced:
            peer.address = addr
        return out, False

    def announced(self, peer_id: str, nick: str, address: Address, channels: tuple[str, ...],
                  now: int) -> tuple[ev.PeerJoined, bool]:
        """mDNS says this about ``peer_id``: (the event, whether it is new)."""
        peer = self.by_id.get(peer_id)
        known = peer is not None
        if peer is None:
            peer = self.by_id[peer_id] = Peer(peer_id, address)
        peer.address, peer.nick, peer.channels = address, nick, channels
        peer.last_seen, peer.announced = now, True
        kind = ev.PeerUpdated if known else ev.PeerJoined
        return kind(peer_id, nick, tuple(address), tuple(channels)), not known

    def gone(self, peer_id: str) -> list[ev.AppEvent]:
        peer = self.by_id.pop(peer_id, None)
        return [ev.PeerLeft(peer_id, peer.nick)] if peer is not None else []

    def learned_nick(self, peer_id: str, nick: str) -> None:
        """A message of theirs names them (no mDNS: this is the only way)."""
        peer = self.by_id.get(peer_id)
        if peer is not None and peer.nick is None:
            peer.nick = nick

    def targets(self, channel: str) -> set[Address]:
        """Where a datagram for ``channel`` goes: static peers, and every peer
        in the channel (or whose channels we do not know)."""
        out = set(self.static)
        out.update(p.address for p in self.by_id.values() if p.channels is None or channel in p.channels)
        return out

    def silent_deadline(self, peer: Peer, joined: Iterable[str]) -> int | None:
        """When ``peer`` counts as gone if nothing is heard from it: only a
        peer that shares a channel with us (or whose channels we do not
        know) is expected to keep talking."""
        return peer.last_seen + PEER_SILENT_MS if peer.shares(joined) else None

    def deadlines(self, joined: Iterable[str]) -> list[int]:
        joined = tuple(joined)
        return [d for p in self.by_id.values() if (d := self.silent_deadline(p, joined)) is not None]

    def expire(self, joined: Iterable[str], now: int) -> list[ev.AppEvent]:
        joined = tuple(joined)
        out: list[ev.AppEvent] = []
        for peer in list(self.by_id.values()):
            deadline = self.silent_deadline(peer, joined)
            if deadline is not None and deadline <= now:
                out += self.gone(peer.peer_id)
        return out

    def snapshot(self) -> ev.Peers:
        return ev.Peers(tuple(ev.PeerInfo(p.peer_id, p.nick, tuple(p.address), p.last_seen, p.channels)
                              for p in self.by_id.values()))
