"""Signatures checked on worker threads (``chat_app.io.verifying``), between
the runtime's two steps of receiving (``admit``, ``datagrams_verified``):
batches are handed on in the order they arrived, a bad signature is dropped
and counted while the rest go on in order, the budget and the memory of
bad bytes spare the workers, and nothing unverified reaches an engine."""

from __future__ import annotations

import threading

import pytest

from chat_app import events as ev
from chat_app.crypto import Identity, Kind, VerifyBudget, seal
from chat_app.io import verifying
from chat_app.io.verifying import VerifyPipeline
from chat_app.runtime import Runtime
from chat_app.runtime.arrivals import verify_all

from .conftest import Net, texts
from .test_envelopes import EVE, said_as


def said_to(net: Net, alice: Runtime, carol: Runtime, lines: list[str]) -> list[bytes]:
    """The datagrams alice sends carol for each line, not yet delivered."""
    wires = []
    for line in lines:
        alice.say("general", line, "text", net.now)
        wires += [data for data, to in alice.datagrams_to_send() if to == net.address(carol)]
    alice.events()
    return wires


def taken_by(carol: Runtime, net: Net):
    """Hands a verified batch of datagrams to ``carol``."""
    return lambda arrivals, verdicts: carol.datagrams_verified(arrivals, verdicts, net.now)


def tampered(wire: bytes) -> bytes:
    return wire[:-1] + bytes((wire[-1] ^ 1,))


class Engine:
    """Records what reaches carol's engine for ``general``."""

    def __init__(self, carol: Runtime) -> None:
        self.engine = carol.conversations["general"].engine
        self.received: list[bytes] = []
        self._receive = self.engine.receive_message
        self.engine.receive_message = self.receive_message

    def receive_message(self, parsed, now, source):
        self.received.append(parsed.data)
        return self._receive(parsed, now, source)


@pytest.fixture
def pair(net):
    alice, carol = net.add("alice"), net.add("carol")
    net.run(500)
    return alice, carol


def test_batches_go_on_in_the_order_they_arrived_whichever_is_verified_first(net, pair, monkeypatch):
    alice, carol = pair
    wires = said_to(net, alice, carol, [f"line {i}" for i in range(12)])
    last_done, release = threading.Event(), threading.Event()

    def slow_first(envelopes):  # the first batch's first share is verified last, when the test says
        if envelopes[0].payload == wires[0][35:-64]:
            release.wait(5)
        verdicts = verify_all(envelopes)
        if envelopes[-1].payload == wires[-1][35:-64]:
            last_done.set()
        return verdicts

    monkeypatch.setattr(verifying, "verify_all", slow_first)
    handed: list[list[bytes]] = []

    def verified(arrivals, verdicts):
        handed.append([a.data for a in arrivals.arrivals])
        carol.datagrams_verified(arrivals, verdicts, net.now)

    pipeline = VerifyPipeline(workers=2, in_flight=8, inline=0)
    batches = [wires[i:i + 3] for i in range(0, 12, 3)]
    for batch in batches:
        pipeline.put(carol.admit([(w, net.address(alice)) for w in batch], net.now), verified)
    assert last_done.wait(5)
    pipeline.deliver_ready()  # every batch but the first is verified: none may go before it
    assert handed == []
    release.set()
    pipeline.drain()
    pipeline.close()
    assert handed == batches
    assert texts(carol.store) == [f"line {i}" for i in range(12)]


def test_a_bad_signature_mid_batch_is_dropped_and_counted_and_the_rest_go_on_in_order(net, pair):
    alice, carol = pair
    wires = said_to(net, alice, carol, ["one", "two", "three", "four"])
    engine = Engine(carol)
    batch = [wires[0], tampered(wires[1]), wires[2], wires[3]]
    pipeline = VerifyPipeline()
    pipeline.put(carol.admit([(w, net.address(alice)) for w in batch], net.now), taken_by(carol, net))
    pipeline.drain()
    pipeline.close()
    assert carol.envelopes.stats["bad_signature"] == 1
    assert [e.kind for e in carol.events() if isinstance(e, ev.DatagramRejected)] == ["bad_signature"]
    assert engine.received == [w[35:-64] for w in (wires[0], wires[2], wires[3])]
    assert texts(carol.store) == ["one"]  # "three" and "four" wait for "two", which never came intact


def test_the_budget_and_bad_bytes_seen_before_spare_the_workers(net, pair, monkeypatch):
    alice, carol = pair
    checked: list[int] = []

    def counting(envelopes):
        checked.append(len(envelopes))
        return verify_all(envelopes)

    monkeypatch.setattr(verifying, "verify_all", counting)
    carol.envelopes.gate.budget = VerifyBudget(rate=0, burst=3, penalty=0)
    good = seal(Identity.generate(), Kind.SDS, said_as("b" * 32, "x"))
    bad = [good[:-2] + i.to_bytes(2, "big") for i in range(1, 11)]
    pipeline, take = VerifyPipeline(), taken_by(carol, net)
    pipeline.put(carol.admit([(b, EVE) for b in bad], net.now), take)  # ten from one source: three are checked
    pipeline.drain()
    assert sum(checked) == 3 and carol.envelopes.stats["over_budget"] == 7
    carol.envelopes.gate.budget = VerifyBudget()
    pipeline.put(carol.admit([(b, EVE) for b in bad[:3]], net.now), take)  # the three that failed, again
    pipeline.drain()
    pipeline.close()
    assert sum(checked) == 3 and carol.envelopes.stats["repeated_bad"] == 3
    assert carol.envelopes.stats["bad_signature"] == 3


def test_nothing_unverified_reaches_an_engine(net, pair):
    alice, carol = pair
    wires = said_to(net, alice, carol, ["one", "two"])
    engine = Engine(carol)
    arrivals = carol.admit([(w, net.address(alice)) for w in wires], net.now)
    assert engine.received == []  # admitted is not received
    with pytest.raises(ValueError):
        carol.datagrams_verified(arrivals, [True], net.now)  # a verdict short: nothing goes in
    assert engine.received == []
    carol.datagrams_verified(arrivals, [False, True], net.now)
    assert engine.received == [wires[1][35:-64]]
    assert carol.envelopes.stats["bad_signature"] == 1


def test_a_lone_datagram_is_checked_at_once_on_the_callers_thread_unless_a_batch_waits_before_it(
        net, pair, monkeypatch):
    alice, carol = pair
    wires = said_to(net, alice, carol, ["one", "two", "three", "four"])
    release = threading.Event()
    checked_on: list[tuple[int, threading.Thread]] = []

    def held_on_workers(envelopes):  # a worker waits for the test; the caller's thread never does
        checked_on.append((len(envelopes), threading.current_thread()))
        if threading.current_thread() is not threading.main_thread():
            release.wait(5)
        return verify_all(envelopes)

    monkeypatch.setattr(verifying, "verify_all", held_on_workers)
    handed: list[list[bytes]] = []

    def verified(arrivals, verdicts):
        handed.append([a.data for a in arrivals.arrivals])
        carol.datagrams_verified(arrivals, verdicts, net.now)

    pipeline = VerifyPipeline(workers=1, inline=1)
    batches = [wires[:1], wires[1:3], wires[3:]]
    for batch in batches:
        pipeline.put(carol.admit([(w, net.address(alice)) for w in batch], net.now), verified)
    assert handed == batches[:1]  # the first at once; the last waits for the one before it, on the pool
    assert checked_on[0] == (1, threading.main_thread())
    release.set()
    pipeline.drain()
    pipeline.close()
    assert handed == batches
    assert [thread is threading.main_thread() for _, thread in checked_on] == [True, False, False]
    assert texts(carol.store) == ["one", "two", "three", "four"]
