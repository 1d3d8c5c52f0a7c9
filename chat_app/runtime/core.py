"""The running peer's logic, without asyncio: inputs in, outputs queued.

Theory of operation. The I/O adapter reads the clock once per input and
calls one of the entry points - datagrams that arrived together
(``datagrams_received``; ``datagram_received`` for one; or in two steps,
``admit`` then ``datagrams_verified``, when the adapter checks the
signatures elsewhere: see arrivals.py), a user
command (``say``, ``join``...), a discovery report (``peer_announced``), a
replication stream's open, frame, idle timer or end (``stream_opened``...,
see links.py), or the timer (``handle_timer``). Each entry point
feeds the engines and ends with the step of every conversation it touched
(``Conversation.step``: drain, translate, commit). Only after the commit
does the runtime queue the step's datagrams, ask for missing messages and
update the peer table, and last queue the application events.

The adapter then drains the outputs: ``datagrams_to_send()`` (data,
address), ``events()`` for the user, ``dials()`` (addresses to replicate
with), ``reads()`` (what replication links want from the store: read with
``read_wanted`` on the adapter's own store connection, answered with
``store_answered``), and re-arms its one timer at ``get_timer()``. Nothing
here blocks, sends or sleeps; a test drives it with a fake clock and an
in-memory network. ``FACE`` names everything an adapter may touch of a
``Runtime``; the parts stay inside.

The runtime coordinates; the parts do the work, each in its own module:
``Channels`` (the channels we are in, their commands and the one step),
``Conversation`` (one channel's engine and store), ``Direct`` (direct
messages), ``Envelopes`` (signing,
opening, routing), ``Outbox`` (sealing and addressing what leaves),
``PrivateChannels`` (keys and blind channels), ``PeerTracker`` and ``People``
(who is out there, and which key is whose), ``Profile`` (our nick, away
reason and addresses; /whois, /trust), ``Fetcher``, ``CatchUp``
(when to replicate with whom) and ``Links`` (the replication links), and
``TypingIndicator``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from chat_app import events as ev
from chat_app.channel_names import channel_spec
from chat_app.crypto import Identity, Opened, Rekey
from chat_app.crypto.channel import reachability
from chat_app.identity import load_identity
from chat_app.address import Address
from chat_app.payload import Payload
from chat_app.runtime.catchup import CatchUp, Read
from chat_app.runtime.channels import Channels
from chat_app.runtime.conversation import Conversation
from chat_app.runtime.direct import Direct
from chat_app.runtime.arrivals import Arrival, Arrivals, verify_all
from chat_app.runtime.envelopes import Admitted, Envelopes, Routed
from chat_app.runtime.mailbox import MAILBOX_LINK, mailbox_tag
from chat_app.runtime.fetching import Backlog, Fetcher
from chat_app.runtime.links import LinkRead, Links
from chat_app.runtime.outbox import Outbox
from chat_app.runtime.people import People
from chat_app.runtime.peers import PeerTracker
from chat_app.runtime.private import PrivateChannels
from chat_app.runtime.profile import Profile
from chat_app.runtime.routing import FetchRequest, Refused
from chat_app.runtime.typing_indicator import TypingIndicator
from chat_app.store import Store
from sync.replication import Connection
from sync.sds import Config

log = logging.getLogger(__name__)

FACE = frozenset({
    # inputs, in the order a peer's life brings them
    "start", "leave", "admit", "datagrams_verified", "datagrams_received", "datagram_received",
    "peer_announced", "peer_gone", "handle_timer",
    # replication streams and the store reads their links ask for
    "stream_opened", "stream_admit", "stream_verified", "stream_frames", "stream_timer", "stream_closed",
    "dial_ended", "read_wanted",
    "store_answered",
    # outputs, drained after every input
    "datagrams_to_send", "events", "dials", "reads", "get_timer",
    # the user's commands
    "say", "typing", "join", "part", "topic", "invite", "ignore", "send_direct", "open_direct", "set_nick",
    "whois", "trust", "set_away",
    # what a surface shows or announces, and the counters
    "peer_id", "nick", "public_key", "channels", "announced_channels", "discovery_names", "svs_channels",
    "conversations", "encrypted", "peer_snapshot", "stats", "count",
})
"""Everything code outside the runtime may use of a ``Runtime``
(tests/test_runtime_face.py holds every other module of chat_app to it). The
parts - channels, envelopes, links, catch-up, the store - stay inside: an
adapter that reached for them would depend on how the runtime is built, and
could change its state without the step that keeps it consistent."""


class Runtime:
    def __init__(self, store: Store, *, nick: str, static_peers: Iterable[Address] = (), send_typing: bool = True,
                 live: bool = False, config: Config | None = None, identity: Identity | None = None,
                 passphrases: Mapping[str, str] | None = None) -> None:
        self.store = store
        self.identity = identity if identity is not None else load_identity(store)
        self.peer_id = self.identity.sender_id
        self.config = config or Config()
        self.envelopes = Envelopes(self.identity, sds=self.config)
        self.send_typing = send_typing
        self.peers = PeerTracker(static_peers)
        self.outbox = Outbox(store, self.envelopes, self.peers)
        self.fetcher = Fetcher()
        self.backlog = Backlog()
        self.private = PrivateChannels(store, self.envelopes, passphrases, self._error)
        self._catchup = CatchUp(live, self.envelopes, self.private.blind, self.peers.addresses_at)
        self.typing_state = TypingIndicator()
        self.people = People(store)
        self._stats: Counter[str] = Counter()
        self.private.blind.stats = self._stats  # a serve it refused is counted with ours
        self._events: list[ev.AppEvent] = []
        self.joined = Channels(store, self.envelopes, self.config, private=self.private, outbox=self.outbox,
                               fetcher=self.fetcher, backlog=self.backlog, catchup=self._catchup,
                               typing_state=self.typing_state, peers=self.peers, people=self.people,
                               stats=self._stats, emit=self._emit, replicate=self._replicate)
        self.direct = Direct(store, self.identity, self.typing_state, send=self.outbox.send,
                             notify=lambda e: self._events.append(e),
                             people=self.people.by_nick, address_of=lambda p: (self.peers.addresses_of(p) or [None])[0],
                             mailboxes=lambda: [p.address for p in self.peers if MAILBOX_LINK in (p.channels or ())])
        self.outbox.introductions.append(self.direct.statement)  # our exchange key, for direct messages
        self._links = Links(self._catchup, self.joined, self._stats, self._emit)
        self.profile = Profile(store, self.identity, nick, channels=self.joined, people=self.people, peers=self.peers,
                               emit=self._emit)

    # ----------------------------------------------------------------- outputs

    def datagrams_to_send(self) -> list[tuple[bytes, Address]]:
        return self.outbox.take()

    def events(self) -> list[ev.AppEvent]:
        """What happened, for the user: an ignored person's messages and typing left out
        (they are stored and synced all the same: everyone's log stays the same)."""
        out, self._events = self._events, []
        return [e for e in out if not self.people.hides(e)] if self.people.ignored else out

    def dials(self) -> list[Address]:
        return self._catchup.dials()

    def reads(self) -> list[tuple[Connection, Read]]:
        return self._catchup.reads()

    def get_timer(self) -> int | None:
        deadlines = self.joined.deadlines() + self.typing_state.deadlines()
        deadlines.append(self.peers.deadline(self.conversations))
        deadlines.append(self.private.blind.deadline())
        deadlines.append(self.direct.get_timer())
        deadlines.append(self._catchup.deadline)
        deadlines = [d for d in deadlines if d is not None]
        return min(deadlines) if deadlines else None

    @property
    def nick(self) -> str:
        return self.profile.nick

    @property
    def public_key(self) -> bytes:
        """Our signing key, for discovery to announce."""
        return self.identity.public_key

    @property
    def stats(self) -> Mapping[str, int]:
        """The counters, read-only and live (a name never counted reads 0)."""
        return MappingProxyType(self._stats)

    def count(self, name: str, n: int = 1) -> None:
        """Count something the adapter saw (a write to a stream that was
        already closing...) beside the runtime's own counters."""
        self._stats[name] += n

    def encrypted(self, channel: str) -> bool:
        """Whether what is said in ``channel`` travels sealed: a private channel or a direct conversation."""
        return channel.startswith("@") or channel in self.envelopes.private

    @property
    def conversations(self) -> dict[str, Conversation]:
        return self.joined.conversations

    @property
    def channels(self) -> tuple[str, ...]:
        return self.joined.names

    @property
    def announced_channels(self) -> tuple[str, ...]:
        """The channels as others may see them: a private one by its tag only."""
        return self.joined.announced

    @property
    def discovery_names(self) -> tuple[str, ...]:
        """What mDNS announces: the channels, and the tag a mailbox files our direct messages under."""
        return (*self.joined.announced, self.direct.mailbox_link)

    @property
    def svs_channels(self) -> tuple[str, ...]:
        return self.joined.svs

    # --------------------------------------------------------------- lifecycle

    def start(self, channels: Iterable[str], port: int, addresses: Iterable[str], now: int) -> None:
        self.profile.port, self.profile.addresses = port, tuple(addresses)
        self.store.set_nick(self.nick)
        self.joined.open_stored(channels, now)
        private = tuple(c for c in self.channels if c in self.envelopes.private)
        svs = tuple(c for c, conv in self.conversations.items() if conv.protocol == "svs")
        self._events.append(ev.Ready(self.peer_id, self.nick, port, self.profile.addresses, self.channels, private,
                                     svs))
        self.profile.start()
        for channel in self.channels:
            self.joined.step(channel, now)  # a restored engine may have datagrams due
        for address in self.peers.static:
            self._replicate(address, now)
        self._catchup.start_rounds(now)
        self.direct.start(now)

    def leave(self, now: int) -> None:
        """Say goodbye in every channel (the adapter closes the rest)."""
        self.joined.notice(Payload("leave", self.nick, sent_at=now), now, release_all=True)  # nothing typed stays
        self.direct.leave()  # what waits for someone goes to the mailboxes: we may be gone when they return
        for conn in self._catchup.links:
            conn.stop_live()

    # ---------------------------------------------------------------- commands

    def say(self, channel: str, text: str, kind: str, now: int, about: str = "") -> str | None:
        """Send a chat message (``about``: the message a reply, reaction, edit or
        deletion is about); returns its id, or None (and an error event)."""
        return self.joined.say(channel, self.nick, text, kind, now, about)

    def typing(self, channel: str, now: int) -> None:
        """The user is typing in a channel or a direct conversation (``@`` and
        an id): tell it, at most once per 3 s."""
        if not self.send_typing:
            return
        if channel.startswith("@"):
            self.direct.typing(channel, self.nick, now)
        elif channel in self.conversations and self.typing_state.should_send(channel, now):
            self.joined.notice(Payload("typing", self.nick, sent_at=now), now, [channel])

    def send_direct(self, target: str, text: str, kind: str, now: int, about: str = "") -> str | None:
        """A direct message to ``target`` (a nick, or ``@`` and an id; ``about``
        as for ``say``): its id, or None (and an error event)."""
        return self.direct.send(target, text, kind, self.nick, now, about)

    def open_direct(self, target: str, now: int) -> str | None:
        """``/query``: open the direct conversation with ``target``; its name (``@`` and their id), or None."""
        conversation = self.direct.open(target, now)
        return conversation.channel if conversation is not None else None

    def join(self, channel: str, now: int, passphrase: str | None = None) -> bool:
        """True if the channel is new (the adapter then re-announces us).
        Joining a channel someone invited us to, without a passphrase,
        takes the key their invitation held: that is the consent."""
        invited = channel.removeprefix("#")
        if passphrase is None and (invitation := self.direct.invitations.pop(invited, None)):
            if not self.private.accept(invited, invitation):
                return False
        new = self.joined.join(channel, now, passphrase)
        if new and (name := channel_spec(channel)[0]) in self.envelopes.private:  # its members, known by its tag
            self._events += map(self._named, self.peers.members(self.envelopes.link_name(name)))
        return new

    def topic(self, channel: str, now: int) -> None:
        self.joined.topic(channel)

    def invite(self, target: str, channel: str, now: int) -> None:
        """``/invite nick #channel``: hand ``target`` the key of a private channel we are in."""
        channel = channel.removeprefix("#")
        if (secret := self.private.secret(channel)) is None:
            return self._emit([ev.Error(f"#{channel} is not a private channel you are in: /invite hands over "
                                        f"a private channel's key")])
        self.direct.invite(target, channel, secret, now)

    def part(self, channel: str) -> bool:
        return self.joined.part(channel)

    def ignore(self, nick: str | None, now: int) -> None:
        """Ignore the people seen as ``nick`` (or stop); None: report the list."""
        self._events.append(self.people.ignore(nick, self.peer_id))

    def set_nick(self, nick: str, now: int) -> bool:
        """True if ``nick`` is ours now (the adapter then re-announces us)."""
        return self.profile.set_nick(nick)

    def whois(self, nick: str, now: int) -> None:
        """``/whois nick``: what we know of them, as an event."""
        self.profile.whois(nick, now)

    def trust(self, argument: str, now: int) -> None:
        """``/trust nick fingerprint``, as typed."""
        self.profile.trust(argument, now)

    def set_away(self, reason: str, now: int) -> None:
        """Away for ``reason``, or back (empty)."""
        self.profile.set_away(reason, now)

    def _emit(self, events: list[ev.AppEvent]) -> None:
        self._events += events  # not a bound ``extend``: ``events()`` swaps the list

    def _error(self, reason: str) -> None:
        self._events.append(ev.Error(reason))
        return None

    # -------------------------------------------------------------- the network

    def datagram_received(self, data: bytes, addr: Address, now: int) -> None:
        self.datagrams_received([(data, addr)], now)

    def datagrams_received(self, batch: Iterable[tuple[bytes, Address]], now: int) -> None:
        """Datagrams that arrived together, their signatures checked here, one after another."""
        arrivals = self.admit(batch, now)
        self.datagrams_verified(arrivals, verify_all(arrivals.to_verify), now)

    def admit(self, batch: Iterable[tuple[bytes, Address]], now: int) -> Arrivals:
        """The first step of receiving datagrams that arrived together: each
        source's verification budget spent, repeats and known-bad bytes
        answered from memory; ``to_verify`` is the signatures left to check."""
        arrivals = []
        for data, addr in batch:
            self._stats["datagrams_in"] += 1
            if (envelope := self.direct.letter_for_us(data)) is not None:  # a mailbox hands us our mail
                arrival = Arrival(data, addr, self.envelopes.admit(envelope, addr, now), letter=True)
            elif (tag := self.private.blind_tag(data)) is not None:
                arrival = Arrival(data, addr, None, blind=tag)
            elif (reach := reachability(data)) is not None:
                arrival = Arrival(data, addr, None, reach=reach)
            else:
                arrival = Arrival(data, addr, self.envelopes.admit(data, addr, now))
            arrivals.append(arrival)
        return Arrivals(arrivals, [a.admitted.envelope for a in arrivals if isinstance(a.admitted, Admitted)])

    def datagrams_verified(self, arrivals: Arrivals, verdicts: Sequence[bool], now: int) -> None:
        """The second step: ``verdicts`` on ``arrivals.to_verify``, in its order.
        Each datagram is fed to its channel's engine if it verified, in the
        order they arrived; then every channel touched takes one step - one
        commit for the batch, however many duplicates and acknowledgements it held."""
        if len(verdicts) != len(arrivals.to_verify):
            raise ValueError(f"{len(verdicts)} verdicts for {len(arrivals.to_verify)} signatures")
        verdict = iter(verdicts)
        touched: dict[str, None] = {}
        self.backlog.read(len(arrivals.arrivals), now)  # before the engines take them: an SVS member retries
        for arrival in arrivals.arrivals:
            admitted = arrival.admitted
            if isinstance(admitted, Admitted):
                admitted = self.envelopes.verified(admitted, next(verdict), now)
            if (channel := self._take(arrival, admitted, now)) is not None:
                touched[channel] = None
        self._stats["batches_in"] += 1
        for channel in touched:
            self.joined.step(channel, now)

    def _take(self, arrival: Arrival, routed: Routed | None, now: int) -> str | None:
        """Feed one datagram, opened, to its engine; the channel that needs a step, if any."""
        addr = arrival.addr
        if arrival.letter:
            return self.direct.from_mailbox(routed, now)
        if arrival.blind is not None:
            self._stats[self.private.blind.received(arrival.blind, arrival.data, addr, now)] += 1
            self.outbox.extend(self.private.blind.due(now))
            return None
        if arrival.reach is not None:
            counted, answers = self.private.reached(arrival.reach, addr, now, self.direct.mailbox_tag)
            self._stats[counted] += 1
            self.outbox.extend(answers)
            self.outbox.extend(self.private.blind.due(now))
            return None
        if isinstance(routed, Refused):
            self._stats[routed.kind] += 1
            self._events.append(ev.DatagramRejected(routed.kind, routed.reason))
        elif isinstance(routed, FetchRequest):
            self._serve_fetch(routed, addr, now)
        elif isinstance(routed, Rekey):
            self.people.rekeyed(routed.old_sender_id, routed.new_sender_id)
        elif isinstance(routed, Opened):  # a direct message, or someone's exchange key
            self._heard(routed.signer.sender_id, addr, now, direct=True)
            self.direct.received(routed, addr, now)
        elif routed.channel not in self.conversations:
            self._stats["other_channel"] += 1
        else:
            if routed.sender_id and routed.sender_id != self.peer_id:
                # sync and ephemeral messages only ever come from their author
                self._heard(routed.sender_id, addr, now, direct=not routed.chat)
                if not routed.chat:  # its own, fresh: it is in the channel, whatever it announced
                    link = self.envelopes.link_name(routed.channel)
                    self._events += map(self._named, self.peers.spoke_in(routed.sender_id, link))
            self.conversations[routed.channel].engine.receive_message(routed.parsed, now, addr)
            return routed.channel
        return None

    def _serve_fetch(self, request: FetchRequest, addr: Address, now: int) -> None:
        if request.channel not in self.conversations:
            return
        wires, refused = self.fetcher.answers(request.message_ids, addr,
                                              lambda mid: self.outbox.stored(request.channel, mid), now)
        self._stats["fetch_served"] += len(wires)
        self._stats["fetch_refused"] += refused
        self.outbox.fetched(request.channel, wires, addr)

    def _heard(self, peer_id: str, addr: Address, now: int, direct: bool) -> None:
        events, new = self.peers.heard(peer_id, addr, now, direct)
        self._events += events
        self.direct.heard(peer_id, addr, now)
        if new:
            self.outbox.met(addr)
            self._meet(peer_id, addr, now, announced=False)
            self.profile.greet(now)  # a newcomer learns we are away

    def peer_announced(self, peer_id: str, nick: str, addresses: list[str], port: int, channels: tuple[str, ...],
                       now: int, key: bytes = b"", svs: tuple[str, ...] = ()) -> None:
        self.joined.svs_announced(svs)
        # its own mailbox tag is no channel it is in: only a mailbox store needs it (``private.announced``)
        mail = f"~{mailbox_tag(key).hex()}" if key else None
        in_channels = tuple(c for c in channels if c != mail)
        event, peer, new = self.peers.announced(peer_id, nick, addresses, port, in_channels, now)
        self._events.append(self._named(replace(event, svs=tuple(c for c in svs if c in in_channels))))
        self._events += self.people.seen(peer_id, key or None, nick, now)
        self.private.announced(channels, peer.address, now)
        self.direct.heard(peer_id, peer.address, now)
        if MAILBOX_LINK in channels:
            self.direct.mailbox_announced(peer.address, now)
        if new:
            self.outbox.met(peer.address)
            self._meet(peer_id, peer.address, now, announced=True)

    def _named(self, event: ev.PeerJoined) -> ev.PeerJoined:
        """A private channel is announced by its tag: show its name if it is ours."""
        if event.channels is None:
            return event
        return replace(event, channels=self.private.names(event.channels), svs=self.private.names(event.svs))

    def peer_snapshot(self) -> ev.Peers:
        """The peer list, a private channel of ours by its name and a mailbox store marked as one."""
        snapshot = self.peers.snapshot(self.profile.addresses, self.profile.port)
        return replace(snapshot, peers=tuple(map(self._shown, snapshot.peers)))

    def _shown(self, peer: dict) -> dict:
        if peer["channels"] is None:
            return peer
        channels = tuple(c for c in peer["channels"] if c != MAILBOX_LINK)
        return {**peer, "channels": list(self.private.names(channels)), "mailbox": MAILBOX_LINK in peer["channels"]}

    def peer_gone(self, peer_id: str, now: int) -> None:
        """Its mDNS goodbye (see ``chat_app.peers.GONE_MS``)."""
        self._events += self.peers.gone(peer_id, now)

    # ------------------------------------------------------ replication streams

    def stream_opened(self, address: Address, *, initiator: bool, now: int) -> Connection:
        """A replication stream with ``address`` is connected (``initiator``: we
        dialed it, for ``dials()``). Returns its link: the adapter writes what
        ``conn.datagrams_to_send`` gives after every input, waits for a frame
        until ``conn.get_timer()``, and passes the link to the calls below."""
        return self._links.open(address, initiator=initiator, now=now)

    def stream_admit(self, conn: Connection, frames: Sequence[bytes]) -> LinkRead:
        """The first step of taking the frames one read of ``conn``'s stream
        brought, all of them: decoded, each entry opened but for its signature;
        ``to_verify`` is the signatures left to check (``verify_all``, on any thread)."""
        return self._links.admit(conn, frames)

    def stream_verified(self, conn: Connection, read: LinkRead, verdicts: Sequence[bool], now: int) -> bool:
        """The second step: ``verdicts`` on ``read.to_verify``, in its order.
        The frames go to the link in order, the verified entries to their
        engines (they commit in one step). True when the adapter should hang
        up: a session we started is over, or the link closed."""
        return self._links.verified(conn, read, verdicts, now)

    def stream_frames(self, conn: Connection, frames: Sequence[bytes] | None, now: int) -> bool:
        """Both steps at once, the signatures checked on this thread; None:
        the stream ended or failed (the adapter closed ``conn`` first, saying why)."""
        return self._links.received(conn, frames, now)

    def stream_timer(self, conn: Connection, now: int) -> bool:
        """``conn.get_timer()`` came with no frame: the link's own idle timeout.
        True when the adapter should hang up."""
        return self._links.timer(conn, now)

    def stream_closed(self, conn: Connection) -> None:
        """``conn``'s stream is gone, after its last ``stream_frames``: the link is forgotten."""
        self._catchup.close(conn)

    def dial_ended(self, address: Address) -> None:
        """A dial from ``dials()`` is over: it could not connect, or its stream
        closed. ``address`` may be dialed again (no sooner than catch-up allows)."""
        self._catchup.dial_ended(address)

    def read_wanted(self, store: Store, wanted: Read) -> dict[str, list[tuple[str, int]]] | list[bytes]:
        """Read what a link asked for (one of ``reads()``) from ``store``: the
        adapter's own connection to this runtime's database, so it may run on
        the thread that owns that connection, off the adapter's loop. Returns
        the answer for ``store_answered``."""
        return self._catchup.answer(store, wanted)

    def store_answered(self, conn: Connection, wanted: Read, answer, now: int) -> bool:
        """``read_wanted``'s answer, back on the adapter's loop. True when the
        adapter should hang up (the entries that ended our session went out)."""
        return self._links.answer(conn, wanted, answer, now)

    # ------------------------------------------------------------- replication

    @property
    def _replicates(self) -> bool:
        """Whether there is anything to replicate: a channel, or one kept blind."""
        return bool(self.conversations or self.private.blind.replicated())

    def _replicate(self, address: Address, now: int) -> None:
        if self._replicates:
            self._catchup.dial(address, now)

    def _meet(self, peer_id: str, address: Address, now: int, announced: bool) -> None:
        """A peer new to us (``announced``: by mDNS, else by its datagrams): one
        link between us is enough, and the lower id dials it (``CatchUp.met``)."""
        if self._replicates:
            self._catchup.met(address, dial_first=self.peer_id < peer_id, now=now, announced=announced)

    def _round_candidates(self) -> list[Address]:
        """Whom a replication round may pick: every address our channels' datagrams go to."""
        if not self._replicates:
            return []
        return sorted(set().union(*(self.peers.targets(c) for c in self.announced_channels)))

    # -------------------------------------------------------------------- time

    def handle_timer(self, now: int) -> None:
        self.joined.handle_timer(now)
        self.outbox.extend(self.private.blind.due(now))
        self.direct.handle_timer(now)
        self._events += self.typing_state.expire(now)
        left, probed = self.peers.on_timer(self.conversations, now)
        self._events += left
        for address in probed:  # a probe's first datagram: heard there, we are moved there
            self.outbox.met(address)
        self._catchup.handle_timer(now, self._round_candidates)
