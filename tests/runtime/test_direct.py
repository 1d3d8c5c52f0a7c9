"""Direct messages through the runtime: real MVDS engines, real SQLite files,
sealed datagrams, an in-memory network with a fake clock."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import pytest

from chat_app import events as ev
from chat_app.crypto import Kind, seal
from chat_app.crypto.sealed import seal_to
from chat_app.runtime import Runtime
from chat_app.runtime.direct import MVDS_PAYLOAD, group_id
from chat_app.store import Store

from .conftest import Net


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def introduce(net: Net, *runtimes: Runtime) -> None:
    """What mDNS does on a LAN: everyone learns everyone's nick and key."""
    for rt in runtimes:
        for other in runtimes:
            if other is not rt:
                address = net.address(other)
                rt.peer_announced(other.peer_id, other.nick, [address[0]], address[1], ("general",), net.now,
                                  key=other.identity.public_key)
    net.pump()


def dm_texts(rt: Runtime, other: Runtime) -> list[str]:
    return [m.text for m in rt.store.messages(f"@{other.peer_id}")]


def received(net: Net, rt: Runtime) -> list[str]:
    return [e.text for e in of(net.seen(rt), ev.DmDelivered) if not e.own]


def test_a_direct_message_is_delivered_acknowledged_and_stored_on_both_sides(net):
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    mid = alice.direct.send("bob", "hello bob", "text", alice.nick, net.now)
    net.run(2_000)
    assert received(net, bob) == ["hello bob"]
    (delivered,) = [e for e in of(net.seen(bob), ev.DmDelivered)]
    assert (delivered.message_id, delivered.sender_id, delivered.channel) == (mid, alice.peer_id, f"@{alice.peer_id}")
    assert [a.message_id for a in of(net.seen(alice), ev.DmAcknowledged)] == [mid]
    (row,) = alice.store.messages(f"@{bob.peer_id}")
    assert (row.own, row.ack, row.text) == (True, "acknowledged", "hello bob")
    assert dm_texts(bob, alice) == ["hello bob"]
    bob.direct.send("alice", "hi alice", "text", bob.nick, net.now)
    net.run(2_000)
    assert received(net, alice) == ["hi alice"]
    assert dm_texts(alice, bob) == dm_texts(bob, alice) == ["hello bob", "hi alice"]


def test_both_sides_compute_the_same_group_id(net):
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    alice.direct.send("bob", "x", "text", alice.nick, net.now)
    net.run(1_000)
    a = alice.direct.conversations[bob.peer_id].group
    b = bob.direct.conversations[alice.peer_id].group
    assert a == b == group_id(alice.identity.public_key, bob.identity.public_key)


def test_thirty_percent_loss_delivers_every_message_once_in_order(tmp_path):
    net = Net(tmp_path, loss=0.3, seed=7)
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    sent = [f"m{i}" for i in range(30)]
    for text in sent:
        alice.direct.send("bob", text, "text", alice.nick, net.now)
        net.run(200)
    net.run(60_000)
    assert received(net, bob) == sent
    assert dm_texts(bob, alice) == sent
    assert len(of(net.seen(alice), ev.DmAcknowledged)) == len(sent)
    assert {m.ack for m in alice.store.messages(f"@{bob.peer_id}")} == {"acknowledged"}


def take_down(net: Net, rt: Runtime) -> tuple[str, int]:
    address = net.address(rt)
    del net.nodes[address]
    rt.store.close()
    return address


def bring_back(net: Net, address, name: str) -> Runtime:
    rt = Runtime(Store(net.tmp_path / name / "db.sqlite3"), nick=name, static_peers=list(net.nodes))
    net.nodes[address] = rt
    net.events[address] = []
    rt.start(("general",), address[1], [address[0]], net.now)
    net.pump()
    return rt


def test_a_recipient_away_gets_everything_once_in_order_when_it_comes_back(net):
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    alice.direct.send("bob", "before", "text", alice.nick, net.now)
    net.run(2_000)
    address = take_down(net, bob)
    for i in range(5):
        alice.direct.send("bob", f"away {i}", "text", alice.nick, net.now)
        net.run(1_000)
    net.run(120_000)  # two minutes away
    assert not of(net.seen(alice), ev.DmAcknowledged)[1:]
    bob = bring_back(net, address, "bob")
    net.run(3_000)  # back: its sync is a sign of life, the backoff resets, no waiting for the next epoch
    assert dm_texts(bob, alice) == ["before"] + [f"away {i}" for i in range(5)]
    assert received(net, bob) == [f"away {i}" for i in range(5)]
    assert alice.direct.stats["comeback"] >= 1


def test_a_sender_restarted_mid_retransmission_resumes_it(net):
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    bob_address = take_down(net, bob)
    for i in range(3):
        alice.direct.send("bob", f"m{i}", "text", alice.nick, net.now)
        net.run(500)
    alice_address = take_down(net, alice)
    net.run(5_000)
    alice = bring_back(net, alice_address, "alice")  # nothing in memory: keys, state and address from the store
    bob = bring_back(net, bob_address, "bob")
    net.run(10_000)
    assert dm_texts(bob, alice) == ["m0", "m1", "m2"]
    assert {m.ack for m in alice.store.messages(f"@{bob.peer_id}")} == {"acknowledged"}
    assert alice.direct.conversations[bob.peer_id].engine.waiting(bob.peer_id) == 0


def test_no_plaintext_on_the_wire_and_a_third_member_gets_nothing(net):
    alice, bob, carol = net.add("alice"), net.add("bob"), net.add("carol")
    introduce(net, alice, bob, carol)
    secret = "the launch code is 7741"
    alice.direct.send("bob", secret, "text", alice.nick, net.now)
    net.run(3_000)
    assert received(net, bob) == [secret]
    assert not any(secret.encode() in data for _, data, _ in net.sent)
    carol_address = net.address(carol)
    assert not [data for _, data, dst in net.sent if dst == carol_address and data[1] == Kind.MVDS]
    assert not of(net.seen(carol), ev.DmDelivered)
    assert not carol.store.messages(f"@{alice.peer_id}") and not carol.store.messages(f"@{bob.peer_id}")


def test_a_datagram_sealed_by_someone_else_or_altered_is_refused(net):
    alice, bob, eve = net.add("alice"), net.add("bob"), net.add("eve")
    introduce(net, alice, bob, eve)
    alice.direct.send("bob", "real", "text", alice.nick, net.now)
    net.run(2_000)
    # eve seals to bob under her own key, a payload claiming to be alice's conversation: it opens only as eve's
    own = [data for src, data, dst in net.sent if src == net.address(alice) and data[1] == Kind.MVDS]
    altered = bytearray(own[0])
    altered[60] ^= 1
    bob.datagram_received(bytes(altered), net.address(alice), net.now)
    assert bob.envelopes.stats["bad_signature"] == 1
    person = bob.direct.persons[alice.peer_id]
    forged = seal_to(eve.identity, bob.identity.public_key, bob.identity.exchange_public_key, bytes((MVDS_PAYLOAD,)))
    # signed by alice's key it is not: eve can only sign as eve, and then opens with eve's keys, not alice's
    bob.datagram_received(seal(eve.identity, Kind.MVDS, forged[:-1] + bytes((forged[-1] ^ 1,))), net.address(eve),
                          net.now)
    assert bob.direct.stats["dm_undecryptable"] == 1
    assert person.exchange_key == alice.identity.exchange_public_key
    assert received(net, bob) == ["real"]


@pytest.mark.parametrize("send_typing", [True, False])
def test_typing_in_a_direct_conversation_reaches_only_the_other_side(net, send_typing):
    """Through the runtime's face, as the node calls it: ``typing`` takes a
    direct conversation's name as well as a channel's, and keeps quiet when
    the user chose not to tell."""
    alice, bob, carol = net.add("alice", send_typing=send_typing), net.add("bob"), net.add("carol")
    introduce(net, alice, bob, carol)
    assert alice.open_direct("bob", net.now) == f"@{bob.peer_id}"
    net.run(1_000)
    alice.typing(f"@{bob.peer_id}", net.now)
    net.pump()
    told = [(f"@{alice.peer_id}", "alice")] if send_typing else []
    assert [(t.channel, t.nick) for t in of(net.seen(bob), ev.Typing)] == told
    assert not of(net.seen(carol), ev.Typing)


def test_an_unknown_nick_is_an_error_not_a_conversation(net):
    alice = net.add("alice")
    assert alice.direct.send("nobody", "hi", "text", alice.nick, net.now) is None
    assert "nobody called nobody" in of(alice.events(), ev.Error)[0].reason
    assert not alice.direct.conversations


def test_a_failed_commit_undoes_the_step_and_sends_nothing(net):
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    alice.direct.send("bob", "kept", "text", alice.nick, net.now)
    net.run(2_000)
    real = alice.store.direct.commit

    def full_disk(*args, **kwargs):
        raise OSError("disk full")

    alice.store.direct.commit = full_disk
    alice.datagrams_to_send()
    assert alice.direct.send("bob", "lost", "text", alice.nick, net.now) is None
    assert not [d for d, _ in alice.datagrams_to_send() if d[1] == 5]
    assert "could not store a step" in of(alice.events(), ev.Error)[0].reason
    alice.store.direct.commit = real
    net.run(5_000)
    assert dm_texts(bob, alice) == dm_texts(alice, bob) == ["kept"]
    assert alice.direct.conversations[bob.peer_id].engine.waiting(bob.peer_id) == 0


def test_an_export_holds_the_direct_conversation_beside_the_channels(net, tmp_path):
    import json

    from chat_app.export import conversation_id, export

    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    alice.say("general", "in the open", "text", net.now)
    for text in ("one", "two"):
        alice.direct.send("bob", text, "text", alice.nick, net.now)
        net.run(1_000)
    out = tmp_path / "bob.jsonl"
    assert export(bob.store, bob.peer_id, out, "jsonl") == 3
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    direct = [r for r in rows if r["channel_id"] == conversation_id(bob.peer_id, alice.peer_id)]
    assert [(r["content"], r["pos"], r["causal_history"]) for r in direct] == [("one", 0, []), ("two", 1, [])]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(loss=st.floats(0.0, 0.5), seed=st.integers(0, 10_000), count=st.integers(1, 8),
       gaps=st.lists(st.integers(0, 3_000), min_size=8, max_size=8))
def test_any_loss_delivers_each_message_once_in_order_and_acknowledges_it(tmp_path_factory, loss, seed, count, gaps):
    net = Net(tmp_path_factory.mktemp("dm"), loss=loss, seed=seed)
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    sent = [f"m{i}" for i in range(count)]
    for text, gap in zip(sent, gaps, strict=False):
        alice.direct.send("bob", text, "text", alice.nick, net.now)
        net.run(gap)
    net.loss = 0.0  # the network heals: everything must arrive, once
    net.run(45_000)
    assert received(net, bob) == sent
    assert sorted(a.message_id for a in of(net.seen(alice), ev.DmAcknowledged)) == \
        sorted(m.message_id for m in alice.store.messages(f"@{bob.peer_id}"))


def test_a_recipient_who_lost_our_key_statement_gets_it_and_the_message_within_seconds(net):
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    del bob.direct.persons.persons[alice.peer_id]  # as if alice's statement had been lost on the way
    alice.direct.send("bob", "can you read me?", "text", alice.nick, net.now)
    net.run(5_000)  # not the next capped retransmission, tens of seconds away
    assert received(net, bob) == ["can you read me?"]
    assert bob.direct.stats["dm_unknown_key"] >= 1


def test_a_recipient_heard_on_a_channel_gets_even_the_first_message_after_a_pause_in_batch_mode(net):
    """The engine sends batch (one hop) to a peer it knows is there and
    interactive (offer, request, message: three) to one away. What tells it
    bob is there is every sign of life the runtime gets from him - here the
    channel's keep-alives - not only his direct messages."""
    alice, bob = net.add("alice"), net.add("bob")
    introduce(net, alice, bob)
    net.run(1_000)
    alice.direct.send("bob", "first", "text", alice.nick, net.now)
    net.run(90_000)  # no direct message for 90 s; the channel's keep-alives flow
    alice.direct.send("bob", "after a pause", "text", alice.nick, net.now)
    net.run(5_000)
    assert received(net, bob) == ["first", "after a pause"]
    engine = alice.direct.conversations[bob.peer_id].engine
    assert (engine.stats["sent_batch"], engine.stats["sent_interactive"]) == (2, 0)
