"""Replies, reactions, edits and deletions between runtimes, on SDS and SVS
channels: real engines, real SQLite files, an in-memory network (``conftest.Net``);
``Changes`` says what each makes of the message it names, as the node does."""

from __future__ import annotations

from collections import Counter

import pytest

from chat_app import events as ev
from chat_app.changes import Changes
from chat_app.file_offer import FileOffer
from chat_app.runtime import Runtime
from chat_app.store import Store, StoredMessage

from .test_direct import introduce


def changes_seen(net, rt: Runtime, counted: Counter[str] | None = None) -> list[ev.AppEvent]:
    """What a user interface of ``rt`` is told of the events so far (``counted``: what ``Changes`` counts)."""
    told: list[ev.AppEvent] = []
    changes = Changes(rt.store, told.append, Counter() if counted is None else counted)
    for event in net.seen(rt):
        changes(event)
    return [e for e in told if isinstance(e, (ev.MessageChanged, ev.AboutRejected))]


@pytest.mark.parametrize("channel", ["general", "general+svs"])
def test_every_peer_derives_the_same_edit_reactions_and_refusals(net, channel):
    alice, bob = net.add("alice", channels=(channel,)), net.add("bob", channels=(channel,))
    name = alice.channels[0]
    mid = alice.say(name, "helo", "text", net.now)
    net.run(500)
    bob.say(name, "👍", "react", net.now, about=mid)
    bob.say(name, "pwned", "edit", net.now, about=mid)  # not bob's message: the node would refuse it; a peer may not
    bob.say(name, "gone", "reply", net.now, about=mid)
    alice.say(name, "hello", "edit", net.now, about=mid)
    alice.say(name, "+1", "react", net.now, about=mid)
    alice.say(name, "+1", "react", net.now, about=mid)  # taken back
    bob.say(name, "👍", "react", net.now, about="f" * 32)  # no such message
    net.run(2000)
    for rt in (alice, bob):
        counted: Counter[str] = Counter()
        told = changes_seen(net, rt, counted)
        last = [e for e in told if isinstance(e, ev.MessageChanged)][-1]
        assert (last.message_id, last.text, last.edited, last.deleted, last.reactions) == \
            (mid, "hello", True, False, (("👍", 1),))
        rejected = [e.reason for e in told if isinstance(e, ev.AboutRejected)]
        assert sorted(rejected) == ["an edit of someone else's message", "it is about a message not in the log"]
        assert counted["about_rejected"] == 2
        assert [m.kind for m in rt.store.messages(name)].count("edit") == 2  # refused, yet stored everywhere
    assert [m.message_id for m in alice.store.messages(name)] == [m.message_id for m in bob.store.messages(name)]


def test_a_deletion_by_the_author_leaves_the_message_deleted_everywhere(net):
    alice, bob = net.add("alice"), net.add("bob")
    mid = alice.say("general", "oops", "text", net.now)
    net.run(500)
    alice.say("general", "", "delete", net.now, about=mid)
    bob.say("general", "", "delete", net.now, about=mid)
    net.run(1000)
    for rt in (alice, bob):
        changed = [e for e in changes_seen(net, rt) if isinstance(e, ev.MessageChanged)]
        assert changed[-1].deleted and changed[-1].text == "(message deleted)"


def test_a_message_that_arrives_after_an_edit_of_it_is_told_what_it_became(tmp_path):
    """The edit came first (the message itself was lost, then fetched): it
    changed nothing then, and the message, when it comes, shows it."""
    store = Store(tmp_path / "db.sqlite3")
    told: list[ev.AppEvent] = []
    changes = Changes(store, told.append, Counter())
    target, edit = "a" * 32, "e" * 32

    def deliver(mid, lamport, kind, text, about=None):
        store.commit_step("general", None, [StoredMessage("general", mid, lamport, "alice-key", "alice", kind, text,
                                                          lamport, 0, b"w", 0, 0, False, about=about)], 0)
        changes(ev.MessageDelivered("general", 0, mid, "alice-key", lamport, "alice", kind, text, lamport, False,
                                    about=about))

    deliver(edit, 2, "edit", "hello", about=target)
    assert told[-1] == ev.AboutRejected("general", edit, target, "it is about a message not in the log")
    changes = Changes(store, told.append, Counter())  # a restart in between: the store says what waits
    deliver(target, 1, "text", "helo")
    assert told[-1] == ev.MessageChanged("general", target, "hello", True, False, ())
    deliver("b" * 32, 3, "text", "unrelated")
    assert isinstance(told[-1], ev.MessageDelivered)  # nothing about it: nothing more said


def test_a_direct_conversation_carries_reactions_edits_and_refusals_as_a_channel_does(net):
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    mid = alice.direct.send("bob", "helo", "text", alice.nick, net.now)
    net.run(2_000)
    to_alice = f"@{alice.peer_id}"
    bob.direct.send(to_alice, "👍", "react", bob.nick, net.now, mid)
    bob.direct.send(to_alice, "pwned", "edit", bob.nick, net.now, mid)
    alice.direct.send("bob", "hello", "edit", alice.nick, net.now, mid)
    net.run(4_000)
    for rt in (alice, bob):
        told = changes_seen(net, rt)
        last = [e for e in told if isinstance(e, ev.MessageChanged)][-1]
        assert (last.message_id, last.text, last.edited, last.reactions) == (mid, "hello", True, (("👍", 1),))
        assert [e.reason for e in told if isinstance(e, ev.AboutRejected)] == ["an edit of someone else's message"]


OFFER = FileOffer("notes.txt", 5, 4096, "1" * 64, "2" * 64, "text/plain")


@pytest.mark.parametrize("where", ["general", "general+svs", "direct"])
def test_a_file_message_takes_replies_reactions_and_its_author_s_deletion_but_no_edit(net, where):
    channel = "general" if where == "direct" else where
    alice, bob = net.add("alice", channels=(channel,)), net.add("bob", channels=(channel,))
    if where == "direct":
        introduce(net, alice, bob)

    def say(rt, text, kind, about=""):
        if where == "direct":
            other = bob if rt is alice else alice
            return rt.direct.send(f"@{other.peer_id}", text, kind, rt.nick, net.now, about)
        return rt.say(rt.channels[0], text, kind, net.now, about=about)

    mid = say(alice, OFFER.text, "file")
    net.run(2_000)
    reply = say(bob, "thanks", "reply", mid)
    say(bob, "👍", "react", mid)
    say(alice, "other.txt", "edit", mid)  # the node refuses it; a peer may still send it
    net.run(2_000)
    for rt in (alice, bob):
        told = changes_seen(net, rt)
        assert [e.reason for e in told if isinstance(e, ev.AboutRejected)] == \
            ["an edit of a file message, which cannot take one"]
        last = [e for e in told if isinstance(e, ev.MessageChanged)][-1]
        assert (last.message_id, last.text, last.edited, last.reactions) == (mid, OFFER.text, False, (("👍", 1),))
        replied = next(e for e in net.seen(rt) if isinstance(e, ev.MessageDelivered | ev.DmDelivered)
                       and e.message_id == reply)
        assert replied.about == mid
    say(alice, "", "delete", mid)
    net.run(2_000)
    for rt in (alice, bob):
        last = [e for e in changes_seen(net, rt) if isinstance(e, ev.MessageChanged)][-1]
        assert (last.message_id, last.deleted, last.text) == (mid, True, "(message deleted)")
