"""Two MVDS nodes on an in-memory lossy link with a fake clock.

Alice writes to bob. The link loses each datagram with probability ``loss``
and delays it by a few milliseconds; bob is online only during the intervals
``online`` names (a datagram reaching him while he is away is lost, and his
node does not run). When bob comes back, discovery finds him after
``discovery_ms`` and each side's runtime tells its node (``peer_seen``);
with ``keepalive_ms``, alice's runtime also hears his keep-alives while he
is online (lost as often as any datagram) and tells her node.
``restarts`` rebuild alice from ``export_state()`` through CBOR at the given
times, as a crashed process resumes from its database. One seeded random
drives every choice, so a run is reproducible.
"""

from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field

import cbor2

from sync.mvds import Config, DmAcknowledged, DmDelivered, Mode, MvdsNode

T0 = 1_700_000_000_000
GROUP = b"alice+bob"


@dataclass
class Conditions:
    loss: float = 0.0
    delay_ms: tuple[int, int] = (1, 20)
    online: list[tuple[int, int]] | None = None  # bob's (from, to) ms since start; None: always
    discovery_ms: int = 1_000
    keepalive_ms: int | None = None  # while bob is online, alice's runtime hears him this often
    restarts: tuple[int, ...] = ()  # when alice restarts from her exported state


@dataclass
class Outcome:
    sent: dict[bytes, tuple[int, bytes]] = field(default_factory=dict)  # id -> (sent at, body)
    delivered: list[tuple[bytes, int]] = field(default_factory=list)  # (body, at), in delivery order
    acknowledged: dict[bytes, int] = field(default_factory=dict)  # id -> at
    bytes_on_wire: int = 0
    datagrams: int = 0

    def latencies(self) -> list[int]:
        sent_at = {body: at for at, body in self.sent.values()}
        return [at - sent_at[body] for body, at in self.delivered]


class Pair:
    def __init__(self, conditions: Conditions, config: Config | None = None, seed: int = 0) -> None:
        self.conditions = conditions
        self.config = config or Config()
        self.random = random.Random(seed)
        self.nodes = {"alice": MvdsNode(T0, self.config), "bob": MvdsNode(T0, self.config)}
        self.outcome = Outcome()
        self._queue: list[tuple[int, int, str, tuple]] = []
        self._order = itertools.count()
        self.now = T0

    def online(self, name: str, at: int) -> bool:
        spans = self.conditions.online
        return name == "alice" or spans is None or any(a <= at - T0 < b for a, b in spans)

    def _at(self, at: int, kind: str, *args) -> None:
        heapq.heappush(self._queue, (at, next(self._order), kind, args))

    def run(self, messages: list[tuple[int, bytes, Mode | None]], until_ms: int) -> Outcome:
        """Alice sends each ``(at_ms, body, mode)``; play until ``until_ms``."""
        for at, body, mode in messages:
            self._at(T0 + at, "send", body, mode)
        for start, _end in self.conditions.online or ():
            if start > 0:
                self._at(T0 + start + self.conditions.discovery_ms, "discovered")
        if self.conditions.keepalive_ms:
            for at in range(0, until_ms, self.conditions.keepalive_ms):
                self._at(T0 + at, "keepalive")
        for at in self.conditions.restarts:
            self._at(T0 + at, "restart")
        end = T0 + until_ms
        while True:
            timers = [(t, name) for name, node in self.nodes.items()
                      if (t := node.get_timer()) is not None and self.online(name, max(t, self.now))]
            soonest = min(timers, default=None)
            if self._queue and (soonest is None or self._queue[0][0] <= soonest[0]):
                at, _, kind, args = heapq.heappop(self._queue)
                if at > end:
                    break
                self.now = max(self.now, at)
                self._handle(kind, args)
            elif soonest is not None and soonest[0] <= end:
                self.now = max(self.now, soonest[0])
                self.nodes[soonest[1]].handle_timer(self.now)
                self._step(soonest[1])
            else:
                break
        return self.outcome

    def _handle(self, kind: str, args: tuple) -> None:
        alice = self.nodes["alice"]
        if kind == "send":
            body, mode = args
            mid = alice.send("bob", GROUP, body, self.now, mode)
            self.outcome.sent[mid] = (self.now, body)
            self._step("alice")
        elif kind == "arrive":
            to, source, data = args
            if self.online(to, self.now):
                self.nodes[to].receive(data, self.now, source)
                self._step(to)
        elif kind == "discovered":
            alice.peer_seen("bob", self.now)
            self._step("alice")
            self.nodes["bob"].peer_seen("alice", self.now)
            self._step("bob")
        elif kind == "keepalive" and self.online("bob", self.now) and self.random.random() >= self.conditions.loss:
            alice.peer_seen("bob", self.now)
            self._step("alice")
        elif kind == "restart":
            state = cbor2.loads(cbor2.dumps(alice.export_state()))
            self.nodes["alice"] = MvdsNode.restore(state, self.config)

    def _step(self, name: str) -> None:
        """What a runtime does after each input: drain events, then send."""
        node = self.nodes[name]
        for event in node.events():
            if isinstance(event, DmDelivered):
                self.outcome.delivered.append((event.body, self.now))
            elif isinstance(event, DmAcknowledged):
                self.outcome.acknowledged.setdefault(event.message_id, self.now)
        for out in node.datagrams_to_send(self.now):
            self.outcome.bytes_on_wire += len(out.data)
            self.outcome.datagrams += 1
            if self.random.random() < self.conditions.loss:
                continue
            delay = self.random.randint(*self.conditions.delay_ms)
            self._at(self.now + delay, "arrive", out.to, name, out.data)
