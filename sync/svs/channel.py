"""One member of an SVS sync group: the state machine of spec section 4.

Theory of operation
-------------------

The member keeps a *state vector*: for every producer it knows, the latest
sequence number it has seen announced. It announces its vector in sync
interests; a larger number in someone else's vector means publications to
fetch (``fetch.Fetcher``); a smaller one means someone is behind.

One timer drives the sync interests. In **steady** state it is the Sync
Interest Timer, 30 s +-10%: when it fires the member sends its vector; an
incoming vector that is up to date or newer resets it (someone else just
said what we would say). An incoming vector that is *outdated* (it lacks
something we have) moves the member to **suppression**: the timer becomes
200 ms +-50%, incoming vectors are merged into an aggregate, and when it
fires the member sends its vector only if the aggregate is still outdated -
if another member answered first, it stays quiet. Either way it returns to
steady with a fresh 30 s timer. A new publication sends a sync interest at
once and resets the timer. Sync interests are never acknowledged.

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

from collections import Counter, OrderedDict
from collections.abc import Hashable, Iterator

from sync.core import BROADCAST, LocalProtocolError, Outgoing, RemoteProtocolError

from . import packets, split, vector
from .config import Config
from .events import DataWanted, Delivered, Event, Missing, Rejected
from .fetch import Fetcher
from .jitter import Jitter
from .names import Name
from .plain import export_channel, restore_channel, seed_for
from .vector import Producer

STEADY, SUPPRESSION = "steady", "suppression"


class Channel:
    """An SVS group member following the ``sync.core`` engine protocol."""

    def __init__(self, group: Name | str, node_id: Name | str, now: int, config: Config | None = None, *,
                 bootstrap_time: int | None = None, seed: bytes | None = None) -> None:
        self.config = config or Config()
        self.group = Name.of(group)
        self.node = Name.of(node_id)
        self.bootstrap = now // 1000 if bootstrap_time is None else bootstrap_time
        self.me = Producer(self.node, self.bootstrap)
        self.vector: dict[Producer, int] = {}
        self.state = STEADY
        self.stats: Counter[str] = Counter()
        self._jitter = Jitter(seed or seed_for(self.me))
        self._sync_due = now  # a fresh member announces itself at once
        self._last_emit = now  # when this member last sent its vector (``Config.keepalive_ms``)
        self._aggregate: dict[Producer, int] = {}
        self._aggregate_spans: list[vector.Span] = []  # what the aggregated vectors spoke for
        self._fetch = Fetcher(self.config)
        self._cache: OrderedDict[tuple[Producer, int], bytes] = OrderedDict()
        self._by_node: dict[Name, dict[int, int]] = {}
        self._encoded: dict[Name, bytes] = {}  # node -> its encoded StateVectorEntry
        self._touched: dict[Name, int] = {}  # node -> when its entry last grew (a counter)
        self._clock = 0
        self._events: list[Event] = []
        self._out: list[Outgoing] = []

    @property
    def seq(self) -> int:
        """This member's latest sequence number (0 before its first publication)."""
        return self.vector.get(self.me, 0)

    # --------------------------------------------------------- commands

    def send(self, content: bytes, now: int) -> int:
        """Publish ``content``; return its sequence number."""
        if not isinstance(content, bytes) or not content:
            raise LocalProtocolError("content must be non-empty bytes")
        seq = self.seq + 1
        self._set_entry(self.me, seq)
        self._fetch.skip_to(self.me, seq)
        self._remember(self.me, seq, content)
        self._events.append(Delivered(str(self.node), self.bootstrap, seq, content, own=True))
        self.stats["published"] += 1
        self._emit(now, excerpt=True)
        self._enter_steady(now)
        return seq

    def provide(self, node: Name | str, bootstrap: int, seq: int, content: bytes, to: Hashable) -> None:
        """Answer a ``DataWanted`` with the publication from the runtime's store."""
        producer = Producer(Name.of(node), bootstrap)
        if not self._fetch.has(producer, seq) and not (producer == self.me and seq <= self.seq):
            raise LocalProtocolError(f"{producer} #{seq} was never delivered here")
        self._remember(producer, seq, content)
        self._out.append(Outgoing(packets.encode_publication(self.group, producer, seq, content), to))

    def delivered_elsewhere(self, node: Name | str, seq: int, bootstrap: int | None = None) -> bool:
        """The runtime holds ``node``'s publications 1..``seq`` from another
        source (replication over TCP): they need no fetching, and this member
        may announce them. Without ``bootstrap``, for the node's latest
        bootstrap known here - False (nothing changes) for a node no vector
        has named yet."""
        node = Name.of(node)
        if bootstrap is None:
            bootstraps = self._by_node.get(node)
            if not bootstraps:
                return False
            bootstrap = max(bootstraps)
        producer = Producer(node, bootstrap)
        if producer == self.me or seq < 1:
            return False
        if seq > self.vector.get(producer, 0):
            self._set_entry(producer, seq)
        for ready, content in self._fetch.settle(producer, seq):
            self._remember(producer, ready, content)
            self._events.append(Delivered(str(producer.node), producer.bootstrap, ready, content))
        self.stats["delivered_elsewhere"] += 1
        return True

    # ----------------------------------------------------------- inputs

    def receive(self, data: bytes, now: int, source: Hashable | None = None) -> None:
        self.stats["received"] += 1
        try:
            packet = packets.decode(bytes(data), self.group)
            if isinstance(packet, packets.SyncInterest):
                self._on_sync_interest(packet, now, source)
            elif isinstance(packet, packets.DataInterest):
                self._on_data_interest(packet, source)
            else:
                self._on_publication(packet, source)
        except RemoteProtocolError as exc:
            self.stats[exc.kind] += 1
            self._events.append(Rejected(exc.kind, str(exc)))
        self._request(now)

    def handle_timer(self, now: int) -> None:
        if now >= self._sync_due:
            if self.state == STEADY:
                self._emit(now)
            elif vector.is_outdated(self._aggregate, self.vector, self._aggregate_spans):
                self._emit(now)
            else:
                self.stats["suppressed"] += 1
            self._enter_steady(now)
        keepalive = self.config.keepalive_ms
        if keepalive and now >= self._last_emit + keepalive:
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
        due = self._sync_due
        if self.config.keepalive_ms:
            due = min(due, self._last_emit + self.config.keepalive_ms)
        fetch = self._fetch.next_due()
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
            self._fetch.addresses[interest.sender] = source
        for producer, seq in interest.vector.items():
            if source is not None:
                self._fetch.saw(source, producer, seq)
            if seq > self.vector.get(producer, 0):
                self._learn(producer, seq)
        spans = interest.spans()
        if self.state == SUPPRESSION:
            for producer, seq in interest.vector.items():
                self._aggregate[producer] = max(seq, self._aggregate.get(producer, 0))
            self._aggregate_spans += [s for s in spans if s not in self._aggregate_spans]
        elif vector.is_outdated(interest.vector, self.vector, spans):
            self.state = SUPPRESSION
            self._sync_due = now + self._suppression()
            self._aggregate = dict(interest.vector)
            self._aggregate_spans = spans
        else:
            self._sync_due = now + self._periodic()  # up to date or newer: ours can wait

    def _learn(self, producer: Producer, seq: int) -> None:
        if producer == self.me:  # restored from a stale state: never reuse a number
            self.stats["own_seq_advanced"] += 1
            self._set_entry(producer, seq)
            self._fetch.skip_to(producer, seq)
            return
        low = max(self.vector.get(producer, 0), self._fetch.delivered.get(producer, 0)) + 1
        self._set_entry(producer, seq)
        self._fetch.learn(producer, seq)
        if low <= seq:
            self._events.append(Missing(str(producer.node), producer.bootstrap, low, seq))

    def _enter_steady(self, now: int) -> None:
        self.state = STEADY
        self._aggregate = {}
        self._aggregate_spans = []
        self._sync_due = now + self._periodic()

    def _suppression(self) -> int:
        if self.config.suppression_curve == "decaying":
            return self._jitter.decaying(self.config.suppression_ms)
        return self._jitter.around(self.config.suppression_ms, self.config.suppression_jitter)

    def _periodic(self) -> int:
        return self._jitter.around(self.config.sync_interval_ms, self.config.sync_jitter)

    def _set_entry(self, producer: Producer, seq: int) -> None:
        self.vector[producer] = seq
        self._by_node.setdefault(producer.node, {})[producer.bootstrap] = seq
        self._encoded.pop(producer.node, None)
        self._clock += 1
        self._touched[producer.node] = self._clock

    def _emit(self, now: int, excerpt: bool = False) -> None:
        """Send the vector: whole if it fits, else in parts or as an excerpt (see ``split``)."""
        self._last_emit = now
        budget = self.config.max_datagram_bytes - packets.sync_interest_overhead(self.group, self.node)
        if excerpt:
            recent = sorted(self._by_node, key=lambda node: (-self._touched[node], node.canonical_key()))
            chosen = split.excerpt([(node, self._entry(node)) for node in recent], budget)
            if len(chosen) < len(recent):
                self._send_vector(sorted(chosen, key=lambda e: e[0].canonical_key()), part=0)
                return
        canonical = sorted(self._by_node, key=Name.canonical_key)
        parts = split.pack([(node, self._entry(node)) for node in canonical], budget)
        for index, part in enumerate(parts):
            self._send_vector(part, *((None, None) if len(parts) == 1 else (index, len(parts) - 1)))

    def _send_vector(self, entries: list[tuple[Name, bytes]], part: int | None = None,
                     last: int | None = None) -> None:
        data = packets.encode_sync_interest(self.group, self.node, [entry for _, entry in entries],
                                            self._jitter.nonce(), part, last)
        self._out.append(Outgoing(data, BROADCAST))
        self.stats["sync_sent"] += 1

    def _entry(self, node: Name) -> bytes:
        entry = self._encoded.get(node)
        if entry is None:
            entry = self._encoded[node] = vector.encode_entry(node, self._by_node[node])
        return entry

    # ------------------------------------------------------------- data

    def _on_data_interest(self, interest: packets.DataInterest, source: Hashable | None) -> None:
        key = (interest.producer, interest.seq)
        to = BROADCAST if source is None else source
        if key in self._cache:
            self._cache.move_to_end(key)
            content = self._cache[key]
            self._out.append(Outgoing(packets.encode_publication(self.group, *key, content), to))
            self.stats["data_answered"] += 1
        elif self._fetch.has(*key) and interest.seq <= self._fetch.delivered.get(interest.producer, 0):
            self._events.append(DataWanted(str(interest.producer.node), interest.producer.bootstrap,
                                           interest.seq, to))
            self.stats["data_wanted"] += 1
        else:
            self.stats["data_not_here"] += 1  # as in NDN: no answer; the requester retries elsewhere

    def _on_publication(self, publication: packets.Publication, source: Hashable | None) -> None:
        producer, seq = publication.producer, publication.seq
        if producer == self.me or self._fetch.has(producer, seq):
            self.stats["duplicate"] += 1
            return
        if seq > self.vector.get(producer, 0):
            self.stats["unsolicited"] += 1  # not announced in any vector we heard: NDN drops it too
            return
        self.stats["fetched"] += 1
        if source is not None:
            self._fetch.saw(source, producer, seq)
        for ready, content in self._fetch.arrive(producer, seq, publication.content):
            self._remember(producer, ready, content)
            self._events.append(Delivered(str(producer.node), producer.bootstrap, ready, content))

    def _remember(self, producer: Producer, seq: int, content: bytes) -> None:
        self._cache[(producer, seq)] = content
        self._cache.move_to_end((producer, seq))
        while len(self._cache) > self.config.cache_size:
            self._cache.popitem(last=False)

    def _request(self, now: int) -> None:
        for producer, seq, to in self._fetch.requests(now, self.vector):
            data = packets.encode_data_interest(self.group, producer, seq, self._jitter.nonce())
            self._out.append(Outgoing(data, to))
            self.stats["data_interest_sent"] += 1

    # ------------------------------------------------------------ state

    def export_state(self) -> dict:
        return export_channel(self)

    @classmethod
    def restore(cls, state: dict, config: Config | None = None) -> Channel:
        return restore_channel(cls, state, config or Config())
