"""A busy channel: what arrives together is one step, and our own sending
slows down (held, in order, never lost) when acknowledgements lag."""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing

from chat_app import events as ev
from chat_app.payload import Payload
from chat_app.runtime import conversation
from chat_app.runtime.conversation import IN_FLIGHT_WINDOW_MS, MAX_IN_FLIGHT
from chat_app.store import Store

from .conftest import Net, texts


class CountingStore(Store):
    commits = 0

    def commit_step(self, *args, **kwargs):
        self.commits += 1
        return super().commit_step(*args, **kwargs)


def test_a_batch_of_datagrams_is_one_commit(net, tmp_path):
    store = CountingStore(tmp_path / "alice.sqlite3")
    alice = net.add("alice", store=store)
    bob = net.add("bob")
    for i in range(50):
        bob.say("general", f"m{i}", "text", net.now)
    batch = [(data, net.address(bob)) for data, dst in bob.datagrams_to_send() if dst == net.address(alice)]
    assert len(batch) >= 50
    before = store.commits
    alice.datagrams_received(batch + batch, net.now)  # duplicates too
    assert store.commits - before == 1
    assert texts(store) == [f"m{i}" for i in range(50)]
    delivered = [e for e in alice.events() if isinstance(e, ev.MessageDelivered)]
    assert [e.text for e in delivered] == [f"m{i}" for i in range(50)]  # each once, in order


def test_past_the_in_flight_bound_messages_are_held_in_order_then_all_arrive(tmp_path):
    net = Net(tmp_path)
    alice, bob = net.add("alice"), net.add("bob")
    bob.say("general", "hi", "text", net.now)
    net.pump()  # a peer that could acknowledge: alice has heard it
    assert alice.conversations["general"].engine.participants == 1
    net.loss = 1.0  # nothing gets through: nothing is acknowledged
    n = MAX_IN_FLIGHT + 40
    ids = [alice.say("general", f"m{i}", "text", net.now) for i in range(n)]
    assert all(ids[:MAX_IN_FLIGHT]) and not any(ids[MAX_IN_FLIGHT:])
    held = [e for e in alice.events() if isinstance(e, ev.MessagesHeld)]
    assert held == [ev.MessagesHeld("general", 1)]  # told once, not per line
    assert len(alice.conversations["general"].held) == 40
    assert texts(alice.store) == ["hi"] + [f"m{i}" for i in range(MAX_IN_FLIGHT)]
    net.run(IN_FLIGHT_WINDOW_MS // 2)
    assert len(alice.conversations["general"].held) == 40  # acknowledgements free room, not time alone...
    net.loss = 0.0
    net.run(IN_FLIGHT_WINDOW_MS * 3)  # ...but a message older than the window stops counting
    assert alice.conversations["general"].held == type(alice.conversations["general"].held)()
    assert texts(alice.store) == ["hi"] + [f"m{i}" for i in range(n)]  # typed order kept
    net.run(60_000)
    assert texts(bob.store) == ["hi"] + [f"m{i}" for i in range(n)]
    assert ev.MessagesHeld("general", 0) in net.seen(alice)


def test_alone_in_a_channel_nothing_is_held(tmp_path):
    """Backpressure is against peers that exist: with nobody to acknowledge
    (nobody heard from), a paste leaves at once, not 256 per window."""
    net = Net(tmp_path)
    alice = net.add("alice")
    n = 3 * MAX_IN_FLIGHT
    ids = [alice.say("general", f"m{i}", "text", net.now) for i in range(n)]
    assert all(ids) and len(alice.conversations["general"].held) == 0
    assert texts(alice.store) == [f"m{i}" for i in range(n)]
    assert not [e for e in alice.events() if isinstance(e, ev.MessagesHeld)]


def test_leaving_sends_everything_held(tmp_path):
    net = Net(tmp_path)
    alice, bob = net.add("alice"), net.add("bob")
    bob.say("general", "hi", "text", net.now)
    net.pump()
    net.loss = 1.0
    for i in range(MAX_IN_FLIGHT + 5):
        alice.say("general", f"m{i}", "text", net.now)
    assert alice.conversations["general"].held
    alice.leave(net.now)
    assert len(texts(alice.store)) == MAX_IN_FLIGHT + 6  # stored as unacknowledged: resent after a restart
    reopened = Store(alice.store.path)
    assert len(reopened.states.load("general")["outgoing"]) == MAX_IN_FLIGHT + 5


def test_a_message_is_checked_once_whether_it_goes_at_once_or_is_held(tmp_path, monkeypatch):
    """Each line said becomes one checked payload; one held back takes its
    sequence number when it goes, so the numbers stay in typed order."""
    made = []
    check = Payload.__post_init__

    def counted(payload):
        said = sys._getframe(2).f_code.co_filename == conversation.__file__  # not decoded
        if payload.nick == "alice" and said:
            made.append(payload)
        check(payload)

    monkeypatch.setattr(Payload, "__post_init__", counted)
    net = Net(tmp_path)
    alice, bob = net.add("alice"), net.add("bob")
    bob.say("general", "hi", "text", net.now)
    net.pump()
    net.loss = 1.0
    n = MAX_IN_FLIGHT + 10
    for i in range(n):
        alice.say("general", f"m{i}", "text", net.now)
    assert len(alice.conversations["general"].held) == 10
    net.loss = 0.0
    net.run(IN_FLIGHT_WINDOW_MS * 3)
    assert len(made) == n
    assert texts(alice.store) == ["hi"] + [f"m{i}" for i in range(n)]
    with closing(sqlite3.connect(alice.store.path)) as conn:
        seqs = [seq for (seq,) in conn.execute(
            "SELECT seq FROM messages WHERE sender_id = ? ORDER BY lamport", (alice.peer_id,))]
    assert seqs == list(range(1, n + 1))
