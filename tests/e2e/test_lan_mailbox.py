"""Direct messages to people who are away reach them through a mailbox
(``sds-chat serve --mailbox``) when their author is gone: real processes,
each on a host of its own on the test LAN.

One run covers every case at once, so the five-minute wait is paid once
(about six minutes in all): six recipients leave at staggered times so
that alice writes to each 5 s, 35 s or 5 min after it left (batch, and
interactive twice over), then she quits. Three come back and read; the
mailbox restarts; the other three come back and read. Each must get its
three messages exactly once, in order, within 10 s of starting again."""

from __future__ import annotations

import time

import pytest

from .test_headless import _introduced
from .test_lan_direct import acks, dms, held_letters, stored_dms

pytestmark = pytest.mark.slow

AWAY_S = {"b300": 300, "b35": 35, "b5": 5, "c300": 300, "c35": 35, "c5": 5}
"""Each recipient, and how long before alice writes to it it left. The
b-peers come back before the mailbox restarts, the c-peers after."""
RETURN_WITHIN_S = 10


def texts_for(nick: str) -> list[str]:
    return [f"to {nick} while away {i}" for i in range(3)]


def since_start(peer) -> list[str]:
    """The direct messages ``peer`` got since it last started."""
    peer.drain()
    return [e["text"] for e in peer.events if e["event"] == "dm_delivered" and not e["own"]]


def comes_back_and_reads(peer) -> float:
    """Start ``peer`` again; how long until its three messages arrived (they must, once each, in order)."""
    started = time.monotonic()
    peer.start()
    expected = texts_for(peer.nick)
    while (got := since_start(peer)) != expected:
        assert got == expected[:len(got)], f"{peer.nick}: {got}"
        assert time.monotonic() - started < RETURN_WITHIN_S, f"{peer.nick}: {got} after {RETURN_WITHIN_S} s"
        peer.drain(0.1)
    return time.monotonic() - started


def test_messages_to_peers_away_5_s_35_s_and_5_min_reach_them_once_through_a_mailbox_after_the_author_quit(spawn):
    store = spawn("store", "serve", "--mailbox")
    alice = spawn("alice")
    recipients = {nick: spawn(nick) for nick in AWAY_S}
    _introduced(store, alice, *recipients.values())
    for nick, peer in recipients.items():  # they have talked: each knows the other's keys
        alice.send(f"/msg {nick} hello")
        peer.wait_for(lambda e: e["event"] == "dm_delivered" and e["text"] == "hello", 30)
    deadline = time.monotonic() + 30
    while len(acks(alice)) < len(recipients) and time.monotonic() < deadline:
        alice.drain(0.3)
    assert len(acks(alice)) == len(recipients)

    write_at = time.monotonic() + max(AWAY_S.values())
    for nick in sorted(AWAY_S, key=AWAY_S.get, reverse=True):
        time.sleep(max(0.0, write_at - AWAY_S[nick] - time.monotonic()))
        recipients[nick].stop()
    time.sleep(max(0.0, write_at - time.monotonic()))
    for nick in AWAY_S:
        for text in texts_for(nick):
            alice.send(f"/msg {nick} {text}")
    alice.wait_for(lambda e: e["event"] == "dm_delivered" and e["text"] == texts_for("c5")[-1], 10)
    alice.stop()  # gone before anyone returns
    time.sleep(1)
    letters = held_letters(store)
    assert len(letters) >= len(recipients)  # one per recipient, from alice: sealed, nothing to read
    assert not any(t.encode() in data for data in letters for nick in AWAY_S for t in texts_for(nick))

    took = {nick: comes_back_and_reads(recipients[nick]) for nick in AWAY_S if nick.startswith("b")}
    store.stop()
    store.start()
    took |= {nick: comes_back_and_reads(recipients[nick]) for nick in AWAY_S if nick.startswith("c")}
    print(f"\nseconds from starting again to the last of three messages: {took}")
    time.sleep(3)  # nothing arrives twice later
    for nick, peer in recipients.items():
        assert dms(peer) == ["hello", *texts_for(nick)]

    alice.start()  # the recipients' acks waited in the mailbox, as their letters to her
    deadline = time.monotonic() + 20
    while len(acks(alice)) < 4 * len(recipients) and time.monotonic() < deadline:
        alice.drain(0.3)
    assert len(acks(alice)) == 4 * len(recipients)
    time.sleep(2)  # the letters alice left again on starting, with everything still unacknowledged, are withdrawn

    for peer in (alice, store, *recipients.values()):
        peer.stop()
    for nick, peer in recipients.items():
        assert stored_dms(peer, alice) == ["hello", *texts_for(nick)]
    assert held_letters(store) == []  # each letter was forgotten once its recipient took it

