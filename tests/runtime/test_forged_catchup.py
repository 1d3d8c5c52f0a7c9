"""Forged and altered replication entries, pushed at a real runtime by a peer
that speaks the protocol itself (``tests.replication.forgery.Forger``): each
is refused with a reason, counted, never stored; and an honest peer then
catches the victim up.

A public channel's entry that fails is a peer clearly lying (a member only
serves what verified for it): the link ends with the reason. In a private
channel's datagram set, what fails to open or verify is dropped alone and
the link goes on, since a blind store that relays the set cannot tell a
member's datagram from garbage sent under the tag."""

from __future__ import annotations

from chat_app import events as ev
from chat_app.crypto import Identity, blind_id
from chat_app.runtime.catchup import PEER_CLOSED
from chat_app.runtime.envelopes import is_envelope
from sync.replication.messages import LOG_HEIGHT, SET_RECONCILIATION
from tests.replication.forgery import Forger, as_someone_else, one_bit_changed, under_another_key

from .conftest import Net, texts
from .test_runtime import _link

ROOM, HIDEOUT = "operations-room", "hideout"
PASS = "correct horse battery staple"
MALLORY = ("10.0.0.66", 9)


def forge(net: Net, victim, forger: Forger) -> list:
    """One link from the forger to ``victim``, to its end; the victim's events."""
    conn = victim.stream_opened(MALLORY, initiator=False, now=net.now)
    for _ in range(200):
        moved = False
        for wanted_conn, wanted in victim.reads():
            victim.store_answered(wanted_conn, wanted, victim.read_wanted(victim.store, wanted), net.now)
            moved = True
        for data in forger.frames():
            moved = True
            victim.stream_frames(conn, [data], net.now)
        for out in conn.datagrams_to_send(net.now):
            moved = True
            forger.receive(out.data)
        if not moved:
            break
    if conn.closed is None:
        conn.close(PEER_CLOSED)  # the forger hangs up, as the adapter reports it
    victim.stream_frames(conn, None, net.now)
    victim.stream_closed(conn)
    return [e for e in victim.events() if isinstance(e, (ev.DatagramRejected, ev.ReplicationClosed))]


def _away(net: Net, victim, say) -> None:
    """``say`` happens while nothing reaches the victim (or anyone)."""
    net.loss = 1.0
    say()
    net.pump()
    net.loss = 0.0


def test_forged_entries_of_a_public_channel_are_refused_one_link_each_and_an_honest_peer_then_serves(net):
    alice = net.add("alice", channels=("general", "random"))
    bob = net.add("bob", channels=("general", "random"))  # the victim
    carol = net.add("carol", channels=("general",))
    for i in (1, 2):
        alice.say("general", f"heard {i}", "text", net.now)
    alice.say("random", "elsewhere", "text", net.now)
    net.run(2_000)
    _away(net, bob, lambda: [alice.say("general", f"missed {i}", "text", net.now) for i in (3, 4)]
          + [carol.say("general", "carol missed", "text", net.now)])
    assert texts(bob.store) == ["heard 1", "heard 2"]
    entry = {(m.sender_id, m.seq): m.wire for rt in (alice, carol) for m in rt.store.messages("general")}
    a, c = alice.peer_id, carol.peer_id
    random_entry = alice.store.messages("random")[0].wire
    mallory = Identity.generate()
    forgeries = [  # (what it names, what it sends, why it is refused)
        ([(a, 4)], [as_someone_else(mallory, a, "general", 3)], "impostor"),
        ([(a, 4)], [one_bit_changed(entry[(a, 3)])], "bad_signature"),
        ([(a, 4)], [entry[(c, 1)]], "unnamed"),  # names alice's log, sends carol's
        ([(a, 4)], [entry[(a, 1)]], "height"),  # bob said he holds alice's 1 and 2
        ([(a, 4)], [random_entry], "other_channel"),
    ]
    for mode in (LOG_HEIGHT, SET_RECONCILIATION):
        for names, sends, why in forgeries:
            refused = forge(net, bob, Forger(("general",), {"general": names}, sends, mode=mode))
            rejected = [e for e in refused if isinstance(e, ev.DatagramRejected)]
            closed = [e for e in refused if isinstance(e, ev.ReplicationClosed)]
            assert [r.kind for r in rejected] == [why], (mode, why, refused)
            assert len(closed) == 1 and closed[0].reason in rejected[0].reason
        assert texts(bob.store) == ["heard 1", "heard 2"]  # nothing forged was stored
    assert bob.stats["replication_impostor"] == bob.stats["replication_unnamed"] == 2
    assert bob.stats["replicated_in"] == 0
    _link(net, bob, alice)
    _link(net, bob, carol)
    assert sorted(texts(bob.store)) == sorted(["heard 1", "heard 2", "missed 3", "missed 4", "carol missed"])


def _private_pair(net: Net):
    """alice and bob in two private channels; bob misses alice's last two lines of ROOM."""
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS, HIDEOUT: PASS})
    bob = net.add("bob", channels=(), passphrases={ROOM: PASS, HIDEOUT: PASS})
    alice.say(ROOM, "heard", "text", net.now)
    alice.say(HIDEOUT, "hidden", "text", net.now)
    net.run(2_000)
    _away(net, bob, lambda: [alice.say(ROOM, f"missed {i}", "text", net.now) for i in (1, 2)])
    return alice, bob


def _datagrams(rt, channel: str) -> dict[str, bytes]:
    """A member's datagrams of a private channel, by text: what its set holds."""
    return {m.text: rt.envelopes.outgoing(channel, m.wire) for m in rt.store.messages(channel) if is_envelope(m.wire)}


def test_in_a_private_channels_set_what_fails_to_open_is_dropped_alone_and_the_honest_entries_are_kept(net):
    alice, bob = _private_pair(net)
    tag = alice.envelopes.private[ROOM].tag
    room = _datagrams(alice, ROOM)
    hideout_envelope = alice.store.messages(HIDEOUT)[0].wire
    mallory = Identity.generate()  # a member of ROOM with a key of its own
    forged = {
        "undecryptable": under_another_key(hideout_envelope, tag),  # ROOM's tag, not ROOM's key
        "bad_signature": alice.envelopes.private[ROOM].encrypt(hideout_envelope),  # signed for HIDEOUT
        "impostor": as_someone_else(mallory, alice.peer_id, ROOM, 3, alice.envelopes.private[ROOM]),
    }
    sends = [room["missed 1"], *forged.values(), room["missed 2"]]
    name = "=" + tag.hex()
    refused = forge(net, bob, Forger((name,), {name: [(blind_id(d), 1) for d in sends]}, sends))
    assert sorted(e.kind for e in refused if isinstance(e, ev.DatagramRejected)) == sorted(forged)
    assert not [e for e in refused if isinstance(e, ev.ReplicationClosed)]  # the link went on
    assert texts(bob.store, ROOM) == ["heard", "missed 1", "missed 2"]
    assert texts(bob.store, HIDEOUT) == ["hidden"]
    assert all(bob.stats[f"replication_{kind}"] == 1 for kind in forged)


def test_a_datagram_of_another_private_channel_in_a_set_ends_the_link(net):
    alice, bob = _private_pair(net)
    name = "=" + alice.envelopes.private[ROOM].tag.hex()
    replayed = _datagrams(alice, HIDEOUT)["hidden"]  # a member of both channels replays it into ROOM's set
    refused = forge(net, bob, Forger((name,), {name: [(blind_id(replayed), 1)]}, [replayed]))
    assert [e.kind for e in refused if isinstance(e, ev.DatagramRejected)] == ["other_channel"]
    assert [e for e in refused if isinstance(e, ev.ReplicationClosed)]
    assert texts(bob.store, ROOM) == ["heard"] and texts(bob.store, HIDEOUT) == ["hidden"]
    _link(net, bob, alice)
    assert texts(bob.store, ROOM) == ["heard", "missed 1", "missed 2"]


def test_a_datagram_of_the_set_the_peer_did_not_name_ends_the_link(net):
    alice, bob = _private_pair(net)
    name = "=" + alice.envelopes.private[ROOM].tag.hex()
    room = _datagrams(alice, ROOM)
    refused = forge(net, bob, Forger((name,), {name: [(blind_id(room["missed 1"]), 1)]}, [room["missed 2"]]))
    assert [e.kind for e in refused if isinstance(e, ev.DatagramRejected)] == ["unnamed"]
    assert texts(bob.store, ROOM) == ["heard"]
