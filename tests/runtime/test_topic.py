"""The channel topic: a chat message of kind ``topic``; the latest in log
order wins, whatever order they arrive in. Real engines and SQLite files."""

from __future__ import annotations

from chat_app import events as ev
from chat_app.store import Store

from .conftest import Net


def topics(net: Net, rt) -> list[str]:
    return [e.topic for e in net.seen(rt) if isinstance(e, ev.TopicChanged)]


def test_the_latest_topic_in_log_order_wins_and_reaches_everyone(net):
    alice, bob = net.add("alice"), net.add("bob")
    alice.say("general", "first topic", "topic", net.now)
    net.run(1_000)
    bob.say("general", "second topic", "topic", net.now)
    net.run(1_000)
    assert topics(net, alice) == topics(net, bob) == ["first topic", "second topic"]
    assert bob.store.topic("general").nick == "bob"
    net.seen(alice).clear()
    alice.topic("general", net.now)
    assert [e.topic for e in alice.events() if isinstance(e, ev.TopicChanged)] == ["second topic"]


def test_a_topic_older_in_log_order_arriving_late_changes_nothing(tmp_path):
    net = Net(tmp_path)
    alice, bob = net.add("alice"), net.add("bob")
    net.loss = 1.0  # bob's topic is lost for now; alice sets hers later in the log
    bob.say("general", "old topic", "topic", net.now)
    net.pump()
    net.loss = 0.0
    net.now += 5_000
    alice.say("general", "new topic", "topic", net.now)
    net.run(60_000)  # bob's resend arrives at alice after hers
    assert alice.store.count("general") == 2
    assert alice.store.topic("general").text == bob.store.topic("general").text == "new topic"
    assert topics(net, alice)[-1] == "new topic" and "old topic" not in topics(net, alice)


def test_no_topic_yet_is_an_error_and_the_topic_survives_a_restart(net, tmp_path):
    alice = net.add("alice")
    alice.topic("general", net.now)
    assert [type(e) for e in alice.events()][-1] is ev.Error
    alice.say("general", "kept", "topic", net.now)
    path = alice.store.path
    alice.store.close()
    store = Store(path)
    try:
        assert store.topic("general").text == "kept"
    finally:
        store.close()
