"""/ignore is of a person: their key, whatever nick they take next, kept
across restarts; the list names them by the nick they go by now."""

from __future__ import annotations

from chat_app import events as ev


def of(net, rt, kind):
    return [e for e in net.seen(rt) if isinstance(e, kind)]


def heard_from(net, rt, sender_id) -> list[str]:
    return [e.text for e in of(net, rt, ev.MessageDelivered) if e.sender_id == sender_id]


def test_a_new_nick_does_not_bring_an_ignored_person_back(net):
    bob, mallory = net.add("bob"), net.add("mallory")
    mallory.say("general", "spam", "text", net.now)
    net.run(500)
    bob.ignore("Mallory", net.now)  # whatever the case
    net.pump()
    assert of(net, bob, ev.Ignoring)[-1] == ev.Ignoring(("mallory",), (mallory.peer_id,))
    assert mallory.profile.set_nick("evader")
    mallory.say("general", "it's not me", "text", net.now)
    mallory.typing("general", net.now)
    net.run(1_000)
    assert heard_from(net, bob, mallory.peer_id) == ["spam"]
    assert not [e for e in of(net, bob, ev.Typing) if e.peer_id == mallory.peer_id]
    assert [m.text for m in bob.store.messages("general")][-1] == "it's not me"  # stored and synced all the same
    bob.ignore(None, net.now)
    net.pump()
    assert of(net, bob, ev.Ignoring)[-1] == ev.Ignoring(("evader",), (mallory.peer_id,))  # shown by the nick of now
    bob.ignore("evader", net.now)  # again: shown again
    mallory.say("general", "back", "text", net.now)
    net.run(500)
    assert of(net, bob, ev.Ignoring)[-1] == ev.Ignoring((), ())
    assert heard_from(net, bob, mallory.peer_id) == ["spam", "back"]


def test_ignoring_is_kept_across_a_restart(net):
    bob, mallory = net.add("bob"), net.add("mallory")
    mallory.say("general", "spam", "text", net.now)
    net.run(500)
    bob.ignore("mallory", net.now)
    again = net.add("bob-again", store=bob.store)  # restarted: nobody seen yet
    del net.nodes[net.address(bob)]
    assert mallory.profile.set_nick("evader")
    mallory.say("general", "new nick, same key", "text", net.now)
    net.run(1_000)
    assert heard_from(net, again, mallory.peer_id) == []
    assert bob.store.ignored() == {mallory.peer_id: "evader"}


def test_ignore_reaches_into_the_history_for_someone_not_seen_since_the_start(net):
    bob, mallory = net.add("bob"), net.add("mallory")
    mallory.say("general", "spam", "text", net.now)
    net.run(500)
    again = net.add("bob-again", store=bob.store)
    del net.nodes[net.address(bob)]
    again.ignore("mallory", net.now)
    again.ignore("nobody-here", net.now)
    net.pump()
    assert of(net, again, ev.Ignoring) == [ev.Ignoring(("mallory",), (mallory.peer_id,))]
    (error,) = of(net, again, ev.Error)
    assert "nobody called nobody-here" in error.reason


def test_we_are_never_ignored(net):
    alice = net.add("alice")
    alice.profile.whois("alice", net.now)  # we are among the people known
    alice.ignore("alice", net.now)
    net.pump()
    assert of(net, alice, ev.Ignoring) == [] and alice.store.ignored() == {}
