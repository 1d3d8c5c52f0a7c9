"""Catching up over TCP: when to replicate with whom, and what a
replication link's events mean.

Policy: replicate with a peer when we first hear of it, when a channel
misses messages, and with one peer every ``ROUND_EVERY_MS`` whatever
happened (anti-entropy: that finds what nobody references), at most once per
``REPLICATE_EVERY_MS`` per address and one link per address at a time. When
two peers meet, one link between them is enough (``met``).
The links themselves are sans-I/O ``Connection``s; the I/O adapter moves
their bytes, and this module turns their events into entries to feed the
engines, application events to show, and reads of the store the link asks
for (log heights, entries), which the adapter does off the event loop and
hands back through ``Links.answer`` (links.py). It also keeps what the adapter is
to do next: the addresses to dial (``dials``) and the reads (``reads``).

A private channel goes by its datagram set on links (``replicated_as``),
between members as with a blind store: the stream carries blind ids and the
very datagrams an outsider captures anyway, never an author, a sequence
number or the channel's name, and live mode pushes those datagrams.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from chat_app import events as ev
from chat_app.bounded import Latest
from chat_app.crypto import ChannelKey, blind_id, channel_tag_of
from chat_app.crypto.channel import is_passing
from chat_app.address import Address
from chat_app.runtime.blind import DATAGRAM_SET, BlindStore, datagram_set, datagram_set_tag
from chat_app.runtime.envelopes import Admitted, Envelopes, is_envelope
from chat_app.runtime.routing import Refused, SdsDatagram
from sync.replication import (
    Closed,
    Connection,
    EntriesWanted,
    EntryArrived,
    EntryDropped,
    EntryKey,
    EntryReceived,
    EntryRefused,
    HeightsWanted,
    RemoteAnnounced,
    SessionFinished,
    Verdict,
)

log = logging.getLogger(__name__)


REPLICATE_EVERY_MS = 2_000
"""At most one replication with a peer this often. It is how most lost
messages come back: a replication runs over TCP, which the loss that took a
datagram does not touch, and brings everything missing from that peer at
once. A message noticed missing while its author was replicated with less
than this long ago waits for a fetch, which a lossy network loses both ways
(at 30% loss half of them); at 5 s five real peers at 30% loss took up to
15 s to converge on a message. At 1 s they converged no sooner and sent
about 10% more bytes at 50% loss."""
ROUND_EVERY_MS = 30_000
"""Replicate with one peer this often (the one replicated with longest ago).
SDS learns of a message only when a later one names it, and a peer's
messages name the newest entries of its log: a peer that hears two others
who cannot hear each other (two subnets, one host on both) may never name
one side's last messages to the other side. A round finds them."""
AWAIT_DIAL_MS = 2_000
ROUND_WAITS_MS = 10_000
"""How long a round waits for a session under way on a link from the peer's
host before it dials that peer all the same (``_round``)."""
"""When two peers meet, only the one with the lower id dials; the other
waits this long for that link before dialing itself. One session carries
entries both ways (each side sends what the other lacks), and when both
dialed at once the two sessions brought the same entries twice (a late
joiner took about 15% of its history a second time). The wait is the
fallback that leaves nobody un-replicated: the other side cannot reach us,
has nothing to replicate, or its link closed before its session finished."""
MEETING_DIALS_PER_S = 20
"""At most this many dials on meeting a peer (``met``: at once, or after
``AWAIT_DIAL_MS``) start in any second, for peers met by their datagrams, and
as many for peers announced by mDNS (so that a flood of one kind does not
keep the other from being met). An insider makes keys freely, and one sync
datagram from each one-shot key, from an address of its choosing, was a
dial to that address: 2,000 datagrams a second, 2,000 dials. A LAN does not
meet 20 new peers a second (a room of them starting together comes through
in a few seconds), and a meeting refused its dial loses little: one link a
pair is enough, and the other side dials when its id is the lower; rounds,
gaps and missing messages dial it later (they are not counted here)."""
MAX_AWAITED = 1_024
"""At most this many peers met are waited for (``met``), the one met
longest ago forgotten first (it is dialed by a round, or by its own dial,
instead). Each is waited for ``AWAIT_DIAL_MS``, longer only while a link from
its host is open: 1,024 is a flood, not a LAN."""
MAX_REPLICATED = 4_096
"""At most this many addresses' last replication is remembered, the oldest
forgotten first; the rest are forgotten once ``REPLICATE_EVERY_MS`` has
passed, but for the peers a round may pick, which it orders by it
(``_forget``)."""
PEER_CLOSED = "the peer closed the stream"


def _host(address: Address) -> str:
    """The host of an address, an IPv4 one as such even where a dual-stack
    socket reports it mapped into IPv6."""
    return address[0].removeprefix("::ffff:")


def replicated_as(envelopes: Envelopes, channel: str) -> str:
    """The name a channel goes by on replication links: a public one by its
    name, a private one by its datagram set only - never by its logs, whose
    items would show who wrote how much, and whose entries by whom."""
    key = envelopes.private.get(channel)
    return datagram_set(key.tag) if key is not None else channel


def checked_entry(envelopes: Envelopes, channels: tuple[str, ...], routed: SdsDatagram | Refused,
                  fatal: bool = True) -> SdsDatagram:
    """A replicated entry must be its author's signed envelope (encrypted, in
    a private channel) holding a chat message (with its author's sequence
    number) for a channel the session is about; ``routed`` is the entry
    opened (``Envelopes.entry_verified``). Returns it, or raises
    ``EntryRefused`` (``fatal``: the link ends) naming why."""
    if isinstance(routed, Refused):
        raise EntryRefused(routed.kind, f"entry refused: {routed.reason}", fatal=fatal)
    if replicated_as(envelopes, routed.channel) not in channels:
        raise EntryRefused("other_channel", f"entry for channel {envelopes.link_name(routed.channel)!r}, "
                                            "which was not requested")
    if not routed.chat:
        raise EntryRefused("not_chat", "entry is not a chat message with a sequence number", fatal=fatal)
    return routed


UNOPENED = Refused("unopened", "not opened when it arrived (no session was open for it, or its channel kept blind)")
"""What an entry the runtime did not open (``Links.admit``) is when the
connection reports it all the same: refused."""


Read = HeightsWanted | EntriesWanted
"""What a link asks of the store; the I/O adapter reads it off the event loop."""


@dataclass
class LinkOutcome:
    entries: list[tuple[str, SdsDatagram]] = field(default_factory=list)  # (channel, the entry as routed)
    blind: list[tuple[bytes, bytes]] = field(default_factory=list)  # (tag, datagram) of a channel kept blind
    refused: list[str] = field(default_factory=list)  # why each refused entry was (``EntryRefused.kind``)
    events: list[ev.AppEvent] = field(default_factory=list)
    over: bool = False  # a session we started is over: hang up


class _Wait(NamedTuple):
    """A peer met that should dial us (``CatchUp.met``)."""

    met_at: int
    due: int  # when to look again
    hosts: frozenset[str]  # its hosts when met: any address of it is at one of them
    announced: bool  # met by mDNS


class CatchUp:
    def __init__(self, live: bool, envelopes: Envelopes, blind: BlindStore,
                 addresses_of: Callable[[Address], Iterable[Address]] = lambda address: ()) -> None:
        """``addresses_of``: every address the peer at an address is known at (``met``)."""
        self.live = live
        self._addresses_of = addresses_of
        self.envelopes = envelopes
        self.blind = blind
        self.links: dict[Connection, Address] = {}
        self._catching_up: dict[Connection, tuple[str, ...]] = {}  # links whose catch-up was reported started
        self._dialing: set[Address] = set()
        self._dials: list[Address] = []
        self._reads: list[tuple[Connection, Read]] = []
        self._replicated_at: Latest[Address, int] = Latest(MAX_REPLICATED)  # when we last dialed each
        self.round_due: int | None = None  # the next anti-entropy round (``start_rounds``)
        self._round_since: int | None = None  # when the round now waiting (``_round``) came due
        self._awaited: dict[Address, _Wait] = {}  # peers that should dial us, by when to look again
        self._awaited_hosts: dict[str, int] = {}  # host -> how many peers waited for are at it
        self._meeting_dials: dict[bool, list[int]] = {False: [], True: []}  # by mDNS -> when, the last second
        self._served: dict[str, int] = {}  # host -> when a session on a link it opened to us last finished
        self._served_links: set[Connection] = set()  # links opened to us whose session finished
        self._sets: dict[str, tuple[int, dict[str, tuple[int, str]]]] = {}  # datagram sets worked out (``_sealed``)

    def want(self, address: Address, now: int) -> bool:
        """Whether to dial ``address`` now (and if so, it counts as dialing)."""
        if self._lately(address, now):
            return False
        self._replicated_at.put(address, now)
        self._dialing.add(address)
        self._unawait(address)  # dialing: nothing left to wait for
        return True

    def _lately(self, address: Address, now: int) -> bool:
        """Dialing ``address``, or replicated with it within ``REPLICATE_EVERY_MS``."""
        last = self._replicated_at.get(address, -REPLICATE_EVERY_MS)
        return address in self._dialing or now - last < REPLICATE_EVERY_MS

    def dial(self, address: Address, now: int) -> None:
        """Dial ``address`` (see ``dials``), unless ``want`` says not now - or
        wait, while we wait for the peer's link or it is catching up: its
        session brings what ours would (and more than once a late joiner,
        told by the first datagrams it heard that it lacks the history,
        dialed the peer whose link was bringing it)."""
        self._dial(address, now, None)

    def _dial(self, address: Address, now: int, announced: bool | None) -> None:
        """``dial``; ``announced``: a dial on meeting a peer (by mDNS or not), None: any other."""
        hosts = self._hosts(address)
        if any(host in self._awaited_hosts for host in hosts):
            return  # waited for already, maybe at another of its addresses: a datagram came from one, mDNS named both
        if self._catching_up_from(hosts):
            self._await(address, now, bool(announced))
        else:
            self._dial_now(address, now, announced)

    def _dial_now(self, address: Address, now: int, announced: bool | None = None) -> None:
        if self._lately(address, now):
            return  # ``want`` would refuse it: no dial on meeting to count
        if announced is not None:  # on meeting: so many a second (``MEETING_DIALS_PER_S``)
            started = self._meeting_dials[announced]
            started[:] = [t for t in started if t > now - 1_000]  # MEETING_DIALS_PER_S at most
            if len(started) >= MEETING_DIALS_PER_S:
                return
            started.append(now)
        if self.want(address, now):
            self._dials.append(address)

    def met(self, address: Address, dial_first: bool, now: int, announced: bool = False) -> None:
        """A peer new to us is at ``address``; it meets us too, and would dial
        us as we would dial it. ``dial_first`` (our id is the lower: both
        sides agree without a word) says which of us dials now; the other
        waits ``AWAIT_DIAL_MS`` for that link. Nothing a peer says on a link
        decides who dials: a link from a host the peer is known at (any of
        them: it may dial from its IPv4 address and be known by its IPv6 one)
        stands in for our dial once its session finished, and an unfinished
        one postpones it. TCP vouches for the host; a forger on the peer's
        host can hold back our dial to a peer that cannot dial us itself
        until the next round (``ROUND_EVERY_MS``), which a link holds back
        ``ROUND_WAITS_MS`` at most.

        Strangers cost us little each: what to wait for and whom to dial is
        looked up, never searched for among all peers and all waits (a flood
        of one-shot keys meets thousands); so many dials on meeting start a
        second (``MEETING_DIALS_PER_S``, ``announced``: by mDNS, counted
        apart), and so many peers are waited for (``MAX_AWAITED``)."""
        if dial_first:
            self._dial(address, now, announced)
        else:
            self._await(address, now, announced)

    def _await(self, address: Address, now: int, announced: bool, met_at: int | None = None) -> None:
        """Wait ``AWAIT_DIAL_MS`` for ``address`` (met at ``met_at``, else now)
        to dial us. ``_awaited`` is kept in the order of when to look again
        (each is now + AWAIT_DIAL_MS, the latest yet), so the next look is the first."""
        if address in self._dialing or address in self._awaited:
            return
        hosts = frozenset(self._hosts(address))  # any address of the peer is at one of them, now or later
        self._awaited[address] = _Wait(now if met_at is None else met_at, now + AWAIT_DIAL_MS, hosts, announced)
        for host in hosts:
            self._awaited_hosts[host] = self._awaited_hosts.get(host, 0) + 1
        while len(self._awaited) > MAX_AWAITED:  # a flood: the one met longest ago is forgotten
            self._unawait(next(iter(self._awaited)))

    def _unawait(self, address: Address) -> None:
        awaited = self._awaited.pop(address, None)
        for host in awaited.hosts if awaited is not None else ():
            if (count := self._awaited_hosts[host] - 1) > 0:
                self._awaited_hosts[host] = count
            else:
                del self._awaited_hosts[host]

    def _hosts(self, address: Address) -> set[str]:
        return {_host(a) for a in (address, *self._addresses_of(address))}

    def _accepted_from(self, hosts: set[str]) -> list[Connection]:
        """The open links that one of ``hosts`` opened to us."""
        return [conn for conn, address in self.links.items() if not conn.initiator and _host(address) in hosts]

    def _catching_up_from(self, hosts: set[str]) -> bool:
        """A link that one of ``hosts`` opened to us is open, its session not finished."""
        return any(conn not in self._served_links for conn in self._accepted_from(hosts))

    def _dial_awaited(self, now: int) -> None:
        """Dial each peer waited for that has not replicated with us since (see ``met``).
        A peer waited for longer than ``ROUND_EVERY_MS`` (a link from its host
        open all that time) is the rounds' to dial, and forgotten here."""
        while self._awaited:
            address = next(iter(self._awaited))
            met_at, due, hosts, announced = self._awaited[address]
            if due > now:
                return  # the others are due later still
            self._unawait(address)
            links = self._accepted_from(hosts := hosts | self._hosts(address))
            if any(conn not in self._served_links for conn in links):  # its session is under way:
                if now - met_at < ROUND_EVERY_MS:
                    self._await(address, now, announced, met_at)  # look again later (last: the latest due)
                continue
            served = [self._served[host] for host in hosts if host in self._served]
            # a finished session counts while its link is open (our side of it may finish long
            # before the peer has taken all it sent), or if it ended a moment before we met
            if not links and (not served or max(served) < met_at - AWAIT_DIAL_MS):
                self._dial_now(address, now, announced)

    def start_rounds(self, now: int) -> None:
        self.round_due = now + ROUND_EVERY_MS

    @property
    def deadline(self) -> int | None:
        """When ``handle_timer`` has something to do: a round, or a peer met waited for."""
        first = next(iter(self._awaited.values()), None)  # kept in due order: the first is next
        times = (self.round_due, first.due if first is not None else None)
        return min((t for t in times if t is not None), default=None)

    def handle_timer(self, now: int, candidates: Callable[[], Iterable[Address]]) -> None:
        self._dial_awaited(now)
        self._forget_served(now)
        self._round(now, candidates)

    def _forget_served(self, now: int) -> None:
        """Forget the hosts whose finished session can no longer stand for a
        dial: one counts only if it finished at most ``AWAIT_DIAL_MS`` before
        a peer waited for was met (``_dial_awaited``), and every peer met from
        now on is met at ``now`` or later. Anyone can open links to us from
        many hosts: kept for ever, they would pile up."""
        if self._served:
            horizon = min((now, *(wait.met_at for wait in self._awaited.values()))) - AWAIT_DIAL_MS
            self._served = {host: at for host, at in self._served.items() if at >= horizon}

    def _forget(self, now: int, candidates: set[Address]) -> None:
        """Forget when we last replicated with addresses it no longer matters
        for: ``want`` asks within ``REPLICATE_EVERY_MS``, and a round orders
        ``candidates`` by it. Anyone can make us dial many addresses (one a
        one-shot key's datagram came from, say): kept for ever, they would
        pile up (``MAX_REPLICATED`` holds them between rounds)."""
        for address, at in list(self._replicated_at.items()):
            if now - at >= REPLICATE_EVERY_MS and address not in candidates:
                del self._replicated_at[address]

    def _round(self, now: int, candidates: Callable[[], Iterable[Address]]) -> None:
        """If a round is due, dial the peer among ``candidates()`` replicated
        with longest ago (asked only then: the timer fires far more often)."""
        if self.round_due is None or now < self.round_due:
            return
        everyone = set(candidates())
        self._forget(now, everyone)
        idle = [a for a in sorted(everyone) if a not in self._dialing]
        address = min(idle, key=lambda a: self._replicated_at.get(a, -REPLICATE_EVERY_MS), default=None)
        since = self._round_since if self._round_since is not None else self.round_due
        if address is not None and self._accepted_from(self._hosts(address)) and now - since < ROUND_WAITS_MS:
            # A link from its host is open (a late joiner taking our history, maybe long after our
            # side of the session finished): dialed now, ours would send again all it has yet to
            # take; after it, ours only reconciles. Held back ROUND_WAITS_MS at most: a round is
            # what ends a forger's delay (``met``).
            self._round_since, self.round_due = since, now + AWAIT_DIAL_MS
            return
        self._round_since, self.round_due = None, now + ROUND_EVERY_MS
        if address is not None:
            self._dial_now(address, now)

    def dials(self) -> list[Address]:
        out, self._dials = self._dials, []
        return out

    def dial_ended(self, address: Address) -> None:
        self._dialing.discard(address)

    def open(self, channels: tuple[str, ...], address: Address, *, initiator: bool, now: int) -> Connection:
        conn = Connection(channels, initiator=initiator, now=now, live=self.live, peer=address)
        self.links[conn] = address
        return conn

    def admit_entry(self, entry: bytes) -> Admitted | SdsDatagram | Refused | None:
        """The first step of opening an entry that arrived on a link (the
        second is ``entry_verified``, given its signature's verdict): what is
        left to verify, or what it is already. None for a datagram of a
        channel kept blind, which is never opened (``check``)."""
        if channel_tag_of(entry) in self.blind.tags:
            return None
        return self.envelopes.admit_entry(entry)

    def entry_verified(self, admitted: Admitted, verdict: bool) -> SdsDatagram | Refused:
        return self.envelopes.entry_verified(admitted, verdict)

    def check(self, channels: tuple[str, ...], entry: bytes,
              opened: SdsDatagram | Refused | None) -> tuple[Verdict, SdsDatagram | None]:
        """What an entry that arrived on a link is (``EntryArrived``, answered
        with ``Connection.entry_checked``), by the names channels go by on
        links, and the entry as routed - or why it is refused. ``opened`` is
        the entry opened and verified (``admit_entry``, ``entry_verified``). A public
        channel's entry is its author's message with its sequence number. In
        a datagram set it is one datagram, by its blind id: kept blind
        (``BlindStore``), a chat message's datagram under the set's tag; read
        here, what it holds - and what fails is dropped, not a reason to hang
        up, since a blind store cannot tell a member's datagram from garbage
        sent under the tag."""
        tag = channel_tag_of(entry)
        in_set = tag is not None and datagram_set(tag) in channels
        if in_set and tag in self.blind.tags:
            if is_passing(entry):
                return EntryRefused("passing", "entry is not a chat message's datagram"), None
            return EntryKey(datagram_set(tag), blind_id(entry), 1), None
        try:
            routed = checked_entry(self.envelopes, channels, UNOPENED if opened is None else opened,
                                   fatal=not in_set)
        except EntryRefused as refusal:
            return refusal, None
        if in_set:
            return EntryKey(datagram_set(tag), blind_id(entry), 1), routed
        return EntryKey(routed.channel, routed.sender_id, routed.seq), routed

    def close(self, conn: Connection) -> None:
        self.links.pop(conn, None)
        self._served_links.discard(conn)
        self._catching_up.pop(conn, None)

    def answer(self, store, wanted: Read) -> dict[str, list[tuple[str, int]]] | list[bytes]:
        """Read what ``wanted`` asks for (in whatever thread owns ``store``)."""
        channel_of = self.envelopes.channel_of
        if isinstance(wanted, HeightsWanted):
            return {c: [(b, 1) for b in self._set_ids(store, c)] if c.startswith(DATAGRAM_SET)
                    else store.heights(channel_of(c)) if channel_of(c) else [] for c in wanted.channels}
        entries, sets = [], {}
        for link, author, above in wanted.wants:
            if link.startswith(DATAGRAM_SET):
                sets.setdefault(link, []).append(author)
            elif channel := channel_of(link):
                # messages stored before envelopes have no signature to show: they stay local
                entries += [self.envelopes.outgoing(channel, e) for e in store.entries_after(channel, author, above)
                            if is_envelope(e)]
        for name, ids in sets.items():
            entries += self._set_datagrams(store, name, ids)
        return entries

    def _set_ids(self, store, name: str) -> list[str]:
        """The blind ids of a datagram set: kept, or worked out from our messages."""
        tag = datagram_set_tag(name)
        return store.blind.ids(tag) if tag in self.blind.tags else list(self._sealed(store, name))

    def _set_datagrams(self, store, name: str, ids: list[str]) -> list[bytes]:
        tag = datagram_set_tag(name)
        if tag in self.blind.tags:
            return store.blind.get(tag, ids)
        channel, key = self._key(name)
        if key is None:
            return []
        known = self._sealed(store, name)
        if len(ids) * 8 < len(known):  # a few: looked up by message id, in the order the store reads them
            wires = (store.wire(channel, mid) for _, mid in sorted(known[b] for b in ids if b in known))
            return [key.encrypt(w) for w in wires if w is not None]
        wanted = set(ids)  # many: one pass over the channel
        datagrams = (key.encrypt(w) for _, w in store.wires(channel) if is_envelope(w))
        return [d for d in datagrams if blind_id(d) in wanted]

    def _sealed(self, store, name: str) -> dict[str, tuple[int, str]]:
        """A private channel's chat messages by the blind id of the datagram
        each travels as (its stored envelope encrypts to the very datagram its
        author sent): blind id -> (its place in the store's order, message id). One
        encryption and hash per message is 1 s at 100,000, and every link
        with a member or a blind store asks: so when the channel has grown (a
        log only grows) only the messages not sealed yet are."""
        channel, key = self._key(name)
        if key is None:
            return {}
        count = store.count(channel)
        held, sealed = self._sets.get(name, (0, {}))
        if count != held:
            sealed = dict(sealed) if count > held else {}
            seen = {mid for _, mid in sealed.values()}
            for position, (mid, wire) in enumerate(store.wires(channel)):
                if mid not in seen and is_envelope(wire):
                    sealed[blind_id(key.encrypt(wire))] = (position, mid)
            self._sets[name] = (count, sealed)
        return sealed

    def _key(self, name: str) -> tuple[str | None, ChannelKey | None]:
        """The private channel behind a datagram set, and its key (None: not ours)."""
        channel = self.envelopes.channel_of(name)
        return channel, self.envelopes.private.get(channel) if channel else None

    def answered(self, conn: Connection, wanted: Read, answer) -> None:
        """The store's answer to a read the link asked for (see ``reads``)."""
        if conn.closed is None:
            if isinstance(wanted, HeightsWanted):
                conn.provide_heights(wanted.session_id, answer)
            else:
                conn.provide_entries(wanted.session_id, answer)

    def reads(self) -> list[tuple[Connection, Read]]:
        out, self._reads = self._reads, []
        return out

    def outcome(self, conn: Connection, joined: set[str], now: int, out: LinkOutcome,
                opened: SdsDatagram | Refused | None = None) -> None:
        """What the link's events mean, added to ``out`` (one for a whole
        read); ``opened``: the entry of the frame it was last given, opened
        and verified (``check``)."""
        address = self.links.get(conn, ("?", 0))
        pending = list(conn.events())
        while pending:
            event = pending.pop(0)
            if isinstance(event, (HeightsWanted, EntriesWanted)):
                self._reads.append((conn, event))
            elif isinstance(event, RemoteAnnounced) and conn.initiator:
                if conn.sync(common := tuple(sorted(set(conn.channels) & set(event.channels)))) is not None:
                    pending += conn.events()
                    out.events.append(ev.CatchupStarted(tuple(address), common))
                    self._catching_up[conn] = common
                else:
                    out.over = True  # nothing in common
            elif isinstance(event, EntryArrived):
                conn.entry_checked(event.session_id, event.entry, *self.check(event.channels, event.entry, opened))
                pending += conn.events()
            elif isinstance(event, EntryDropped):
                out.refused.append(event.kind)
                out.events.append(ev.DatagramRejected(event.kind, f"replication entry from {address[0]}:{address[1]}: "
                                                                  f"{event.reason}"))
            elif isinstance(event, EntryReceived) and (tag := datagram_set_tag(event.channel)) in self.blind.tags:
                out.blind.append((tag, event.entry))
            elif isinstance(event, EntryReceived) and self.envelopes.channel_of(event.channel) in joined:
                out.entries.append((self.envelopes.channel_of(event.channel), event.checked))
            elif isinstance(event, SessionFinished):
                self._catching_up.pop(conn, None)
                if not conn.initiator:  # the peer's dial did the work of ours (``met``)
                    self._served[_host(address)] = now
                    self._served_links.add(conn)
                out.events.append(ev.CatchupFinished(tuple(address), tuple(event.channels), event.received,
                                                     event.sent, "live" if event.live else "done"))
                out.over = out.over or not event.live
            elif isinstance(event, Closed):
                if (common := self._catching_up.pop(conn, None)) is not None:  # the catch-up ends with its link
                    out.events.append(ev.CatchupFinished(tuple(address), common, 0, 0, "closed"))
                if event.reason != PEER_CLOSED:
                    log.debug("replication with %s:%s closed: %s", *address, event.reason)
                    out.events.append(ev.ReplicationClosed(tuple(address), event.reason))

    def push(self, channel: str, wires: list[bytes]) -> None:
        """Live mode: stream newly delivered messages down every open link
        (a private channel's as the datagrams of its set)."""
        if not self.live or not wires:
            return
        name, private = replicated_as(self.envelopes, channel), channel in self.envelopes.private
        entries = [self.envelopes.outgoing(channel, wire) for wire in wires if not private or is_envelope(wire)]
        for conn in self.links:
            for entry in entries:
                conn.push(name, entry)
