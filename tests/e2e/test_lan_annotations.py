"""Reactions and edits between real processes on the test LAN: what was
done while a peer was away is what it shows when it comes back."""

import pytest

from .harness import log_order
from .test_headless import _introduced

pytestmark = pytest.mark.slow


def test_an_edit_and_a_reaction_made_while_a_peer_was_away_appear_when_it_comes_back(spawn):
    alice, bob, carol = (spawn(nick) for nick in ("alice", "bob", "carol"))
    _introduced(alice, bob, carol)
    alice.send("helo")
    mid = alice.wait_delivered(1)[0]["message_id"]
    for peer in (bob, carol):
        peer.wait_delivered(1)
    bob.stop()
    alice.send("/edit 1 hello")
    carol.send("/react -1 👍")
    carol.send("/edit 1 not mine")  # refused where it is typed: carol is not its author
    carol.wait_for(lambda e: e["event"] == "error" and "only its author" in e["reason"])
    for peer in (alice, carol):
        peer.wait_for(lambda e: e["event"] == "changed" and e["message_id"] == mid and e["reactions"] == [["👍", 1]]
                      and e["text"] == "hello", 30)
    bob.start()  # same data directory: it catches up on what it missed
    changed = bob.wait_for(lambda e: e["event"] == "changed" and e["message_id"] == mid and e["edited"]
                           and e["reactions"] == [["👍", 1]], 60)
    assert changed["text"] == "hello" and not changed["deleted"]
    kinds = {e["kind"]: e.get("about") for e in bob.delivered()}
    assert kinds == {"edit": mid, "react": mid}  # this run: what it missed, each naming the message
    for peer in (alice, bob, carol):
        peer.stop()
    assert log_order(alice) == log_order(bob) == log_order(carol) and len(log_order(bob)) == 3
