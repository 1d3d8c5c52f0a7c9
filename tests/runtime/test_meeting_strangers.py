"""Meeting many strangers: an insider makes keys freely, and one sync
datagram (no content) from each one-shot key makes it a peer new to us,
met (``CatchUp.met``). What that costs the peer it floods - the work per
datagram, what catch-up remembers, how many addresses it dials - must not
grow with how many strangers came before, and an honest peer announced in
the middle of it is still met as before."""

from __future__ import annotations

import sys

from chat_app.crypto import Identity
from chat_app.runtime import catchup
from chat_app.runtime.catchup import (MAX_AWAITED, MAX_REPLICATED, MEETING_DIALS_PER_S, REPLICATE_EVERY_MS,
                                      ROUND_EVERY_MS)

from .test_insider import Insider

PORT = 9000


def source(i: int) -> tuple[str, int]:
    """A host of its own for each stranger: nothing any other one says stands for it."""
    return f"10.{66 + (i >> 16)}.{(i >> 8) & 255}.{i & 255}", PORT


def stranger(bob, dials_first: bool) -> Insider:
    """A one-shot key; ``dials_first``: bob's id is the lower, so bob is the one to dial on meeting."""
    while True:
        insider = Insider(Identity.generate())
        if (bob.peer_id < insider.id) == dials_first:
            return insider


def strangers(net, bob, count: int, first: int = 0, per_batch: int = 100, every_ms: int = 50,
              dials_first: bool | None = None) -> None:
    """``count`` one-shot keys' sync datagrams into bob, each from its own
    host, in batches (2,000 a second by default), timers firing;
    ``dials_first``: whether bob is the one to dial each (None: as it falls)."""
    def key() -> Insider:
        return Insider() if dials_first is None else stranger(bob, dials_first)

    for start in range(first, first + count, per_batch):
        batch = [(key().datagram([], net.now, chat=False), source(i))
                 for i in range(start, min(start + per_batch, first + count))]
        bob.datagrams_received(batch, net.now)
        net.run(every_ms)



def test_a_flood_of_one_shot_keys_leaves_what_catch_up_remembers_bounded_and_it_is_forgotten(net):
    """What catch-up keeps per address met - a peer waited for, when it was
    last replicated with - stays under its cap through the flood, and what
    no longer matters is forgotten once the strangers fall silent."""
    bob = net.add("bob")
    most = {"awaited": 0, "replicated": 0}
    for chunk in range(12):  # 2,400 strangers to wait for in 1.2 s, then 100 a second for 10 s
        strangers(net, bob, 200, first=chunk * 200, dials_first=False)
        most["awaited"] = max(most["awaited"], len(bob._catchup._awaited))
    for second in range(10):
        strangers(net, bob, 100, first=10_000 + second * 100, per_batch=10, every_ms=100)
        most["replicated"] = max(most["replicated"], len(bob._catchup._replicated_at))
    assert most["awaited"] <= MAX_AWAITED
    assert most["replicated"] <= MAX_REPLICATED
    net.run(2 * ROUND_EVERY_MS + 60_000)  # the strangers fall silent and leave; a round or two
    assert len(bob.peers.table.peers) == 0
    assert len(bob._catchup._awaited) == 0
    assert len(bob._catchup._replicated_at) == 0


def test_when_each_address_was_replicated_with_is_kept_for_so_many_addresses_the_oldest_forgotten(net):
    """Dials that are not meetings (a missing message's author, everyone in a
    channel) are held to once per address per ``REPLICATE_EVERY_MS``; what
    that remembers is capped, the oldest forgotten first."""
    bob = net.add("bob")
    caught = bob._catchup
    for i in range(MAX_REPLICATED + 500):
        caught.dial(source(i), net.now)
    assert len(caught._replicated_at) == MAX_REPLICATED
    assert source(0) not in caught._replicated_at and source(MAX_REPLICATED + 499) in caught._replicated_at


def test_a_flood_of_one_shot_keys_makes_so_many_dials_a_second_and_an_announced_peer_is_met_all_the_same(net):
    """Each stranger met by its datagram would be dialed (or dialed after
    ``AWAIT_DIAL_MS``): at most ``MEETING_DIALS_PER_S`` such dials start in
    any second. A peer announced by mDNS in the middle of the flood is
    dialed at once (we have the lower id), and one with the lower id is
    waited for and dialed when it did not dial us."""
    bob = net.add("bob")
    bob.dials(), bob.datagrams_to_send()
    announced = "f" * 64, "0" * 64  # bob dials the first at once, and waits for the second
    at = {announced[0]: ("10.9.0.1", PORT), announced[1]: ("10.9.0.2", PORT)}
    dials: list[tuple[int, tuple[str, int]]] = []  # (when, whom)

    def dialed() -> None:
        dials.extend((net.now, address) for address in bob.dials())
        bob.datagrams_to_send(), bob.events(), bob.reads()

    for i in range(0, 600, 15):  # 150 strangers a second for 4 s, read every 100 ms
        batch = [(Insider().datagram([], net.now, chat=False), source(n)) for n in range(i, i + 15)]
        bob.datagrams_received(batch, net.now)
        dialed()
        if i == 150:
            for peer_id in announced:
                bob.peer_announced(peer_id, peer_id[:4], [at[peer_id][0]], PORT, ("general",), net.now)
            dialed()
            assert (net.now, at[announced[0]]) in dials
        net.now += 100
        if (due := bob.get_timer()) is not None and due <= net.now:
            bob.handle_timer(net.now)
        dialed()
    assert at[announced[1]] in [address for _, address in dials]
    stranger_dials = sorted(when for when, address in dials if address not in at.values())
    assert stranger_dials, "strangers are still met"
    most = max(sum(1 for t in stranger_dials if start <= t < start + 1_000) for start in stranger_dials)
    assert most <= MEETING_DIALS_PER_S, f"{most} dials in one second"


def lines_run(call, files: tuple[str, ...]) -> int:
    """How many lines of ``files`` ``call()`` runs: work counted, not timed."""
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if frame.f_code.co_filename.endswith(files):
            if event == "line":
                count += 1
            return tracer
        return None

    sys.settrace(tracer)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def test_meeting_a_stranger_costs_the_same_however_many_came_before(net):
    """The work of meeting one more stranger (who to wait for, whom to
    dial, which host a peer is at) does not grow with the peers and the
    meetings waited for: counted in lines of the peer table and catch-up
    run, at 50 and at 400 strangers met within the same 2 s."""
    bob = net.add("bob")
    files = (catchup.__file__, "chat_app/runtime/peers.py", "chat_app/peers.py")
    costs = {}
    met = 0
    for size in (50, 400):
        batch = [(stranger(bob, dials_first=False).datagram([], net.now, chat=False), source(i))
                 for i in range(met, size)]
        bob.datagrams_received(batch, net.now)  # all waited for: nothing dialed, nothing limited
        met = size
        one = [(stranger(bob, dials_first=True).datagram([], net.now, chat=False), source(50_000 + size))]
        costs[size] = lines_run(lambda one=one: bob.datagrams_received(one, net.now), files)
    assert len(bob._catchup._awaited) >= 300
    assert costs[400] <= costs[50] * 1.2 + 20, costs


def test_pruning_happens_on_the_round_not_before_the_replication_interval(net):
    """An address replicated with less than ``REPLICATE_EVERY_MS`` ago is
    not dialed again, however many strangers came since."""
    bob = net.add("bob")
    caught = bob._catchup
    caught.dial(source(1), net.now)
    assert caught.dials() == [source(1)]
    caught.dial_ended(source(1))
    net.now += REPLICATE_EVERY_MS // 2
    caught.handle_timer(net.now, lambda: ())
    caught.dial(source(1), net.now)
    assert caught.dials() == []
