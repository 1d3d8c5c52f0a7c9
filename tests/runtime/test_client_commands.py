"""Commands of the user against the runtime: real engines and SQLite files."""

from __future__ import annotations

from chat_app import events as ev


def test_joining_a_joined_channel_says_so_and_changes_nothing_else(net):
    alice = net.add("alice", channels=("general", "random"))
    net.seen(alice).clear()
    assert alice.join("#general", net.now) is False
    net.pump()
    assert net.seen(alice) == [ev.Joined("general", already=True)]
    assert alice.channels == ("general", "random") and alice.store.joined_channels() == ["general", "random"]


def test_a_bad_channel_name_is_refused_by_the_runtime_too(net):
    alice = net.add("alice")
    net.seen(alice).clear()
    assert alice.join("bad name", net.now) is False
    assert alice.join("x" * 257, net.now) is False
    net.pump()
    reasons = [e.reason for e in net.seen(alice) if isinstance(e, ev.Error)]
    assert len(reasons) == 2 and "' '" in reasons[0] and "too long" in reasons[1]
    assert alice.channels == ("general",) and alice.store.joined_channels() == ["general"]
