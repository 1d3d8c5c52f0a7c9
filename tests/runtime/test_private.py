"""Private channels in the runtime: what an outsider captures, injects and
misses, and two groups that share a name."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from chat_app import events as ev
from chat_app.crypto import Identity, Kind, blind_id, seal
from chat_app.payload import Payload
from chat_app.store.channel_keys import FILE
from proto.sds_pb2 import SdsMessage
from sync.replication import HeightsWanted
from sync.sds import Channel

from .conftest import T0, texts
from .test_runtime import _link

ROOM = "operations-room"
PASS, OTHER = "correct horse battery staple", "another group entirely"


def of(net, rt, kind) -> list:
    return [e for e in net.seen(rt) if isinstance(e, kind)]


def errors(net, rt) -> list[str]:
    return [e.reason for e in net.seen(rt) if isinstance(e, ev.Error)]


def test_members_talk_and_an_outsider_captures_nothing_readable(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    bob = net.add("bob", channels=(), passphrases={ROOM: PASS})
    eve = net.add("eve", channels=(ROOM,))  # in the public channel of that name
    alice.say(ROOM, "the launch is at noon", "text", net.now)
    net.run(3_000)
    bob.say(ROOM, "noted", "text", net.now)
    net.run(3_000)
    assert texts(alice.store, ROOM) == texts(bob.store, ROOM) == ["the launch is at noon", "noted"]
    assert texts(eve.store, ROOM) == []
    # every datagram but the exchange-key statements each peer is sent when met
    # (for direct messages; they hold the key mDNS announces anyway)
    captured = b"".join(data for _, data, _ in net.sent if data[1] != Kind.EXCHANGE_KEY)
    for secret in (b"the launch is at noon", b"noted", ROOM.encode(), b"alice", b"bob",
                   alice.peer_id.encode(), bytes.fromhex(alice.peer_id), alice.identity.public_key):
        assert secret not in captured, secret
    assert alice.announced_channels == bob.announced_channels != (ROOM,)
    assert alice.announced_channels[0].startswith("~")


def test_an_outsider_cannot_inject_and_replays_change_nothing(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    bob = net.add("bob", channels=(), passphrases={ROOM: PASS})
    alice.say(ROOM, "real", "text", net.now)
    net.run(2_000)
    captured = [data for src, data, dst in net.sent if dst == net.address(bob)]
    eve = Identity.generate()
    fake = Channel(ROOM, eve.sender_id, T0)
    fake.send(Payload("text", "alice", "fake", seq=1, sent_at=T0).encode(), T0)
    (out,) = fake.datagrams_to_send(T0)
    flipped = bytearray(captured[0])
    flipped[-1] ^= 1
    foreign = captured[0][:2] + bytes(16) + captured[0][18:]
    for data in (seal(eve, Kind.SDS, out.data), bytes(flipped), foreign, *captured):
        bob.datagram_received(data, ("10.0.0.66", 1), net.now)
    net.run(1_000)
    kinds = [e.kind for e in net.seen(bob) if isinstance(e, ev.DatagramRejected)]
    assert kinds == ["wrong_channel", "undecryptable", "unknown_channel"]
    assert texts(bob.store, ROOM) == ["real"]


def test_one_name_two_passphrases_two_groups_that_never_meet(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    bob = net.add("bob", channels=(), passphrases={ROOM: PASS})
    carol = net.add("carol", channels=(), passphrases={ROOM: OTHER})
    dave = net.add("dave", channels=(), passphrases={ROOM: OTHER})
    alice.say(ROOM, "ours", "text", net.now)
    carol.say(ROOM, "theirs", "text", net.now)
    net.run(5_000)
    assert texts(alice.store, ROOM) == texts(bob.store, ROOM) == ["ours"]
    assert texts(carol.store, ROOM) == texts(dave.store, ROOM) == ["theirs"]
    assert not [e for e in net.seen(alice) if isinstance(e, ev.DatagramRejected) and e.kind != "unknown_channel"]


def test_a_private_channel_is_rejoined_at_start_by_its_kept_secret(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    bob = net.add("bob", channels=(), passphrases={ROOM: PASS})
    alice.say(ROOM, "kept", "text", net.now)
    keys = Path(alice.store.path).parent / FILE
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600 and PASS.encode() not in keys.read_bytes()
    again = net.add("alice-again", channels=(), store=alice.store)  # restarted without the passphrase
    assert ROOM in again.conversations and ROOM in of(net, again, ev.Ready)[0].private
    assert errors(net, again) == []
    again.say(ROOM, "still private", "text", net.now)
    net.pump()
    assert [e.text for e in of(net, bob, ev.MessageDelivered)] == ["kept", "still private"]


def test_a_private_channel_never_opens_without_its_key(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    alice.say(ROOM, "kept", "text", net.now)
    store = alice.store
    (Path(store.path).parent / FILE).unlink()  # the kept secret is gone
    again = net.add("alice-again", channels=(), store=store)
    assert ROOM not in again.conversations
    assert errors(net, again) == [f"#{ROOM} is private: join it with its passphrase (/join #{ROOM} <passphrase>)"]
    wrong = net.add("alice-wrong", channels=(), store=store, passphrases={ROOM: OTHER})
    assert ROOM not in wrong.conversations
    assert errors(net, wrong) == [f"wrong passphrase for #{ROOM}: it was joined here with another one"]
    wrong.join(ROOM, net.now, passphrase="not it either")
    net.pump()
    assert errors(net, wrong)[1:] == [f"wrong passphrase for #{ROOM}: it was joined here with another one"]
    assert texts(store, ROOM) == ["kept"]


def test_part_forgets_the_secret_and_a_key_file_others_can_read_is_refused(net):
    alice = net.add("alice", channels=("general",), passphrases={ROOM: PASS})
    keys = Path(alice.store.path).parent / FILE
    assert alice.part(ROOM)
    assert ROOM not in keys.read_text()
    assert alice.join(ROOM, net.now, passphrase=PASS)
    keys.chmod(0o644)
    again = net.add("alice-again", channels=(), store=alice.store)
    assert ROOM not in again.conversations
    (reason, closed) = errors(net, again)
    assert "readable by others (mode 0644)" in reason and "is private" in closed


def test_a_late_member_catches_up_over_replication_under_the_tag(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    for i in range(5):
        alice.say(ROOM, f"m{i}", "text", net.now)
    net.run(1_000)
    carol = net.add("carol", channels=(), passphrases={ROOM: PASS})
    carol.peers.static.clear()  # only the link can bring her the history
    _link(net, carol, alice)
    assert texts(carol.store, ROOM) == [f"m{i}" for i in range(5)] and carol.stats["replicated_in"] == 5


def test_a_blind_store_serves_a_private_channel_to_a_late_member(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    tag_name = alice.announced_channels[0]
    store = net.add("store", channels=(tag_name,))  # has the tag, never the passphrase
    assert store.announced_channels == (tag_name,) and not store.conversations
    for i in range(5):
        alice.say(ROOM, f"secret line {i}", "text", net.now)
        net.run(300)
    del net.nodes[net.address(alice)]  # alice is gone: only the store holds the history
    kept = store.store.blind.held(bytes.fromhex(tag_name[1:]))
    # long enough that random ciphertext never holds them by chance (two bytes did, now and then)
    assert len(kept) >= 5 and not any(b"secret line" in d or ROOM.encode() in d for d in kept)
    carol = net.add("carol", channels=(), passphrases={ROOM: PASS})
    net.run(30_000)  # carol's first sync reaches the store, which hands her everything it holds
    assert texts(carol.store, ROOM) == [f"secret line {i}" for i in range(5)]
    assert store.stats["blind_kept"] >= 5 and not [e for e in net.seen(carol) if isinstance(e, ev.DatagramRejected)]


def _a_late_store(net, said: int, spec: str = ROOM):
    """alice says ``said`` lines in a private channel (bob hears them), then
    a blind store starts that heard none of them, and bob leaves: only a
    replication link can bring them to the store."""
    channel = spec.removesuffix("+svs")
    alice = net.add("alice", channels=(), passphrases={spec: PASS})
    bob = net.add("bob", channels=(), passphrases={spec: PASS})
    for i in range(said):
        alice.say(channel, f"secret line {i}", "text", net.now)
        net.run(300)
    net.run(1_000)
    assert len(texts(bob.store, channel)) == said
    del net.nodes[net.address(bob)]
    tag_name = alice.announced_channels[0]
    store = net.add("store", channels=(tag_name,))
    return alice, store, bytes.fromhex(tag_name[1:])


def _set_of(member, tag: bytes) -> set[str]:
    """The blind ids of the datagram set a member works out for a channel."""
    name = "=" + tag.hex()
    return {blind for blind, _height in member.read_wanted(member.store, HeightsWanted(0, (name,)))[name]}


@pytest.mark.parametrize("spec", [ROOM, "hideout+svs"], ids=["sds", "svs"])
def test_a_blind_store_started_late_catches_up_over_replication_and_serves_a_late_member(net, spec):
    channel = spec.removesuffix("+svs")
    alice, store, tag = _a_late_store(net, 5, spec)
    assert store.joined.replicated == ("=" + tag.hex(),)  # its set: the ~tag's logs it cannot read
    assert store.stats["blind_kept"] == 0  # nothing reached it live
    _link(net, store, alice)  # the store dials, as it does any peer it hears of
    assert store.stats["blind_replicated_in"] == 5
    kept = store.store.blind.held(tag)
    assert len(kept) == 5 and not any(b"secret line" in d for d in kept)
    assert {blind_id(d) for d in kept} == _set_of(alice, tag)
    if channel == ROOM:  # the very datagrams alice sent: one row per message, however many pass it on
        assert set(kept) <= {d for src, d, _ in net.sent if src == net.address(alice) and d[1] == Kind.PRIVATE}
    _link(net, alice, store)  # again, the other way: nothing new on either side
    assert store.stats["blind_replicated_in"] == 5 and len(store.store.blind.held(tag)) == 5
    del net.nodes[net.address(alice)]
    carol = net.add("carol", channels=(), passphrases={spec: PASS})
    carol.peers.static.clear()
    _link(net, carol, store)
    assert texts(carol.store, channel) == [f"secret line {i}" for i in range(5)]
    assert carol.stats["replicated_in"] == 5 and not [e for e in net.seen(carol) if isinstance(e, ev.DatagramRejected)]


def test_a_blind_store_and_a_member_each_get_what_the_other_lacks(net):
    alice, store, tag = _a_late_store(net, 3)
    _link(net, store, alice)
    del net.nodes[net.address(alice)]
    dave = net.add("dave", channels=(), passphrases={ROOM: PASS})  # never met alice
    dave.peers.static.clear()
    dave.say(ROOM, "dave was here", "text", net.now)
    kept_before = store.stats["blind_kept"]
    _link(net, dave, store)
    assert texts(dave.store, ROOM) == [*(f"secret line {i}" for i in range(3)), "dave was here"]
    assert store.stats["blind_replicated_in"] + store.stats["blind_kept"] - kept_before == 4
    assert len(store.store.blind.held(tag)) == 4


def test_garbage_a_blind_store_holds_is_dropped_by_members_without_breaking_catch_up(net):
    alice, store, tag = _a_late_store(net, 3)
    _link(net, store, alice)
    forged = bytes((1, Kind.PRIVATE)) + tag + bytes(range(12)) + b"not a member's datagram" * 2
    store.store.blind.keep(tag, "f" * 32, forged, net.now, 100)  # sent under the public tag by anyone
    del net.nodes[net.address(alice)]
    carol = net.add("carol", channels=(), passphrases={ROOM: PASS})
    carol.peers.static.clear()
    _link(net, carol, store)
    assert texts(carol.store, ROOM) == [f"secret line {i}" for i in range(3)]
    assert carol.stats["replication_undecryptable"] == 1
    (refused,) = [e for e in net.seen(carol) if isinstance(e, ev.DatagramRejected)]
    assert refused.kind == "undecryptable" and "replication entry" in refused.reason
    assert not [e for e in net.seen(carol) if isinstance(e, ev.ReplicationClosed)]


def test_members_replicate_a_private_channel_by_its_datagram_set_never_by_its_logs(net):
    """Its logs' items would name every author and how much each wrote."""
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    alice.say(ROOM, "one", "text", net.now)
    carol = net.add("carol", channels=(), passphrases={ROOM: PASS})
    (tag_name,) = alice.announced_channels
    assert alice.joined.replicated == ("=" + tag_name[1:],)  # as a blind store offers it
    carol.peers.static.clear()
    _link(net, carol, alice)
    (started,) = [e for e in net.seen(carol) if isinstance(e, ev.CatchupStarted)]
    assert started.channels == ("=" + tag_name[1:],)
    assert texts(carol.store, ROOM) == ["one"] and carol.stats["replicated_in"] == 1


def test_a_blind_store_keeps_the_messages_and_lets_sync_and_typing_pass(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    bob = net.add("bob", channels=(), passphrases={ROOM: PASS})
    tag_name = alice.announced_channels[0]
    store = net.add("store", channels=(tag_name,))
    for i in range(3):
        alice.typing(ROOM, net.now)
        net.run(4_000)  # typing notices, and sync messages on the sync timer
        alice.say(ROOM, f"line {i}", "text", net.now)
    alice.profile.set_away("lunch", net.now)
    net.run(60_000)
    kept = store.store.blind.held(bytes.fromhex(tag_name[1:]))
    messages = [SdsMessage.FromString(alice.envelopes.gate.open(d, ("10.0.0.9", 1), net.now).payload) for d in kept]
    assert sorted(Payload.decode(m.content).text if m.content and m.HasField("lamport_timestamp")
                  else "(sync or ephemeral)" for m in messages) == ["line 0", "line 1", "line 2"]
    assert store.stats["blind_passed"] >= 6  # the typing notices, the away notice, the sync messages
    del net.nodes[net.address(alice)], net.nodes[net.address(bob)]
    carol = net.add("carol", channels=(), passphrases={ROOM: PASS})
    net.run(30_000)
    assert texts(carol.store, ROOM) == ["line 0", "line 1", "line 2"]


def test_a_blind_store_serves_a_private_svs_channel_to_a_late_member(net):
    alice = net.add("alice", channels=(), passphrases={"hideout+svs": PASS})
    tag_name = alice.announced_channels[0]
    store = net.add("store", channels=(tag_name,))  # the blind store
    for i in range(3):
        alice.say("hideout", f"line {i}", "text", net.now)
        net.run(2_000)
    # pushed as the records every member can work out: a link has nothing to add either way
    tag = bytes.fromhex(tag_name[1:])
    assert {blind_id(d) for d in store.store.blind.held(tag)} == _set_of(alice, tag)
    _link(net, store, alice)
    assert store.stats["blind_replicated_in"] == 0
    del net.nodes[net.address(alice)]
    carol = net.add("carol", channels=(), passphrases={"hideout+svs": PASS})
    net.run(30_000)
    assert texts(carol.store, "hideout") == ["line 0", "line 1", "line 2"]


def test_a_blind_store_restarted_without_the_tag_still_keeps_announces_and_serves_it(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    tag_name = alice.announced_channels[0]
    store = net.add("store", channels=(tag_name,))
    alice.say(ROOM, "before the restart", "text", net.now)
    net.run(1_000)
    del net.nodes[net.address(store)]
    again = net.add("store-again", channels=(), store=store.store)  # as `serve` with no --channel
    assert again.announced_channels == (tag_name,) and not again.conversations
    alice.say(ROOM, "after the restart", "text", net.now)
    net.run(1_000)
    del net.nodes[net.address(alice)]
    carol = net.add("carol", channels=(), passphrases={ROOM: PASS})
    net.run(30_000)
    assert texts(carol.store, ROOM) == ["before the restart", "after the restart"]
    assert again.stats["blind_kept"] >= 1


def test_a_mailbox_is_a_role_for_one_start_not_a_channel_kept(net):
    from chat_app.runtime.mailbox import MAILBOX_LINK

    store = net.add("store", channels=(MAILBOX_LINK,))
    assert store.announced_channels == (MAILBOX_LINK,)
    del net.nodes[net.address(store)]
    assert net.add("store-again", channels=(), store=store.store).announced_channels == ()


def test_a_member_announcing_a_private_channel_by_its_tag_is_shown_in_it_by_name(net):
    alice = net.add("alice", channels=("general",), passphrases={ROOM: PASS})
    bob = net.add("bob", channels=("general",), passphrases={ROOM: PASS})
    eve = net.add("eve", channels=("general",))
    for rt in (alice, eve):  # what mDNS tells them of bob: his channels as others may see them
        rt.peer_announced(bob.peer_id, "bob", [net.address(bob)[0]], net.address(bob)[1], bob.announced_channels,
                          net.now, bob.identity.public_key)
    net.pump()
    tag = next(c for c in bob.announced_channels if c.startswith("~"))
    (seen_by_alice,) = [e for e in net.seen(alice) if isinstance(e, ev.PeerUpdated | ev.PeerJoined)
                        and e.peer_id == bob.peer_id and e.channels is not None]
    (seen_by_eve,) = [e for e in net.seen(eve) if isinstance(e, ev.PeerUpdated | ev.PeerJoined)
                      and e.peer_id == bob.peer_id and e.channels is not None]
    assert set(seen_by_alice.channels) == {"general", ROOM}
    assert set(seen_by_eve.channels) == {"general", tag}  # without the passphrase: the tag only
