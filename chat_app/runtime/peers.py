"""The peer table, as the runtime sees it: what each change means to the user.

``chat_app.peers.PeerTable`` keeps who is out there, at which addresses, how
each was found and whether it answers. This wraps it so that every call
returns the application events to report, and never sends anything itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from chat_app import events as ev
from chat_app.address import Address
from chat_app.peers import Peer, PeerTable
from chat_app.runtime.mailbox import MAILBOX_LINK


def _joined(kind: type[ev.PeerJoined], peer: Peer, announced: bool) -> ev.PeerJoined:
    addresses = tuple(tuple(a) for a in peer.candidates) if announced else None
    return kind(peer.peer_id, peer.nick, tuple(peer.address), addresses, tuple(sorted(peer.found)),
                peer.channels if announced else None)


class PeerTracker:
    def __init__(self, static: Iterable[Address] = ()) -> None:
        self.table = PeerTable(static, quiet_roles=(MAILBOX_LINK,))  # a mailbox speaks when asked
        self._reported: dict[str, int] = {}  # peer -> when a PeerHeard event last went out

    @property
    def static(self) -> list[Address]:
        return self.table.static

    def get(self, peer_id: str) -> Peer | None:
        return self.table.get(peer_id)

    def __iter__(self):
        return iter(self.table)

    def addresses_of(self, peer_id: str) -> list:
        """Where ``peer_id`` may be reached: all it announced, else where it was heard from."""
        peer = self.table.get(peer_id)
        return list(peer.candidates or [peer.address]) if peer is not None else []

    def addresses_at(self, address: Address) -> list[Address]:
        """Every address the peer we reach at ``address`` may be reached at
        (one look-up: asked for every peer met, ``CatchUp.dial``)."""
        peer = self.table.at(address)
        return self.addresses_of(peer.peer_id) if peer is not None else []

    def heard(self, peer_id: str, addr: Address, now: int, direct: bool) -> tuple[list[ev.AppEvent], bool]:
        """A datagram from ``peer_id`` came from ``addr``: (events, whether it
        is new). See ``PeerTable.heard``: a message with content, which
        anyone may relay, is a sign of life only in narrow cases."""
        peer, new = self.table.heard(peer_id, addr, now, direct)
        if peer is None:
            return [], False
        if new:
            self._reported[peer_id] = now
            return [_joined(ev.PeerJoined, peer, announced=False)], True
        if now - self._reported.get(peer_id, 0) >= ev.HEARD_EVERY_MS:
            self._reported[peer_id] = now
            return [ev.PeerHeard(peer_id, now)], False
        return [], False

    def announced(self, peer_id: str, nick: str, addresses: list[str], port: int, channels: tuple[str, ...],
                  now: int) -> tuple[ev.PeerJoined, Peer, bool]:
        """mDNS says this about ``peer_id``: (the event, the peer, whether it is new)."""
        peer, new = self.table.announced(peer_id, nick, addresses, port, channels, now)
        return _joined(ev.PeerJoined if new else ev.PeerUpdated, peer, announced=True), peer, new

    def spoke_in(self, peer_id: str, channel: str) -> list[ev.PeerUpdated]:
        """``peer_id`` spoke, typed or said it is away in ``channel``: an event if it was not known to be there."""
        peer = self.table.spoke_in(peer_id, channel)
        return [_joined(ev.PeerUpdated, peer, announced=True)] if peer is not None else []

    def members(self, channel: str) -> list[ev.PeerUpdated]:
        """Every peer announced in ``channel``, told again: we just joined it,
        and a private one was known by its tag only until then."""
        return [_joined(ev.PeerUpdated, peer, announced=True) for peer in self.table
                if peer.channels is not None and channel in peer.channels]

    def gone(self, peer_id: str, now: int) -> list[ev.AppEvent]:
        self._reported.pop(peer_id, None)
        peer = self.table.gone(peer_id, now)
        return [ev.PeerLeft(peer_id, peer.nick)] if peer is not None else []

    def away(self, peer_id: str, nick: str, reason: str | None) -> list[ev.AppEvent]:
        """The peer says it is away (or back: None); an event only on a change."""
        peer = self.table.get(peer_id)
        if peer is None or peer.away == reason:
            return []
        peer.away = reason
        return [ev.PeerAway(peer_id, peer.nick or nick, reason)]

    def learned_nick(self, peer_id: str, nick: str) -> None:
        """A message of theirs names them (no mDNS: this is the only way)."""
        peer = self.table.get(peer_id)
        if peer is not None and peer.nick is None:
            peer.nick = nick

    def targets(self, channel: str) -> set[Address]:
        return self.table.targets(channel)

    def deadline(self, joined: Iterable[str]) -> int | None:
        due = self.table.deadline(joined)
        return None if due == float("inf") else int(due)

    def on_timer(self, joined: Iterable[str], now: int) -> tuple[list[ev.AppEvent], list[Address]]:
        """(events for the peers that fell silent, the addresses a probe just moved to)."""
        left, probed = self.table.on_timer(now, joined)
        for peer in left:
            self._reported.pop(peer.peer_id, None)
        return [ev.PeerLeft(peer.peer_id, peer.nick) for peer in left], [peer.address for peer in probed]

    def snapshot(self, addresses: Iterable[str], port: int) -> ev.Peers:
        return ev.Peers(tuple(p.snapshot() for p in self.table), tuple(addresses), port)
