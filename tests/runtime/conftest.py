"""Runtimes wired by an in-memory network, with a fake clock and real SQLite files."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from chat_app.runtime import Runtime
from chat_app.store import Store

T0 = 1_767_225_600_000
TICK = 100


class Net:
    """Every runtime has an address; datagrams are delivered in order, each
    dropped with probability ``loss``; ``now`` only moves when told to."""

    def __init__(self, tmp_path: Path, loss: float = 0.0, seed: int = 1) -> None:
        self.tmp_path = tmp_path
        self.now = T0
        self.loss = loss
        self.rng = random.Random(seed)
        self.nodes: dict[tuple[str, int], Runtime] = {}
        self.events: dict[tuple[str, int], list] = {}
        self.sent: list[tuple[tuple[str, int], bytes, tuple[str, int]]] = []
        self.dialed: list[tuple[tuple[str, int], tuple[str, int]]] = []  # (who, whom): never connected
        self.added = 0

    def add(self, name: str, channels=("general",), store: Store | None = None, **kwargs) -> Runtime:
        address = ("10.0.0.1", 7000 + self.added)  # never reused, even after a node is removed
        self.added += 1
        peers = [a for a in self.nodes]
        rt = Runtime(store or Store(self.tmp_path / name / "db.sqlite3"), nick=name, static_peers=peers, **kwargs)
        for other in self.nodes.values():
            other.peers.static.append(address)
        self.nodes[address] = rt
        self.events[address] = []
        rt.start(channels, address[1], [address[0]], self.now)
        self.pump()
        return rt

    def address(self, rt: Runtime) -> tuple[str, int]:
        return next(a for a, r in self.nodes.items() if r is rt)

    def seen(self, rt: Runtime) -> list:
        return self.events[self.address(rt)]

    def pump(self, rounds: int = 50) -> None:
        """Deliver queued datagrams until the network is quiet."""
        for _ in range(rounds):
            moved = False
            for src, rt in list(self.nodes.items()):
                self.events[src] += rt.events()
                self.dialed += [(src, address) for address in rt.dials()]  # replication: over real TCP elsewhere
                for data, dst in rt.datagrams_to_send():
                    moved = True
                    self.sent.append((src, data, dst))
                    if dst in self.nodes and self.rng.random() >= self.loss:
                        self.nodes[dst].datagram_received(data, src, self.now)
            if not moved:
                break
        for src, rt in self.nodes.items():
            self.events[src] += rt.events()

    def run(self, ms: int) -> None:
        """Let ``ms`` pass, firing every timer when it is due."""
        end = self.now + ms
        while self.now < end:
            self.now += TICK
            for rt in self.nodes.values():
                deadline = rt.get_timer()
                if deadline is not None and deadline <= self.now:
                    rt.handle_timer(self.now)
            self.pump()


@pytest.fixture
def net(tmp_path):
    return Net(tmp_path)


def one_lost_then_named(net: Net, alice: Runtime, bob: Runtime) -> None:
    """alice says "one", which reaches nobody, then "two" naming it, which
    reaches bob alone (the network stays lossy after)."""
    net.loss = 1.0
    alice.say("general", "one", "text", net.now)
    net.pump()
    alice.say("general", "two", "text", net.now)
    for data, dst in alice.datagrams_to_send():
        if dst == net.address(bob):
            bob.datagram_received(data, net.address(alice), net.now)


def texts(store: Store, channel: str = "general") -> list[str]:
    return [m.text for m in store.messages(channel)]
