"""A channel of ours and a real @waku/sds peer converse, no configuration.

Both sides run their defaults: the engine as the app runs it, the package as
``new MessageChannel(channel, sender)`` builds it. Datagrams cross real UDP
sockets on 127.0.0.1; time is the wall clock on both sides (their Lamport
clocks are both epoch milliseconds).
"""

from __future__ import annotations

import pytest

from sync.sds import Acknowledged, Config, PossiblyAcknowledged

pytestmark = pytest.mark.slow

DELIVERED = "sds:in:message-delivered"


def test_a_conversation_with_no_configuration(conversation):
    talk = conversation()
    ours, js = talk.channel, talk.peer

    # Sent before we heard its dialect: the package cannot read our compact
    # filter and drops the message.
    early = talk.send("ours, before we heard the js peer")
    talk.pump(until=lambda: js.of("sds:error-task"), timeout=10)
    assert early not in js.delivered()

    w1 = js.ask("send", "sent", text="js: one")["id"]
    w2 = js.ask("send", "sent", text="js: two")["id"]
    talk.pump(until=lambda: {w1, w2} <= set(ours.log), timeout=10)

    # From now on our filters are in its format; the early message gets there
    # with its first resend (3 s) and frees the one that names it.
    after = talk.send("ours, after")
    talk.pump(until=lambda: {early, after} <= set(js.delivered()), timeout=15)
    assert js.delivered().index(early) < js.delivered().index(after)
    assert {w1, w2} <= js.acknowledged()  # named in the history of `after`

    # Its next message names ours in its causal history.
    w3 = js.ask("send", "sent", text="js: three")["id"]
    talk.pump(until=lambda: not ours.unacknowledged(), timeout=10)
    acked = {e.message_id: e.via for e in talk.of(Acknowledged)}
    assert acked[early] == acked[after] == "causal_history"

    # Both talk at once.
    burst_js = [js.ask("send", "sent", text=f"js: burst {i}")["id"] for i in range(5)]
    burst_ours = [talk.send(f"ours: burst {i}") for i in range(5)]
    everything = {early, after, w1, w2, w3, *burst_js, *burst_ours}
    talk.pump(until=lambda: everything <= set(ours.log) and everything <= js.holds(), timeout=15)

    # Two more of ours: every message of the js peer is then in two of our
    # filters (its threshold) or our histories, and ours in its history.
    last = [talk.send("ours: last"), talk.send("ours: very last")]
    talk.pump(until=lambda: set(last) <= set(js.delivered()), timeout=10)
    js.ask("sync", "synced")
    talk.pump(until=lambda: not ours.unacknowledged(), timeout=10)
    state = js.ask("state", "state")
    assert state["outgoing"] == [] and state["possibly"] == [] and state["incoming"] == []

    # One log, one order, on both sides.
    assert list(ours.log) == state["log"]
    assert set(state["log"]) == everything | set(last)
    assert ours.waiting == 0


def test_acknowledgement_by_our_filter(conversation):
    """The package counts two of our filters holding its message as an
    acknowledgement (its threshold); our histories name only the last 3."""
    talk = conversation()
    ours, js = talk.channel, talk.peer
    sent = [js.ask("send", "sent", text=f"js {i}")["id"] for i in range(5)]
    talk.pump(until=lambda: set(sent) <= set(ours.log), timeout=10)
    first = talk.send("ours one")
    talk.pump(until=lambda: first in js.delivered(), timeout=10)
    possibly = {e["id"]: e["count"] for e in js.of("sds:out:message-possibly-acknowledged")}
    assert possibly == {sent[0]: 1, sent[1]: 1}  # in our filter, not in our history
    assert js.acknowledged() == set(sent[2:])  # our history: the last three delivered
    second = talk.send("ours two")
    talk.pump(until=lambda: second in js.delivered(), timeout=10)
    assert js.acknowledged() == set(sent)


def test_acknowledgement_by_its_filter(conversation):
    """The package puts a message in its filter when it arrives, in its log
    (and so its history) only once the message's dependencies are there.
    Our resend period is stretched to 8 s so that, however slow the machine,
    the early message cannot arrive (and free the other) before the filter
    has spoken."""
    talk = conversation(Config(resend_unacknowledged_ms=8_000))
    ours, js = talk.channel, talk.peer
    early = talk.send("ours, dropped: our compact filter")
    talk.pump(until=lambda: js.of("sds:error-task"), timeout=10)
    hello = js.ask("send", "sent", text="js hello")["id"]
    talk.pump(until=lambda: hello in ours.log, timeout=10)
    waiting = talk.send("ours, names the early one")  # it waits there for `early`
    talk.pump(until=lambda: js.of("sds:in:message-missing"), timeout=10)
    again = js.ask("send", "sent", text="js again")["id"]
    talk.pump(until=lambda: again in ours.log, timeout=10)
    assert [(e.message_id, e.via) for e in talk.of(Acknowledged)] == [(waiting, "bloom")]
    assert talk.of(PossiblyAcknowledged) == []  # one sparse filter is certain enough
    assert early in ours.unacknowledged()
    # the early one arrives with its resend, and both enter its log
    talk.pump(until=lambda: early in js.delivered(), timeout=20)
    assert {early, waiting} <= set(js.log())
    js.ask("sync", "synced")
    talk.pump(until=lambda: not ours.unacknowledged(), timeout=10)
    assert talk.of(Acknowledged)[-1].message_id == early


def test_both_sides_converge_through_loss(conversation):
    """20% of datagrams lost each way: our resends and its app's (every
    second) bring both logs to every message, in one order."""
    talk = conversation()
    ours, js = talk.channel, talk.peer
    hello = js.ask("send", "sent", text="js: hello")["id"]
    talk.pump(until=lambda: hello in ours.log, timeout=10)
    talk.loss, talk.js_every = 0.2, 1.0
    everything = {hello}
    for i in range(10):
        everything.add(js.ask("send", "sent", text=f"js: {i}")["id"])
        everything.add(talk.send(f"ours: {i}"))
        talk.pump_for(0.2)
    talk.pump(until=lambda: everything <= set(ours.log) and everything <= js.holds(), timeout=60)
    assert talk.dropped > 0
    talk.loss = 0.0
    state = js.ask("state", "state")
    assert list(ours.log) == state["log"] and set(state["log"]) == everything
