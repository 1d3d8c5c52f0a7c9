"""/invite: a private channel's key handed to one person, sealed to them
alone; nothing happens on their side until they join the channel."""

from __future__ import annotations

import cbor2

from chat_app import events as ev
from chat_app.runtime.direct import INVITE

from .conftest import texts
from .test_direct import introduce, of
from .test_private import PASS, ROOM


def test_an_invitation_hands_over_the_key_and_joining_is_the_consent(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    bob = net.add("bob", channels=())
    introduce(net, alice, bob)
    alice.say(ROOM, "before bob", "text", net.now)
    net.run(1_000)
    alice.invite("bob", f"#{ROOM}", net.now)
    net.run(1_000)
    assert [(e.channel, e.peer_id) for e in of(net.seen(bob), ev.Invited)] == [(ROOM, alice.peer_id)]
    assert of(net.seen(alice), ev.InviteSent)[0].peer_id == bob.peer_id
    assert ROOM not in bob.conversations  # an invitation joins nothing by itself
    captured = b"".join(data for _, data, _ in net.sent)
    assert PASS.encode() not in captured and alice.private.secret(ROOM) not in captured  # sealed to bob
    assert bob.join(f"#{ROOM}", net.now) is True  # no passphrase: the invitation's key
    assert ROOM in bob.envelopes.private
    assert bob.envelopes.private[ROOM].tag == alice.envelopes.private[ROOM].tag
    alice.say(ROOM, "welcome bob", "text", net.now)
    net.run(5_000)
    assert texts(bob.store, ROOM)[-1] == "welcome bob" and "before bob" in texts(bob.store, ROOM)


def test_only_a_private_channel_we_are_in_can_be_handed_over(net):
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    alice.invite("bob", "#general", net.now)
    net.pump()
    (error,) = of(net.seen(alice), ev.Error)
    assert "not a private channel you are in" in error.reason
    assert of(net.seen(bob), ev.Invited) == []


def test_a_malformed_invitation_is_refused_and_counted(net):
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    conversation = alice.direct.open("bob", net.now, announce=False)
    for body in (b"\xff", cbor2.dumps({"channel": "ops"}), cbor2.dumps({"channel": "ops", "secret": b"short"}),
                 cbor2.dumps({"channel": "a b", "secret": bytes(32)})):
        alice.direct._seal_and_send(conversation, bytes((INVITE,)) + body)
    net.pump()
    assert bob.direct.stats["dm_bad_invite"] == 4 and len(bob.direct.invitations) == 0
    assert len([e for e in of(net.seen(bob), ev.DatagramRejected) if e.kind == "invite"]) == 4
