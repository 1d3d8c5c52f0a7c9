"""A missing message is named once by the engine; the runtime asks for it
again on a schedule of its own - backing off, stopping when the engine no
longer misses it - and a restarted peer asks for what it still missed."""

from __future__ import annotations

from chat_app.crypto import Kind
from chat_app.runtime.catchup import AWAIT_DIAL_MS, REPLICATE_EVERY_MS
from chat_app.runtime.fetching import FETCH_RETRY_MAX_MS, FETCH_RETRY_MS
from chat_app.store import Store
from sync.sds import Config

from .conftest import Net, one_lost_then_named, texts


def _alice_gone_after_naming_one(net: Net):
    """alice says "one" (lost), then "two" naming it, and leaves the network
    as "two" reaches bob: what bob sends her goes nowhere."""
    alice, bob = net.add("alice"), net.add("bob")
    net.loss = 1.0
    alice.say("general", "one", "text", net.now)
    net.pump()
    alice.say("general", "two", "text", net.now)
    net.loss = 0.0
    del net.nodes[net.address(alice)]
    for data, dst in alice.datagrams_to_send():
        if dst == net.address(bob):
            bob.datagram_received(data, ("10.0.0.1", 7000), net.now)
    net.pump()
    return alice, bob


def _fetch_times(net: Net, bob) -> list[int]:
    return [at for at, (src, data, _) in net.sent_at if src == net.address(bob) and data[1] == Kind.FETCH]


def test_a_missing_message_is_asked_for_again_backing_off_until_it_is_given_up(tmp_path):
    net = TimedNet(tmp_path)
    _, bob = _alice_gone_after_naming_one(net)
    lost_after = Config().lost_after_ms
    net.run(lost_after + 60_000)
    times = _fetch_times(net, bob)
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    # an answer on a LAN comes in tens of milliseconds: the first wait is short
    assert gaps[:3] == [FETCH_RETRY_MS, 2 * FETCH_RETRY_MS, 4 * FETCH_RETRY_MS] == [500, 1_000, 2_000]
    assert set(gaps[3:]) == {FETCH_RETRY_MAX_MS} == {4_000}
    assert times[-1] - times[0] <= lost_after  # given up as lost: no longer asked for
    assert texts(bob.store) == ["two"]


def test_a_restarted_peer_asks_for_what_it_still_missed(tmp_path):
    net = TimedNet(tmp_path)
    _, bob = _alice_gone_after_naming_one(net)
    address = net.address(bob)
    store_path = bob.store.path
    bob.store.close()
    del net.nodes[address]
    bob = net.add("bob", store=Store(store_path))
    assert bob.stats["fetch_sent"] == 0
    net.run(100)
    assert bob.stats["fetch_sent"] == 1  # before any datagram named it again


def test_a_message_lost_seconds_after_replicating_with_its_author_is_replicated_for_again(tmp_path):
    """Replication runs over TCP, which the loss that took the datagram does
    not touch: it is how most lost messages come back. A message noticed
    missing 2.5 s after the last replication with its author starts another,
    not only a fetch (which a lossy network may lose both ways)."""
    net = Net(tmp_path)
    alice, bob = net.add("alice"), net.add("bob")
    bob.peer_announced(alice.peer_id, "alice", [net.address(alice)[0]], net.address(alice)[1], ("general",),
                       net.now)  # found by mDNS
    assert (net.address(bob), net.address(alice)) in net.dialed  # meeting her: a first catch-up
    bob.dials()
    bob.dial_ended(net.address(alice))  # this network never connects the dials it takes
    net.run(2_500)
    assert REPLICATE_EVERY_MS <= 2_500
    one_lost_then_named(net, alice, bob)
    assert bob.stats["fetch_sent"] == 1 and bob.dials() == [net.address(alice)]


class TimedNet(Net):
    """``Net`` that also notes when each datagram was sent."""

    def __init__(self, tmp_path) -> None:
        super().__init__(tmp_path)
        self.sent_at: list[tuple[int, tuple]] = []

    def pump(self, rounds: int = 50) -> None:
        before = len(self.sent)
        super().pump(rounds)
        self.sent_at += [(self.now, sent) for sent in self.sent[before:]]


def test_only_the_first_fetch_that_did_not_help_replicates_with_everyone(tmp_path):
    """Replicating with every peer brings whatever they hold; asking them all
    again at every retry (every 4 s, for minutes) only repeats it."""
    net = Net(tmp_path)
    alice, bob, carol = net.add("alice"), net.add("bob"), net.add("carol")
    for rt in (alice, carol):  # found by mDNS
        host, port = net.address(rt)
        bob.peer_announced(rt.peer_id, rt.nick, [host], port, ("general",), net.now)
    net.run(AWAIT_DIAL_MS + REPLICATE_EVERY_MS)  # the catch-up on meeting them is over (the higher id waits first)
    for who, address in net.dialed:
        net.nodes[who].dial_ended(address)
    net.loss = 1.0
    alice.say("general", "one", "text", net.now)  # lost to everyone
    net.pump()
    alice.say("general", "two", "text", net.now)  # it names "one"; then alice is gone
    net.loss = 0.0
    gone = net.address(alice)
    del net.nodes[gone]
    for data, dst in alice.datagrams_to_send():
        if dst in (net.address(bob), net.address(carol)):
            net.nodes[dst].datagram_received(data, gone, net.now)
    before = len(net.dialed)
    for _ in range(80):  # 20 s: retries at 0.5, 1.5, 3.5, 7.5, 11.5, 15.5 and 19.5 s
        net.run(250)
        for who, address in net.dialed:
            if who in net.nodes:
                net.nodes[who].dial_ended(address)  # this network never connects: each dial is over at once
    assert bob.stats["fetch_sent"] >= 7
    ours = [whom for who, whom in net.dialed[before:] if who == net.address(bob)]
    assert sorted(ours) == sorted([gone, net.address(carol)])  # the first retry's, with each peer once
