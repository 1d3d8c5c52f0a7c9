"""A deterministic, seeded discrete-event simulator for SDS channels.

Every peer runs a real ``sync.sds.Channel``. The simulator plays both the
network and the thin runtime around each engine:

* the network carries each broadcast datagram to every other peer over an
  independent link with loss, latency plus jitter (hence reordering) and
  duplication; partitions cut links between groups for a while; peers go
  offline and come back;
* the runtime keeps a store of delivered wire bytes per peer and answers
  ``Missing`` events by asking one peer (the original sender when it is
  reachable, else a random one) for the message over the same lossy links -
  the way ``chat_app`` fetches history. ``Scenario(fetch=False)`` leaves
  repair to SDS alone (resends, sync messages and SDS-R);
* a peer that goes offline with ``restart=True`` is rebuilt on return from
  ``export_state()`` passed through CBOR, exactly like a crashed process
  resuming from its database.

Time is virtual (milliseconds); one ``random.Random(seed)`` drives every
choice, so a scenario and seed always produce the same run.
"""

from __future__ import annotations

import heapq
import itertools
import random
from dataclasses import dataclass, field

import cbor2

from sync.sds import Channel, Config, Delivered, Lost, Missing

SECOND = 1_000
MINUTE = 60 * SECOND
EPOCH_MS = 1_700_000_000_000


@dataclass(frozen=True)
class Link:
    """Every directed link between two peers behaves like this."""

    loss: float = 0.0
    latency_ms: int = 20
    jitter_ms: int = 30
    duplicate: float = 0.0

    def __post_init__(self) -> None:
        if not (0 <= self.loss < 1 and 0 <= self.duplicate < 1):
            raise ValueError("loss and duplicate are probabilities in [0, 1)")


@dataclass(frozen=True)
class Partition:
    """From ``start_ms`` to ``end_ms`` only peers in the same group talk."""

    start_ms: int
    end_ms: int
    groups: tuple[frozenset[int], ...]


@dataclass(frozen=True)
class Outage:
    """Peer ``peer`` is offline from ``start_ms`` to ``end_ms``; with
    ``restart`` it comes back as a new process restored from saved state."""

    peer: int
    start_ms: int
    end_ms: int
    restart: bool = True


@dataclass(frozen=True)
class Scenario:
    peers: int = 10
    messages: int = 100
    send_window_ms: int = 60 * SECOND
    link: Link = Link()
    partitions: tuple[Partition, ...] = ()
    outages: tuple[Outage, ...] = ()
    fetch: bool = True
    config: Config = field(default_factory=Config)
    max_time_ms: int = 30 * MINUTE
    seed: int = 0


@dataclass
class Report:
    peers: int
    messages: int
    delivery_ratio: float
    converged: bool
    identical_logs: bool
    convergence_p50_ms: float | None
    convergence_p99_ms: float | None
    latency_p50_ms: float | None
    latency_p99_ms: float | None
    datagrams_sent: int
    bytes_sent: int
    bytes_per_delivery: float
    elapsed_ms: int
    lost: int
    logs: list[list[str]] = field(repr=False, default_factory=list)

    def summary(self) -> str:
        def ms(v: float | None) -> str:
            return "-" if v is None else f"{v / 1000:.2f}s"

        return (
            f"{self.peers} peers, {self.messages} messages: delivery {self.delivery_ratio:.1%}, "
            f"{'converged' if self.converged else 'NOT converged'}, "
            f"logs {'identical' if self.identical_logs else 'DIFFER'}; "
            f"convergence p50 {ms(self.convergence_p50_ms)} p99 {ms(self.convergence_p99_ms)}; "
            f"latency p50 {ms(self.latency_p50_ms)} p99 {ms(self.latency_p99_ms)}; "
            f"{self.bytes_per_delivery:.0f} bytes sent per delivery; lost {self.lost}"
        )


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class _Peer:
    __slots__ = ("index", "id", "channel", "online", "store", "timer_token", "asked", "saved")

    def __init__(self, index: int, channel: Channel) -> None:
        self.index = index
        self.id = channel.sender_id
        self.channel = channel
        self.online = True
        self.store: dict[str, bytes] = {}
        self.timer_token = 0
        self.asked: dict[str, int] = {}
        self.saved: bytes | None = None


class Simulator:
    """Runs one ``Scenario``; ``run()`` returns its ``Report``."""

    def __init__(self, scenario: Scenario, channel_id: str = "general") -> None:
        self.scenario = scenario
        self.rng = random.Random(scenario.seed)
        self.now = EPOCH_MS
        self.channel_id = channel_id
        self.peers = [
            _Peer(i, Channel(channel_id, f"peer{i:03d}", self.now, scenario.config))
            for i in range(scenario.peers)
        ]
        self._by_id = {p.id: p for p in self.peers}
        self._queue: list[tuple[int, int, str, tuple]] = []
        self._seq = itertools.count()
        self.sent_at: dict[str, int] = {}
        self.delivered_at: dict[str, dict[int, int]] = {}
        self.datagrams = 0
        self.bytes = 0
        self.lost = 0
        self._complete = 0

    # ------------------------------------------------------------ scheduling

    def _at(self, when: int, kind: str, *args) -> None:
        heapq.heappush(self._queue, (when, next(self._seq), kind, args))

    def _linked(self, a: int, b: int) -> bool:
        for part in self.scenario.partitions:
            if part.start_ms <= self.now - EPOCH_MS < part.end_ms:
                return any(a in g and b in g for g in part.groups)
        return True

    def _transmit(self, src: int, dst: int, kind: str, payload: tuple) -> None:
        link = self.scenario.link
        if not self._linked(src, dst) or self.rng.random() < link.loss:
            return
        copies = 2 if self.rng.random() < link.duplicate else 1
        for _ in range(copies):
            delay = link.latency_ms + self.rng.randint(0, link.jitter_ms)
            self._at(self.now + delay, kind, dst, *payload)

    # --------------------------------------------------------------- peers

    def _pump(self, peer: _Peer) -> None:
        """What the runtime does after every engine step."""
        ch = peer.channel
        for wire in (out.data for out in ch.datagrams_to_send(self.now)):
            self.datagrams += 1
            self.bytes += len(wire)
            for other in self.peers:
                if other is not peer:
                    self._transmit(peer.index, other.index, "datagram", (wire,))
        for event in ch.events():
            if isinstance(event, Delivered):
                self._record(peer, event)
            elif isinstance(event, Missing) and self.scenario.fetch:
                self._fetch(peer, event)
            elif isinstance(event, Lost):
                self.lost += 1
        peer.timer_token += 1
        deadline = ch.get_timer()
        if deadline is not None:
            self._at(max(deadline, self.now), "timer", peer.index, peer.timer_token)

    def _record(self, peer: _Peer, event: Delivered) -> None:
        peer.store[event.message_id] = event.wire
        if event.own:
            self.sent_at[event.message_id] = self.now
        seen = self.delivered_at.setdefault(event.message_id, {})
        if peer.index not in seen:
            seen[peer.index] = self.now
            if len(seen) == len(self.peers):
                self._complete += 1

    def _fetch(self, peer: _Peer, event: Missing) -> None:
        retry = self.scenario.config.sweep_interval_ms
        for entry in event.entries:
            mid = entry.message_id
            if self.now - peer.asked.get(mid, -retry) < retry:
                continue
            peer.asked[mid] = self.now
            holder = self._by_id.get(entry.sender_id or "")
            if holder is None or holder is peer or not holder.online or self.rng.random() < 0.5:
                others = [p for p in self.peers if p is not peer]
                holder = self.rng.choice(others)
            self._transmit(peer.index, holder.index, "fetch", (peer.index, mid))

    # ----------------------------------------------------------------- run

    def run(self) -> Report:
        sc = self.scenario
        for k, offset in enumerate(sorted(self.rng.randint(0, sc.send_window_ms) for _ in range(sc.messages))):
            self._at(EPOCH_MS + offset, "send", k)
        for outage in sc.outages:
            self._at(EPOCH_MS + outage.start_ms, "down", outage.peer)
            self._at(EPOCH_MS + outage.end_ms, "up", outage.peer, outage.restart)
        for peer in self.peers:
            self._pump(peer)
        deadline = EPOCH_MS + sc.max_time_ms
        sent = 0
        while self._queue:
            when, _, kind, args = heapq.heappop(self._queue)
            if when > deadline:
                break
            self.now = when
            sent += self._step(kind, args)
            if sent == sc.messages and self._complete == sc.messages and self._all_online():
                break
        return self._report()

    def _all_online(self) -> bool:
        return all(p.online for p in self.peers)

    def _step(self, kind: str, args: tuple) -> int:
        if kind == "send":
            online = [p for p in self.peers if p.online]
            if not online:
                self._at(self.now + SECOND, "send", *args)
                return 0
            peer = self.rng.choice(online)
            peer.channel.send(f"message {args[0]} from {peer.id}: hello there".encode(), self.now)
            self._pump(peer)
            return 1
        peer = self.peers[args[0]]
        if kind == "timer":
            if peer.online and args[1] == peer.timer_token:
                peer.channel.handle_timer(self.now)
                self._pump(peer)
        elif kind == "datagram":
            if peer.online:
                peer.channel.receive(args[1], self.now)
                self._pump(peer)
        elif kind == "fetch":
            requester, mid = args[1], args[2]
            wire = peer.store.get(mid)
            if peer.online and wire is not None:
                self.datagrams += 1
                self.bytes += len(wire)
                self._transmit(peer.index, requester, "datagram", (wire,))
        elif kind == "down":
            peer.online = False
            peer.saved = cbor2.dumps(peer.channel.export_state())
        elif kind == "up":
            peer.online = True
            if args[1]:
                peer.channel = Channel.restore(cbor2.loads(peer.saved), self.scenario.config)
            peer.channel.handle_timer(self.now)
            self._pump(peer)
        return 0

    def _report(self) -> Report:
        n, m = len(self.peers), len(self.sent_at)
        deliveries = sum(len(v) for v in self.delivered_at.values())
        latencies: list[float] = []
        convergence: list[float] = []
        for mid, sent in self.sent_at.items():
            seen = self.delivered_at[mid]
            latencies.extend(t - sent for t in seen.values() if t != sent)
            if len(seen) == n:
                convergence.append(max(seen.values()) - sent)
        logs = [list(p.channel.log) for p in self.peers]
        remote = deliveries - m
        return Report(
            peers=n,
            messages=m,
            delivery_ratio=deliveries / (n * m) if m else 1.0,
            converged=m == self.scenario.messages and self._complete == m,
            identical_logs=all(log == logs[0] for log in logs),
            convergence_p50_ms=percentile(convergence, 0.5),
            convergence_p99_ms=percentile(convergence, 0.99),
            latency_p50_ms=percentile(latencies, 0.5),
            latency_p99_ms=percentile(latencies, 0.99),
            datagrams_sent=self.datagrams,
            bytes_sent=self.bytes,
            bytes_per_delivery=self.bytes / remote if remote else 0.0,
            elapsed_ms=self.now - EPOCH_MS,
            lost=self.lost,
            logs=logs,
        )


def simulate(scenario: Scenario) -> Report:
    return Simulator(scenario).run()
