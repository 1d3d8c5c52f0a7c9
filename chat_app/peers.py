"""Who else is on the network, where to send to them, and whether they answer.

No I/O: the node feeds in what discovery announced, what ``--peer`` named and
what arrived from the network, together with ``now`` (ms), and asks where to
send. Three ways to find a peer, all kept (``found``):

- ``mdns``: its announcement lists every usable address of its interfaces;
  they are tried in :func:`rank_candidates` order (an address on one of our
  own subnets first), each for ``PROBE_MS``, until one answers. Each turn
  begins with a datagram of ours to the new address (the runtime's
  introduction), so a peer that can be reached there hears us from where we
  can hear it, moves us there, and what it sends next reaches us;
- ``--peer``: an address named on the command line is always sent to;
- ``traffic``: a datagram arrived from it. The address it came from is proven
  to reach us, and on a LAN the way back works too, so it becomes the address
  in use (see :meth:`PeerTable.heard`).

Presence comes only from a peer's own datagrams and its mDNS announcements,
never from messages with content relayed by others (a store peer answering
long after their author quit); and a peer that falls silent expires: one
sharing a channel with us after ``SILENT_MS``, one sharing none - which may
have crashed without a goodbye, and mDNS forgets it only after an hour -
after ``UNSHARED_SILENT_MS``. It comes back with its next datagram or
announcement. Only a peer announcing a role that is silent by design (a
mailbox, which answers when asked) is kept until mDNS says it left.

A peer *answers* once a datagram from it has arrived since we began sending to
the address in use.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from chat_app.address import Address
from chat_app.net.addresses import hostport, rank_candidates

PROBE_MS = 10_000
"""How long one announced address is tried before the next: a peer that
shares a channel with us sends at least a keep-alive sync every ~23 s, and
usually much sooner (its own sync after discovering us)."""
SILENT_MS = 45_000
"""A peer sharing a channel with us syncs at least every ~23 s (the engine's
keep-alive); this long without a datagram and it has gone (crashed, or its
goodbye was lost)."""
UNSHARED_SILENT_MS = 2 * SILENT_MS
"""A peer sharing no channel with us has no reason to send us anything: this
long without a datagram or an announcement and it no longer counts as there."""

MAX_FOUND_BY_TRAFFIC = 1_024
"""Peers known only by their datagrams (not announced by mDNS, not a
``--peer``) past which a new one is not taken in: anyone may make keys, and
each one-shot key's sync was a peer - every datagram for a channel went to
all of them, and a flood of 30,000 made each datagram we received cost 2.2
ms. A peer not taken in is still heard (its messages are delivered); it is
not sent to until it announces itself or a place frees up."""
GONE_MS = 5_000
"""A peer that said goodbye (mDNS, or its "leave" in a channel) is not brought
back by its own datagrams for this long: the last ones it sent as it left
(a "leave" in each of its channels) may be read after the goodbye, and would
make it a newcomer found by its traffic, to leave a second time. An
announcement brings it back at once."""

MDNS, STATIC, TRAFFIC = "mdns", "--peer", "traffic"


@dataclass
class Peer:
    peer_id: str
    address: Address
    nick: str | None = None
    channels: tuple[str, ...] | None = None  # None: not announced (heard or static)
    candidates: list[Address] = field(default_factory=list)
    found: set[str] = field(default_factory=set)
    last_heard: int = 0  # the last sign of life (a datagram or an announcement); 0: never
    heard_from: Address | None = None  # where its last datagram came from
    heard_at: int = -1  # when
    using_since: int = 0  # when ``address`` became the one in use
    announced: bool = False  # present in mDNS
    away: str | None = None  # the reason it gave for being away; None: not away

    @property
    def answers(self) -> bool:
        return self.heard_from == self.address and self.heard_at >= self.using_since

    def shares(self, channels: Iterable[str]) -> bool:
        return self.channels is None or any(c in self.channels for c in channels)

    def snapshot(self) -> dict:
        return {"peer_id": self.peer_id, "nick": self.nick, "address": list(self.address),
                "addresses": [list(a) for a in self.candidates or [self.address]],
                "found": sorted(self.found), "last_seen": self.last_heard, "answers": self.answers,
                "away": self.away,
                "channels": list(self.channels) if self.channels is not None else None}


def _places(peer: Peer) -> set[Address]:
    """Where ``peer`` may be reached: where we send to it, and every address it announced."""
    return {peer.address, *peer.candidates}


class PeerTable:
    def __init__(self, static: Iterable[Address] = (), quiet_roles: Iterable[str] = ()) -> None:
        self.static = list(dict.fromkeys(static))
        self.quiet_roles = frozenset(quiet_roles)  # announced names of roles silent by design (a mailbox)
        self.peers: dict[str, Peer] = {}
        self._due: tuple[tuple[str, ...], float] | None = None  # see deadline()
        self._left: dict[str, int] = {}  # peer -> when it said goodbye, for GONE_MS
        self._at: dict[Address, dict[str, None]] = {}  # address -> the peers reached at it (``at``)
        self._unannounced: set[str] = set()  # peers known by their datagrams (or a --peer) alone

    def __contains__(self, peer_id: str) -> bool:
        return peer_id in self.peers

    def get(self, peer_id: str) -> Peer | None:
        return self.peers.get(peer_id)

    def __iter__(self):
        return iter(list(self.peers.values()))

    def at(self, address: Address) -> Peer | None:
        """The peer reached at ``address`` (where we send to it, or an address
        it announced): one look-up, not a scan of the peers - it is asked for
        every peer met, and a flood of one-shot keys meets thousands."""
        ids = self._at.get(address)
        return self.peers.get(next(iter(ids))) if ids else None

    def _placed(self, peer: Peer, before: set[Address]) -> None:
        """Keep ``at`` (and the peers known unannounced) right after ``peer``
        moved, was added, announced or removed: ``before`` is where it could be
        reached (``_places``) until now."""
        here = self.peers.get(peer.peer_id) is peer
        if here and not peer.announced:
            self._unannounced.add(peer.peer_id)
        else:
            self._unannounced.discard(peer.peer_id)
        after = _places(peer) if here else set()
        for address in before - after:
            ids = self._at.get(address, {})
            ids.pop(peer.peer_id, None)
            if not ids:
                self._at.pop(address, None)
        for address in after - before:
            self._at.setdefault(address, {})[peer.peer_id] = None

    # ------------------------------------------------------------ what we learn

    def announced(self, peer_id: str, nick: str, addresses: list[str], port: int,
                  channels: tuple[str, ...], now: int) -> tuple[Peer, bool]:
        """An mDNS announcement; returns the peer and whether it is new."""
        candidates = [(host, port) for host in rank_candidates(addresses)]
        peer = self.peers.get(peer_id)
        new = peer is None
        before = _places(peer) if peer is not None else set()
        self._due = None
        self._left.pop(peer_id, None)
        if peer is None:
            peer = self.peers[peer_id] = Peer(peer_id, candidates[0], using_since=now)
        if peer.candidates != candidates and not (peer.answers and peer.address in candidates):
            peer.address, peer.using_since = candidates[0], now
        peer.candidates, peer.nick, peer.channels, peer.announced = candidates, nick, channels, True
        peer.found.add(MDNS)
        peer.last_heard = max(peer.last_heard, now)  # present now; silence is counted from here
        self._placed(peer, before)
        return peer, new

    def heard(self, peer_id: str, source: Address, now: int, direct: bool) -> tuple[Peer | None, bool]:
        """A datagram claiming to be from ``peer_id`` arrived from ``source``.

        ``direct`` is True for datagrams only their author ever sends (sync
        and ephemeral messages): a sign of life, and the address it is at.
        A message with content may come from anyone holding it - a repair
        rebroadcast, a fetch answer, a store peer answering long after its
        author quit - so it never moves a peer, and keeps one present only
        when it comes from where the peer's own datagrams come from (or, not
        heard directly yet, from the address it announced). From an
        address nobody we know uses (not a ``--peer``, not another peer's)
        it is most likely the author's own first message and makes it known
        (returns None when it teaches nothing).

        Every datagram is signed (``chat_app.runtime.envelopes`` checks it
        before this is called), so nobody can claim another peer's id with
        datagrams of their own. What remains is replay: someone on the LAN
        can resend a peer's genuine sync from its own address. That moves the
        peer to the attacker's address until the real peer's next sync (at
        most ~26 s later) moves it back - a window in which the peer misses
        our datagrams (SDS resends them) and the attacker receives what it
        could capture anyway (private channels stay encrypted). It cannot
        send as that peer, nor change anything stored.
        Returns the peer and whether it is new."""
        peer = self.peers.get(peer_id)
        if peer is None and (left_at := self._left.get(peer_id)) is not None and now - left_at < GONE_MS:
            return None, False  # its last datagrams, read after its goodbye
        if not direct:
            if peer is not None:
                if source in (peer.heard_from, peer.address):  # its own address: the author speaking
                    peer.last_heard = peer.heard_at = now
                    peer.heard_from = source
                return None, False
            if source in self.static or any(source in (p.address, p.heard_from) for p in self.peers.values()):
                return None, False
        new = peer is None
        before = _places(peer) if peer is not None else set()
        if peer is None:
            if source not in self.static and len(self._unannounced) >= MAX_FOUND_BY_TRAFFIC:
                return None, False
            peer = self.peers[peer_id] = Peer(peer_id, source, using_since=now)
        if source in self.static:
            peer.found.add(STATIC)
        if new or source != peer.address:
            peer.address, peer.using_since = source, now
            self._due = None  # a probe or a silence counted from now
        peer.found.add(TRAFFIC)
        peer.last_heard, peer.heard_from, peer.heard_at = now, source, now
        self._placed(peer, before)
        return peer, new

    def spoke_in(self, peer_id: str, channel: str) -> Peer | None:
        """``peer_id``'s own datagram in ``channel`` arrived: it is a member,
        whatever its announcement said (one from before it joined, say).
        The peer, if that is news."""
        peer = self.peers.get(peer_id)
        if peer is None or peer.channels is None or channel in peer.channels:
            return None
        peer.channels = (*peer.channels, channel)
        self._due = None  # it shares a channel with us now: silence counts sooner
        return peer

    def gone(self, peer_id: str, now: int) -> Peer | None:
        """It said goodbye: the peer, if it was here."""
        self._due = None
        self._left = {p: at for p, at in self._left.items() if now - at < GONE_MS}  # a few at most
        self._left[peer_id] = now
        peer = self.peers.pop(peer_id, None)
        if peer is not None:
            self._placed(peer, _places(peer))
        return peer

    # ------------------------------------------------------------- where to send

    def targets(self, channel: str) -> set[Address]:
        """Every address a datagram for ``channel`` goes to."""
        targets = set(self.static)
        for peer in self.peers.values():
            if peer.channels is None or channel in peer.channels:
                targets.add(peer.address)
        return targets

    # ------------------------------------------------------------------ time

    def deadline(self, channels: Iterable[str]) -> float:
        """The earliest moment something is due: a probe moving on, or a
        silent peer counting as gone; never later than that, and computed
        anew only when it may have come earlier (asked after every batch of
        datagrams, it would otherwise walk every peer each time). Hearing
        from a peer moves its deadlines later, so the one kept stays a safe
        first wake-up; whatever can bring one earlier - a new peer, a new
        address, an announcement (channels, addresses), a peer gone, the
        timer itself, other channels of ours - makes it computed again."""
        channels = tuple(channels)
        if self._due is None or self._due[0] != channels:
            times = [t for p in self.peers.values() for t in (self._probe_due(p), self._silent_due(p, channels))]
            self._due = channels, min(times, default=float("inf"))
        return self._due[1]

    def on_timer(self, now: int, channels: Iterable[str]) -> tuple[list[Peer], list[Peer]]:
        """Move probes on: (the peers that fell silent, and are removed; the
        peers now tried at their next address, which want a datagram there)."""
        channels = tuple(channels)
        self._due = None
        left, probed = [], []
        for peer in list(self.peers.values()):
            before = _places(peer)
            if self._silent_due(peer, channels) <= now:
                left.append(self.peers.pop(peer.peer_id))
            elif self._probe_due(peer) <= now:
                index = peer.candidates.index(peer.address) if peer.address in peer.candidates else -1
                peer.address = peer.candidates[(index + 1) % len(peer.candidates)]
                peer.using_since = now
                probed.append(peer)
            else:
                continue
            self._placed(peer, before)
        return left, probed

    @staticmethod
    def _probe_due(peer: Peer) -> float:
        if peer.answers or len(peer.candidates) < 2:
            return float("inf")
        return peer.using_since + PROBE_MS

    def _silent_due(self, peer: Peer, channels: tuple[str, ...]) -> float:
        """A peer that shares a channel with us (or whose channels we do not
        know) is expected to keep talking; one that shares none is given
        longer, and one in a role silent by design is kept."""
        if peer.shares(channels):
            return peer.last_heard + SILENT_MS
        if self.quiet_roles.intersection(peer.channels):
            return float("inf")
        return peer.last_heard + UNSHARED_SILENT_MS


def describe(peer: dict, now: int) -> tuple[str, str]:
    """Two lines about a peer (a :meth:`Peer.snapshot`) for people: who it
    is; then where it is, how it was found, when it was last heard and
    whether it answers."""
    channels = ", ".join(f"#{c}" for c in peer["channels"]) if peer["channels"] else "channels unknown"
    role = " · mailbox store" if peer.get("mailbox") else ""
    who = f"{peer['nick'] or '?'} ({peer['peer_id'][:12]})  {channels}{role}"
    others = [hostport(h, p) for h, p in peer.get("addresses", []) if [h, p] != peer["address"]]
    where = hostport(*peer["address"]) + (f" (also {', '.join(others)})" if others else "")
    heard = f"heard {max(0, now - peer['last_seen']) // 1000} s ago" if peer["last_seen"] else "never heard"
    answers = "answers" if peer.get("answers") else "no answer yet"
    found = ", ".join(peer.get("found", [])) or "?"
    return who, f"{where} · found by {found} · {heard} · {answers}"


NOBODY_HINT = ("Nobody seen yet. If others are running, this network may block multicast (mDNS): "
               "start with --peer HOST:PORT of one of them (one side naming the other is enough).")
