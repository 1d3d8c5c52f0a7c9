"""A deterministic, seeded discrete-event simulator of sds-chat peers.

Every peer is the runtime that ships - ``chat_app.runtime.Runtime`` with a
real SQLite store - on a virtual clock. The simulator plays everything
around it that ``chat_app.io`` plays for a real peer:

* UDP: each datagram the runtime queues for an address travels over its
  own link with loss, latency plus jitter (hence reordering) and
  duplication; partitions cut links between groups for a while;
* TCP: the replication links the runtime dials (``dials()``) are streams
  that keep order and lose nothing (``streams``), and the store reads they
  ask for (``reads()``) are answered from the peer's store at once;
* mDNS: peers are announced to each other (``peer_announced``) at start,
  when one comes back, and when a partition heals; silence is left to the
  runtime's own peer table;
* the process: a peer that goes offline with ``restart`` is killed, and a
  new ``Runtime`` starts over the same database when it returns.

Fetching missing messages, catch-up, resends: all of it is the runtime's
own code. Stores are in-memory SQLite databases (``Store(":memory:")``):
the same schema and statements as on disk, without the fsyncs that would
make a 10-peer run take minutes; a restarted peer gets the very database its
predecessor committed to, as it would from a file.

Time is virtual (milliseconds); one ``random.Random(seed)`` drives every
choice, including the peers' identities, and the runtimes' datagrams are
taken in address order, so a scenario and seed always produce the same run.
"""

from __future__ import annotations

import heapq
import itertools
import random
from itertools import combinations
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from chat_app.channel_names import SVS_MARK
from chat_app.crypto import Identity, Kind
from chat_app.address import Address
from chat_app.runtime import Runtime
from chat_app.sim.measure import Measurements
from chat_app.sim.scenario import EPOCH_MS, SECOND, Report, Scenario
from chat_app.sim.streams import Streams
from chat_app.store import Store

IN_MEMORY = Path(":memory:")


class SimPeer:
    __slots__ = ("index", "nick", "address", "store", "identity", "runtime", "online", "incarnation",
                 "timer_token", "armed_at", "fired_at")

    def __init__(self, index: int, store: Store, identity: Identity) -> None:
        self.index, self.store, self.identity = index, store, identity
        self.nick = f"peer{index:03d}"
        self.address: Address = (f"10.77.{index // 250}.{index % 250 + 1}", 7000)
        self.runtime: Runtime | None = None  # None while its process is down
        self.online = True
        self.incarnation = 0  # one per process: a restart is a new one
        self.timer_token = 0
        self.armed_at: int | None = None
        self.fired_at: int | None = None

    @property
    def id(self) -> str:
        return self.runtime.peer_id if self.runtime else ""


class Simulator:
    """Runs one ``Scenario``; ``run()`` returns its ``Report``."""

    def __init__(self, scenario: Scenario, channel_id: str = "general") -> None:
        self.scenario = scenario
        self.rng = random.Random(scenario.seed)
        self.now = EPOCH_MS
        self.channel_id = channel_id
        self.peers = [self._new_peer(i) for i in range(scenario.peers)]
        self._by_address = {p.address: p for p in self.peers}
        self.streams = Streams(self)
        self._queue: list[tuple[int, int, str, tuple]] = []
        self._seq = itertools.count()
        self._dirty: dict[int, SimPeer] = {}
        self.measured = Measurements(scenario.peers)

    def _new_peer(self, index: int) -> SimPeer:
        # seeded keys: the same seed, the same peers (a restart keeps them, as a data directory does)
        identity = Identity(Ed25519PrivateKey.from_private_bytes(self.rng.randbytes(32)),
                            X25519PrivateKey.from_private_bytes(self.rng.randbytes(32)))
        return SimPeer(index, Store(IN_MEMORY), identity)

    # ------------------------------------------------------------ the world

    def at(self, when: int, kind: str, *args) -> None:
        heapq.heappush(self._queue, (when, next(self._seq), kind, args))

    def peer_at(self, address: Address) -> SimPeer | None:
        return self._by_address.get(address)

    def linked(self, a: SimPeer, b: SimPeer) -> bool:
        for part in self.scenario.partitions:
            if part.start_ms <= self.now - EPOCH_MS < part.end_ms:
                return any(a.index in g and b.index in g for g in part.groups)
        return True

    def reachable(self, a: SimPeer, b: SimPeer) -> bool:
        return a.online and b.online and a.runtime is not None and b.runtime is not None and self.linked(a, b)

    def touch(self, peer: SimPeer) -> None:
        """``peer``'s runtime was called: its output is flushed before time moves on."""
        self._dirty[peer.index] = peer

    # ----------------------------------------------------------------- run

    def run(self) -> Report:
        sc = self.scenario
        for k, offset in enumerate(sorted(self.rng.randint(0, sc.send_window_ms) for _ in range(sc.messages))):
            self.at(EPOCH_MS + offset, "send", k)
        for outage in sc.outages:
            self.at(EPOCH_MS + outage.start_ms, "down", outage.peer, outage.restart)
            self.at(EPOCH_MS + outage.end_ms, "up", outage.peer, outage.restart)
        for part in sc.partitions:
            self.at(EPOCH_MS + part.end_ms, "heal")
        for peer in self.peers:
            self._boot(peer)
        for a, b in combinations(self.peers, 2):
            self._discover(a, b)
        self._settle()
        deadline = EPOCH_MS + sc.max_time_ms
        sent = 0
        while self._queue:
            when, _, kind, args = heapq.heappop(self._queue)
            if when > deadline:
                break
            self.now = when
            sent += self._step(kind, args)
            self._settle()
            if sent == sc.messages and self.measured.complete == sc.messages and all(p.online for p in self.peers):
                break
        logs = [[m.message_id for m in p.store.iter_messages(self.channel_id)] for p in self.peers]
        return self.measured.report(sc.messages, logs, self.now - EPOCH_MS, self.streams.bytes)

    def _step(self, kind: str, args: tuple) -> int:
        if kind == "send":
            online = [p for p in self.peers if p.online]
            if not online:
                self.at(self.now + SECOND, "send", *args)
                return 0
            peer = self.rng.choice(online)
            peer.runtime.say(self.channel_id, f"message {args[0]} from {peer.nick}: hello there", "text", self.now)
            self.touch(peer)
            return 1
        if kind == "stream":
            self.streams.arrive(*args)
            return 0
        if kind == "heal":
            for a, b in combinations(self.peers, 2):
                self._discover(a, b)
            return 0
        peer = self.peers[args[0]]
        if kind == "timer":
            if peer.runtime is not None and args[1] == peer.timer_token:
                peer.armed_at, peer.fired_at = None, self.now
                peer.runtime.handle_timer(self.now)
                self.touch(peer)
        elif kind == "datagram":
            if peer.online and peer.runtime is not None:
                peer.runtime.datagram_received(args[1], args[2], self.now)
                self.touch(peer)
        elif kind == "down":
            peer.online = False
            self.streams.break_peer(peer)
            if args[1]:
                peer.runtime = None  # kill -9: what it committed is all that is left
        elif kind == "up":
            peer.online = True
            if peer.runtime is None:
                self._boot(peer)
            for other in self.peers:
                if other is not peer:
                    self._discover(peer, other)
        return 0

    # --------------------------------------------------------------- peers

    def _boot(self, peer: SimPeer) -> None:
        peer.incarnation += 1
        peer.armed_at = None
        peer.runtime = Runtime(peer.store, nick=peer.nick, config=self.scenario.config, identity=peer.identity)
        spec = self.channel_id + (SVS_MARK if self.scenario.protocol == "svs" else "")
        peer.runtime.start([spec], peer.address[1], [peer.address[0]], self.now)
        self.touch(peer)

    def _discover(self, a: SimPeer, b: SimPeer) -> None:
        """mDNS: ``a`` and ``b`` see each other's announcements."""
        if not self.reachable(a, b):
            return
        for one, other in ((a, b), (b, a)):
            host, port = other.address
            one.runtime.peer_announced(other.id, other.nick, [host], port, (self.channel_id,), self.now,
                                       svs=other.runtime.svs_channels)
            self.touch(one)

    def _settle(self) -> None:
        while self._dirty:
            self._flush(self._dirty.pop(next(iter(self._dirty))))

    def _flush(self, peer: SimPeer) -> None:
        """What ``AsyncPeer._flush`` does: send, start dials and reads, take
        the events, re-arm the timer. Reads are answered at once."""
        rt = peer.runtime
        if rt is None:
            return
        while True:
            # a set of addresses decides the runtime's order; address order keeps runs reproducible
            for data, address in sorted(rt.datagrams_to_send(), key=lambda out: out[1]):
                self._send(peer, data, address)
            self.streams.flush(peer)
            for address in rt.dials():
                self.streams.dial(peer, address)
            reads = rt.reads()
            for conn, wanted in reads:
                read = rt.read_wanted(peer.store, wanted)
                self.streams.answered(conn, rt.store_answered(conn, wanted, read, self.now))
            for event in rt.events():
                self.measured.observe(peer.index, event, self.now)
            if not reads:
                break
        self._arm(peer)

    def _arm(self, peer: SimPeer) -> None:
        deadline = peer.runtime.get_timer()
        if deadline is None or deadline == peer.armed_at:
            return
        when = max(deadline, self.now)
        if when == peer.fired_at:
            when += 1  # due again at the instant it fired: let the clock move on
        peer.timer_token += 1
        peer.armed_at = deadline
        self.at(when, "timer", peer.index, peer.timer_token)

    def _send(self, peer: SimPeer, data: bytes, address: Address) -> None:
        if not peer.online or (not self.scenario.fetch and data[1:2] == bytes((Kind.FETCH,))):
            return  # no network; or SDS alone, without the runtime's fetch requests (an envelope: version, kind)
        self.measured.datagrams += 1
        self.measured.bytes += len(data)
        self.measured.largest = max(self.measured.largest, len(data))
        dst = self._by_address.get(address)
        link = self.scenario.link
        if dst is None or not self.linked(peer, dst) or self.rng.random() < link.loss:
            return
        for _ in range(2 if self.rng.random() < link.duplicate else 1):
            self.at(self.now + link.latency_ms + self.rng.randint(0, link.jitter_ms), "datagram", dst.index, data,
                    peer.address)


def simulate(scenario: Scenario) -> Report:
    return Simulator(scenario).run()
