"""Our nick at its edges: what /nick refuses, and a saved nick that no longer
fits the rule repaired at start instead of failing every message and the quit."""

from __future__ import annotations

import pytest

from chat_app import events as ev
from chat_app.wire_rule import MAX_NICK
from chat_app.store import Store


def of(net, rt, kind):
    return [e for e in net.seen(rt) if isinstance(e, kind)]


def test_a_saved_nick_too_long_is_repaired_and_said_so(net, tmp_path):
    bob = net.add("bob")
    store = Store(tmp_path / "long" / "db.sqlite3")
    long = net.add("x" * 40, store=store)  # as a nick saved before the rule reaches the runtime
    assert long.nick == "x" * MAX_NICK
    (error,) = of(net, long, ev.Error)
    assert "cannot be used" in error.reason and f"you are {'x' * MAX_NICK}" in error.reason
    assert of(net, long, ev.NickChanged) == [ev.NickChanged("x" * 40, "x" * MAX_NICK)]
    assert store.nick() == "x" * MAX_NICK  # the next start is clean
    assert long.say("general", "hello", "text", net.now) is not None
    net.run(1_000)
    assert [(e.nick, e.text) for e in of(net, bob, ev.MessageDelivered) if not e.own] == [("x" * MAX_NICK, "hello")]
    long.leave(net.now)  # said goodbye with a nick that travels: no PayloadError


@pytest.mark.parametrize(("given", "repaired"), [
    ("two words", "two_words"), ("  padded ", "padded"), ("bell\x07", "bell"), ("\u202eevil", "evil"),
    ("\x1b", None), (" ", None), ("", None)])
def test_a_saved_nick_keeps_what_the_rule_allows(net, given, repaired):
    rt = net.add(given)
    assert rt.nick == (repaired or f"peer-{rt.peer_id[:6]}")
    assert of(net, rt, ev.Ready)[0].nick == rt.nick


@pytest.mark.parametrize(("nick", "reason"), [
    ("bad nick", "cannot hold a space (U+0020 SPACE at character 4)"),
    ("tab\there", "cannot hold a control character"),
    ("nbsp\u00a0x", "cannot hold a space (U+00A0"),
    ("", "1 to 32 characters"),
    ("z" * (MAX_NICK + 1), "1 to 32 characters"),
    ("\u2066iso", "bidirectional override or isolate")])
def test_nick_refuses_what_cannot_be_addressed_or_shown(net, nick, reason):
    alice = net.add("alice")
    assert not alice.profile.set_nick(nick)
    net.pump()
    (error,) = of(net, alice, ev.Error)
    assert reason in error.reason and "\n" not in error.reason
    assert alice.nick == "alice" and alice.store.nick() == "alice"


def test_nick_takes_the_longest_allowed(net):
    alice = net.add("alice")
    assert alice.profile.set_nick("z" * MAX_NICK)
    net.pump()
    assert of(net, alice, ev.NickChanged) == [ev.NickChanged("alice", "z" * MAX_NICK)]
