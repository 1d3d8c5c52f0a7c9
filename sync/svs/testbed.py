"""A small in-memory lossy network with a fake clock, for any engine that
follows the ``sync.core`` protocol (SVS ``Channel``s, SDS ``Channel``s).

It plays the network and a minimal runtime: each ``Outgoing`` is copied to
every other member (``BROADCAST``) or to the one addressed, each copy lost
independently with probability ``loss`` and delayed by ``latency +
uniform(0, jitter)`` ms (hence reordered); members leave (their state
exported through CBOR, as a process saves it) and return (restored from it),
or crash and return with no state at all. Events are drained after every
step and every ``Delivered`` is noted with its time, which is what the
convergence tests and ``benchmarks/protocols.py`` measure. Deterministic:
one ``random.Random(seed)`` makes every choice.

The runtime answers ``DataWanted`` from the member's delivered publications,
as the application answers from its store.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import cbor2

from sync.core import BROADCAST, Engine

EPOCH_MS = 1_700_000_000_000


@dataclass
class Member:
    engine: Engine | None
    delivered: dict[bytes, int] = field(default_factory=dict)  # content -> when
    saved: dict | None = None  # export_state() while away
    publications: dict[tuple, bytes] = field(default_factory=dict)  # (node, bootstrap, seq) -> content


@dataclass
class Wire:
    datagrams: int = 0  # copies put on the wire (a broadcast to n members present is n copies)
    bytes: int = 0
    largest_broadcast: int = 0
    lost: int = 0


class Testbed:
    def __init__(self, n: int, build: Callable[[int, int], Engine], revive: Callable[[dict], Engine], *,
                 loss: float = 0.0, seed: int = 0, latency_ms: int = 10, jitter_ms: int = 20,
                 now: int = EPOCH_MS) -> None:
        self.build, self.revive = build, revive
        self.loss, self.latency_ms, self.jitter_ms = loss, latency_ms, jitter_ms
        self.rng = random.Random(seed)
        self.now = now
        self.members = [Member(build(i, now)) for i in range(n)]
        self.sent: dict[bytes, tuple[int, int]] = {}  # content -> (author, when)
        self.wire = Wire()
        self._flight: list[tuple[int, int, int, int, bytes]] = []  # (arrival, order, to, from, data)
        self._timers: list[tuple[int, int, int]] = []  # (deadline, order, member)
        self._order = itertools.count()
        for i in range(n):
            self._step(i)

    # ------------------------------------------------------------ actions

    def publish(self, i: int, content: bytes) -> None:
        engine = self.members[i].engine
        assert engine is not None, "an absent member cannot publish"
        self.sent[content] = (i, self.now)
        engine.send(content, self.now)
        self._step(i)

    def leave(self, i: int, keep_state: bool = True) -> None:
        member = self.members[i]
        member.saved = cbor2.loads(cbor2.dumps(member.engine.export_state())) if keep_state else None
        member.engine = None

    def rejoin(self, i: int) -> None:
        member = self.members[i]
        if member.saved is None:  # lost everything: a new start (under a new bootstrap time)
            member.engine, member.delivered, member.publications = self.build(i, self.now), {}, {}
        else:
            member.engine, member.saved = self.revive(member.saved), None
        self._step(i)

    def run_until(self, until: int) -> None:
        while True:
            at = min(self._flight[0][0] if self._flight else until + 1, self._next_timer(until + 1))
            if at > until:
                break
            self.now = at
            if self._flight and self._flight[0][0] == at:
                _, _, to, source, data = heapq.heappop(self._flight)
                engine = self.members[to].engine
                if engine is not None:
                    engine.receive(data, at, source)
                    self._step(to)
            else:
                _, _, i = heapq.heappop(self._timers)
                engine = self.members[i].engine
                if engine is not None and engine.get_timer() is not None and engine.get_timer() <= at:
                    engine.handle_timer(at)
                    self._step(i)
        self.now = until

    # ------------------------------------------------------------ results

    def online(self) -> list[int]:
        return [i for i, m in enumerate(self.members) if m.engine is not None]

    def converged(self) -> bool:
        """Every member present has delivered every publication."""
        return all(len(self.members[i].delivered) == len(self.sent) for i in self.online())

    # ----------------------------------------------------------- plumbing

    def _next_timer(self, default: int) -> int:
        while self._timers:
            at, _, i = self._timers[0]
            engine = self.members[i].engine
            if engine is not None and engine.get_timer() == at:
                return at
            heapq.heappop(self._timers)  # stale: the member moved its timer or left
        return default

    def _step(self, i: int) -> None:
        member, n = self.members[i], len(self.members)
        engine = member.engine
        for event in engine.events():
            name = type(event).__name__
            if name == "Delivered":
                member.delivered.setdefault(event.content, self.now)
                if hasattr(event, "seq"):
                    member.publications[(event.node, event.bootstrap, event.seq)] = event.content
            elif name == "DataWanted":
                content = member.publications[(event.node, event.bootstrap, event.seq)]
                engine.provide(event.node, event.bootstrap, event.seq, content, event.requester)
        for out in engine.datagrams_to_send(self.now):
            targets = [j for j in range(n) if j != i] if out.to is BROADCAST else [out.to]
            targets = [j for j in targets if self.members[j].engine is not None]  # the absent hear nothing
            if out.to is BROADCAST:
                self.wire.largest_broadcast = max(self.wire.largest_broadcast, len(out.data))
            for j in targets:
                self.wire.datagrams += 1
                self.wire.bytes += len(out.data)
                if self.rng.random() < self.loss:
                    self.wire.lost += 1
                    continue
                arrival = self.now + self.latency_ms + self.rng.randrange(self.jitter_ms + 1)
                heapq.heappush(self._flight, (arrival, next(self._order), j, i, out.data))
        timer = engine.get_timer()
        if timer is not None:
            heapq.heappush(self._timers, (timer, next(self._order), i))
