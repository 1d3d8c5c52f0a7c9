"""One member of an SVS sync group (spec section 4), put together from parts.

Theory of operation
-------------------

The member keeps a *state vector*: for every producer it knows, the latest
sequence number it has seen announced. It announces its vector in sync
interests (``announce.Announcer`` encodes and splits it; ``suppression``
decides when: every 30 s +-10%, or after 200 ms +-50% of suppression when
someone is behind, and at once on a new publication); a larger number in
someone else's vector means publications to fetch (``fetch.Fetcher``); our
own entry in someone else's vector says they have heard of our publications
(``receipts``). Sync interests are never acknowledged.

A fresh member sends its (empty) vector at once: it is outdated to everyone,
so someone answers within a suppression interval with the whole state.

Sequence numbers start at 1 and are never reused: ``send`` reports the new
publication as ``Delivered(own=True)`` before its sync interest is handed
out, so a runtime that commits events before transmitting (the ``sync.core``
rule) has stored the number first. A member that lost its state starts under
a new bootstrap time (v3), i.e. as a new producer; if a stale restore ever
meets its own producer with a higher number in a vector, it jumps past it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterator

from sync.core import BROADCAST, LocalProtocolError, Outgoing, RemoteProtocolError

from . import packets
from .announce import Announcer
from .config import Config
from .events import Delivered, Event, Known, Missing, Rejected
from .jitter import Jitter
from .names import Name
from .plain import VERSION, address_from_plain, address_to_plain, seed_for, vector_from_plain, vector_to_plain
from .receipts import Receipts
from .retrieval import Retrieval
from .suppression import STEADY, SUPPRESSION, SyncTimer
from .vector import Producer

__all__ = ["STEADY", "SUPPRESSION", "Channel"]


class Channel:
    """An SVS group member following the ``sync.core`` engine protocol."""

    def __init__(self, group: Name | str, node_id: Name | str, now: int, config: Config | None = None, *,
                 bootstrap_time: int | None = None, seed: bytes | None = None, saved: dict | None = None) -> None:
        """``saved``: what ``restore`` resumes from."""
        self.config = config or Config()
        self.group = Name.of(group)
        self.node = Name.of(node_id)
        self.bootstrap = now // 1000 if bootstrap_time is None else bootstrap_time
        self.me = Producer(self.node, self.bootstrap)
        self.vector: dict[Producer, int] = {}
        self.hearsay: set[Producer] = set()  # producers known only from others' vectors (``Config.max_hearsay``)
        self.stats: Counter[str] = Counter()
        self._jitter = Jitter(seed or seed_for(self.me))
        self._timer = SyncTimer(self.config, self._jitter, now)
        self._announcer = Announcer(self.group, self.node, self.config.max_datagram_bytes)
        self._receipts = Receipts()
        self._data = Retrieval(self.group, self.config, self.stats)
        self._events: list[Event] = []
        self._out: list[Outgoing] = []
        if saved is not None:
            self._restore_parts(saved)

    @property
    def seq(self) -> int:
        """This member's latest sequence number (0 before its first publication)."""
        return self.vector.get(self.me, 0)

    @property
    def state(self) -> str:
        return self._timer.state

    def member_addresses(self) -> list[Hashable]:
        """Where the members we heard sync interests from send from."""
        return list(self._data.fetch.addresses.values())

    @property
    def behind_at(self) -> int | None:
        """When the host's own input was last behind (set by the host): data
        interests are not retried till ``Config.behind_timeout_ms`` later."""
        return self._data.fetch.behind_at

    @behind_at.setter
    def behind_at(self, when: int | None) -> None:
        self._data.fetch.behind_at = when

    @property
    def vector_version(self) -> int:
        """Grows whenever an entry of the vector does (ours included)."""
        return self._announcer.clock

    # --------------------------------------------------------- commands

    def send(self, content: bytes, now: int) -> int:
        """Publish ``content``; return its sequence number."""
        if not isinstance(content, bytes) or not content:
            raise LocalProtocolError("content must be non-empty bytes")
        seq = self.seq + 1
        self._set_entry(self.me, seq)
        self._data.fetch.skip_to(self.me, seq)
        self._data.cache.remember(self.me, seq, content)
        self._events.append(Delivered(str(self.node), self.bootstrap, seq, content, own=True))
        self.stats["published"] += 1
        self._emit(now, excerpt=True)
        self._timer.published(now)
        return seq

    def provide(self, node: Name | str, bootstrap: int, seq: int, content: bytes, to: Hashable) -> None:
        """Answer a ``DataWanted`` with the publication from the runtime's store."""
        producer = Producer(Name.of(node), bootstrap)
        if not self._data.fetch.has(producer, seq) and not (producer == self.me and seq <= self.seq):
            raise LocalProtocolError(f"{producer} #{seq} was never delivered here")
        self._data.cache.remember(producer, seq, content)
        self._out.append(Outgoing(packets.encode_publication(self.group, producer, seq, content), to))

    def delivered_elsewhere(self, node: Name | str, seq: int, bootstrap: int | None = None) -> bool:
        """The runtime holds ``node``'s publications 1..``seq`` from another
        source (replication over TCP): they need no fetching, and this member
        may announce them. Without ``bootstrap``, for the node's latest
        bootstrap known here - False (nothing changes) for a node no vector
        has named yet."""
        node = Name.of(node)
        if bootstrap is None:
            bootstraps = self._announcer.by_node.get(node)
            if not bootstraps:
                return False
            bootstrap = max(bootstraps)
        producer = Producer(node, bootstrap)
        if producer == self.me or seq < 1:
            return False
        self.hearsay.discard(producer)
        if seq > self.vector.get(producer, 0):
            self._set_entry(producer, seq)
        self._events += [self._data.delivered(producer, ready, content)
                         for ready, content in self._data.fetch.settle(producer, seq)]
        self.stats["delivered_elsewhere"] += 1
        return True

    # ----------------------------------------------------------- inputs

    def parse(self, data: bytes) -> packets.SyncInterest | packets.DataInterest | packets.Publication:
        """One packet of this group, for ``receive_message``; raises ``RemoteProtocolError``."""
        return packets.decode(bytes(data), self.group)

    def receive(self, data: bytes, now: int, source: Hashable | None = None) -> None:
        try:
            packet = self.parse(data)
        except RemoteProtocolError as exc:
            self.stats["received"] += 1
            self._refuse(exc)
            self._request(now)
            return
        self.receive_message(packet, now, source)

    def receive_message(self, packet: packets.SyncInterest | packets.DataInterest | packets.Publication, now: int,
                        source: Hashable | None = None) -> None:
        """``receive`` for a packet already decoded (``parse``, or a router's
        ``packets.decode`` for this group): it is not read again."""
        self.stats["received"] += 1
        try:
            if isinstance(packet, packets.SyncInterest):
                self._on_sync_interest(packet, now, source)
            elif isinstance(packet, packets.DataInterest):
                self._on_data_interest(packet, source)
            elif delivered := self._data.take(packet, source, self.me, self.vector):
                self.hearsay.discard(packet.producer)
                self._events += delivered
        except RemoteProtocolError as exc:
            self._refuse(exc)
        self._request(now)

    def _refuse(self, exc: RemoteProtocolError) -> None:
        self.stats[exc.kind] += 1
        self._events.append(Rejected(exc.kind, str(exc)))

    def handle_timer(self, now: int) -> None:
        repeat = self._timer.repeating  # a repeat says what the publication's sync interest said
        send = self._timer.fire(now, self.vector)
        if send:
            self._emit(now, excerpt=repeat)
        elif send is False:
            self.stats["suppressed"] += 1
        if send is not None:
            self._timer.steady(now)
        if self._timer.keepalive_due(now):
            self.stats["keepalive"] += 1
            self._emit(now)
        self._request(now)

    # ---------------------------------------------------------- outputs

    def events(self) -> Iterator[Event]:
        events, self._events = self._events, []
        return iter(events)

    def datagrams_to_send(self, now: int) -> list[Outgoing]:
        out, self._out = self._out, []
        return out

    def get_timer(self) -> int | None:
        due = self._timer.next_due()
        fetch = self._data.fetch.next_due()
        return due if fetch is None else min(due, fetch)

    # -------------------------------------------------------- sync state

    def _on_sync_interest(self, interest: packets.SyncInterest, now: int, source: Hashable | None) -> None:
        if interest.sender == self.node:
            self.stats["echo"] += 1
            return
        horizon = now // 1000 + self.config.future_bootstrap_s
        if any(p.bootstrap > horizon for p in interest.vector):
            raise RemoteProtocolError("future_bootstrap", "a bootstrap time more than 24 h ahead")
        self.stats["sync_received"] += 1
        if source is not None:
            self._data.fetch.addresses[interest.sender] = source
        for producer, seq in interest.vector.items():
            if not self._keeps(producer, interest.sender):
                continue
            if source is not None:
                self._data.fetch.saw(source, producer, seq)
            if seq > self.vector.get(producer, 0):
                self._learn(producer, seq)
        if (ours := interest.vector.get(self.me)) is not None:
            for seq, members in self._receipts.saw(interest.sender, min(ours, self.seq)):
                self._events.append(Known(seq, members))
        self._timer.heard(interest.vector, interest.spans(), self.vector, now)

    def _keeps(self, producer: Producer, sender: Name) -> bool:
        """Whether to keep what an incoming vector says of ``producer``: any
        member may name producers nobody else has heard of, so the vector
        holds at most ``max_producers``, and at most ``max_hearsay`` of them
        known only from others' vectors. A producer speaking for itself is
        no hearsay."""
        if producer == self.me:
            return True
        speaks = producer.node == sender
        if speaks:
            self.hearsay.discard(producer)
        if producer in self.vector:
            return True
        if len(self.vector) >= self.config.max_producers:
            self.stats["producers_refused"] += 1
            return False
        if not speaks:
            if len(self.hearsay) >= self.config.max_hearsay:
                self.stats["hearsay_refused"] += 1
                return False
            self.hearsay.add(producer)
        return True

    def _learn(self, producer: Producer, seq: int) -> None:
        if producer == self.me:  # restored from a stale state: never reuse a number
            if not self.config.adopt_own_seq:
                self.stats["own_seq_claimed"] += 1  # someone says we are further than we are: we know better
                return
            self.stats["own_seq_advanced"] += 1
            self._set_entry(producer, seq)
            self._data.fetch.skip_to(producer, seq)
            return
        low = max(self.vector.get(producer, 0), self._data.fetch.delivered.get(producer, 0)) + 1
        self._set_entry(producer, seq)
        self._data.fetch.learn(producer, seq)
        if low <= seq:
            self._events.append(Missing(str(producer.node), producer.bootstrap, low, seq))

    def _set_entry(self, producer: Producer, seq: int) -> None:
        self.vector[producer] = seq
        self._announcer.set(producer, seq)

    def _emit(self, now: int, excerpt: bool = False) -> None:
        """Send the vector: whole if it fits, else in parts or as an excerpt (see ``split``)."""
        self._timer.last_emit = now
        for data in self._announcer.sync_interests(self._jitter.nonce, excerpt):
            self._out.append(Outgoing(data, BROADCAST))
            self.stats["sync_sent"] += 1

    # ------------------------------------------------------------- data

    def _on_data_interest(self, interest: packets.DataInterest, source: Hashable | None) -> None:
        reply = self._data.answer(interest, source)
        if isinstance(reply, Outgoing):
            self._out.append(reply)
        elif reply is not None:
            self._events.append(reply)

    def _request(self, now: int) -> None:
        self._out += self._data.requests(now, self.vector, self._jitter.nonce)

    # ------------------------------------------------------------ state

    # Each part exports and restores its own fields; the member puts them
    # together in one flat dict (``plain``), and keeps the vector itself.

    def export_state(self) -> dict:
        return {
            "version": VERSION, "group": self.group.encode(), "node": self.node.encode(),
            "bootstrap": self.bootstrap, **self._jitter.export(), "vector": vector_to_plain(self.vector),
            "hearsay": [[p.node.encode(), p.bootstrap] for p in self.hearsay], **self._announcer.export(),
            **self._timer.export(), **self._data.export(address_to_plain),
            "receipts": self._receipts.export(Name.encode), "stats": dict(self.stats),
        }

    @classmethod
    def restore(cls, state: dict, config: Config | None = None) -> Channel:
        if state.get("version") != VERSION:
            raise ValueError(f"unknown SVS state version {state.get('version')!r}")
        return cls(Name.decode(state["group"]), Name.decode(state["node"]), 0, config or Config(),
                   bootstrap_time=state["bootstrap"], seed=state["seed"], saved=state)

    def _restore_parts(self, saved: dict) -> None:
        """Each part back to what it exported: the vector's entries before the
        announcer, whose record of when each grew ``set`` would overwrite.
        (States saved before hearsay and receipts lack them.)"""
        self._jitter.restore(saved)
        for producer, seq in vector_from_plain(saved["vector"]).items():
            self._set_entry(producer, seq)
        self.hearsay = {Producer(Name.decode(n), b) for n, b in saved.get("hearsay", [])}
        self._announcer.restore(saved)
        self._timer.restore(saved)
        self._data.restore(saved, address_from_plain)
        self._receipts.restore(saved.get("receipts", []), Name.decode)
        self.stats.update(saved["stats"])  # the parts count into the same Counter
