"""The runtime with a fake clock and an in-memory network: real engines, real
SQLite files, no sockets and no asyncio."""

from __future__ import annotations

import cbor2
import pytest

from chat_app import events as ev
from chat_app.crypto import Identity, Kind, seal
from chat_app.net.frames import encode_fetch
from chat_app.runtime.catchup import ROUND_EVERY_MS
from chat_app.runtime.fetching import BEHIND, FETCH_GRACE_MS, FETCH_RETRY_MS
from chat_app.payload import Payload, PayloadError
from chat_app.peers import PROBE_MS
from chat_app.runtime import Runtime
from chat_app.store import Store
from sync.sds import Channel, Config

from .conftest import T0, Net, one_lost_then_named, texts


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_two_peers_hold_the_same_log(net):
    alice, bob = net.add("alice"), net.add("bob")
    for i in range(5):
        alice.say("general", f"a{i}", "text", net.now)
        bob.say("general", f"b{i}", "text", net.now)
        net.run(300)
    net.run(5_000)
    assert len(texts(alice.store)) == 10
    assert texts(alice.store) == texts(bob.store)
    acks = of(net.seen(alice), ev.MessageAcknowledged)
    assert {a.message_id for a in acks if a.state == "acknowledged"}  # bob's messages acknowledged ours


def test_the_state_stored_step_by_step_is_the_whole_state(tmp_path):
    net = Net(tmp_path, loss=0.3)
    alice, bob = net.add("alice"), net.add("bob")
    for i in range(40):
        alice.say("general", f"a{i}", "text", net.now)
        if i % 3 == 0:
            bob.say("general", f"b{i}", "text", net.now)
        net.run(500)
    for rt in (alice, bob):
        engine = rt.conversations["general"].engine
        assert rt.store.states.load("general") == engine.export_state(include_log=False)
        assert engine.export_state(include_log=False)["outgoing"]  # something is still unacknowledged


def test_a_step_is_stored_before_its_datagrams_are_queued(net):
    alice = net.add("alice")
    net.add("bob")
    mid = alice.say("general", "hello", "text", net.now)
    queued = alice.datagrams_to_send()
    assert queued and alice.store.wire("general", mid) is not None
    assert all(data for data, _ in queued)


class FlakyStore(Store):
    """A real store whose next commit fails when armed (a full disk, say)."""

    fail_next = False

    def commit_step(self, *args, **kwargs):
        if self.fail_next:
            self.fail_next = False
            raise OSError("disk full")
        return super().commit_step(*args, **kwargs)


def test_a_failed_commit_leaves_engine_and_store_as_they_were(net, tmp_path):
    store = FlakyStore(tmp_path / "alice.sqlite3")
    alice = net.add("alice", store=store)
    bob = net.add("bob")
    bob.say("general", "first", "text", net.now)
    net.pump()
    before = alice.conversations["general"].engine.export_state(include_log=False)
    log_before = list(alice.conversations["general"].engine.log)
    store.fail_next = True
    bob.say("general", "second", "text", net.now)
    (data, _), *_ = bob.datagrams_to_send()
    alice.datagram_received(data, net.address(bob), net.now)
    assert alice.datagrams_to_send() == []  # nothing of the failed step leaves
    assert [e for e in alice.events() if isinstance(e, ev.Error)]
    engine = alice.conversations["general"].engine
    assert engine.export_state(include_log=False) == before
    assert list(engine.log) == log_before
    assert texts(store) == ["first"]
    assert alice.stats["step_failed"] == 1
    net.run(8_000)  # bob resends what alice never acknowledged
    assert texts(store) == ["first", "second"] == texts(bob.store)


def test_a_failed_commit_of_our_own_message_is_not_sent_and_not_counted(net, tmp_path):
    store = FlakyStore(tmp_path / "alice.sqlite3")
    alice = net.add("alice", store=store)
    bob = net.add("bob")
    store.fail_next = True
    assert alice.say("general", "lost to the disk", "text", net.now) is None
    assert alice.datagrams_to_send() == []
    assert alice.conversations["general"].seq == 0
    alice.say("general", "kept", "text", net.now)
    net.run(5_000)
    assert texts(bob.store) == ["kept"] and [m.seq for m in bob.store.messages("general")] == [1]


EVE = Identity.generate()


def signed(data: bytes, kind: Kind = Kind.SDS) -> bytes:
    """A datagram as a peer sends it: in an envelope signed by eve."""
    return seal(EVE, kind, data)


def _eve_datagrams(payloads: list[dict]) -> list[bytes]:
    eve = Channel("general", EVE.sender_id, T0)
    out = []
    for i, fields in enumerate(payloads):
        eve.send(cbor2.dumps(fields), T0 + i)
        out += [signed(o.data) for o in eve.datagrams_to_send(T0 + i)]
    return out


def test_payload_fields_sqlite_cannot_hold_are_refused_before_delivery(tmp_path):
    with pytest.raises(PayloadError):
        Payload("text", "eve", "x", 2**64)
    net = Net(tmp_path)
    alice = net.add("alice", config=Config(lost_after_ms=20_000))
    huge, fine = _eve_datagrams([{"kind": "text", "nick": "eve", "text": "boom", "seq": 2**64, "sent_at": T0},
                                 {"kind": "text", "nick": "eve", "text": "after", "seq": 2, "sent_at": T0}])
    alice.datagram_received(huge, ("10.0.0.9", 1), net.now)
    refused = of(alice.events(), ev.DatagramRejected)
    assert refused and refused[0].kind == "payload" and "2^63" in refused[0].reason
    alice.datagram_received(fine, ("10.0.0.9", 1), net.now)
    net.run(30_000)  # the refused one is given up as lost; what followed it is delivered
    assert texts(alice.store) == ["after"]
    assert alice.stats["step_failed"] == 0


@pytest.mark.parametrize("fields", [
    {"kind": "text", "nick": "eve", "text": "x", "seq": 1, "sent_at": -1},
    {"kind": "typing", "nick": "eve"},
    {"kind": "text", "nick": "", "text": "x", "seq": 1},
    "not a map",
])
def test_chat_messages_without_a_valid_payload_never_reach_the_engine(net, fields):
    alice = net.add("alice")
    (data,) = _eve_datagrams([fields])
    alice.datagram_received(data, ("10.0.0.9", 1), net.now)
    net.run(1_000)
    assert of(net.seen(alice), ev.DatagramRejected) and texts(alice.store) == []
    assert not alice.conversations["general"].engine.log


def test_datagrams_are_routed_by_their_type_tag(net):
    alice = net.add("alice")
    mid = alice.say("general", "stored", "text", net.now)
    net.pump()
    alice.datagram_received(signed(encode_fetch("general", [mid]), Kind.FETCH), ("10.0.0.9", 1), net.now)
    answers = alice.datagrams_to_send()
    assert answers == [(alice.store.wire("general", mid), ("10.0.0.9", 1))]
    alice.datagram_received(signed(b"\x00\x07whatever", Kind.FETCH), ("10.0.0.9", 1), net.now)
    alice.datagram_received(signed(b"\x00", Kind.FETCH), ("10.0.0.9", 1), net.now)
    reasons = [e.reason for e in of(alice.events(), ev.DatagramRejected)]
    assert reasons == ["unknown control frame type 07", "unknown control frame type none"]
    assert alice.stats["malformed"] == 2


def test_a_missing_message_is_fetched_from_its_author(tmp_path):
    net = Net(tmp_path)
    alice, bob = net.add("alice"), net.add("bob")
    net.loss = 1.0  # alice's first message reaches nobody
    alice.say("general", "one", "text", net.now)
    net.pump()
    net.loss = 0.0
    alice.say("general", "two", "text", net.now)  # names "one" in its causal history
    net.pump()
    net.run(3_000)
    fetches = [(src, dst) for src, data, dst in net.sent if data[1] == Kind.FETCH]
    assert (net.address(bob), net.address(alice)) in fetches
    assert texts(bob.store) == ["one", "two"]


def test_a_missing_message_is_replicated_for_with_its_author_first_and_with_everyone_when_a_fetch_failed(tmp_path):
    """In a busy channel most missing messages are on their way: a fetch
    costs one datagram, a replication with every peer carries them all
    again. So the first sign brings a fetch and a replication with the
    author only; everyone else is asked once the fetch has not helped."""
    net = Net(tmp_path)
    alice, bob, carol = net.add("alice"), net.add("bob"), net.add("carol")
    for other in (alice, carol):  # found by mDNS: a first catch-up, then the throttle
        bob.peer_announced(other.peer_id, other.nick, [net.address(other)[0]], net.address(other)[1],
                           ("general",), net.now)
    net.run(6_000)
    for other in (alice, carol):
        bob.dial_ended(net.address(other))
    net.dialed.clear()
    one_lost_then_named(net, alice, bob)
    assert bob.stats["fetch_sent"] == 1 and bob.dials() == [net.address(alice)]
    bob.dial_ended(net.address(alice))  # this network never connects the dials it takes
    net.run(FETCH_RETRY_MS + 100)  # the fetch is lost too: "one" is asked for again
    assert bob.stats["fetch_sent"] == 2 and (net.address(bob), net.address(carol)) in net.dialed


def test_a_peer_that_is_behind_waits_a_second_before_asking_for_what_is_missing(tmp_path):
    """Datagrams read in a large batch say we are behind: a missing message
    is then most likely in our own queue, and asking at once would have its
    author send it twice."""
    net = Net(tmp_path)
    alice, bob = net.add("alice"), net.add("bob")
    net.loss = 1.0
    alice.say("general", "one", "text", net.now)
    net.pump()
    alice.say("general", "two", "text", net.now)  # names "one"
    two = [data for data, dst in alice.datagrams_to_send() if dst == net.address(bob)]
    noise = [(b"\x00\x09junk", ("10.0.0.9", 1))] * (BEHIND - 1)  # refused, but read in the same batch
    bob.datagrams_received([(two[0], net.address(alice)), *noise], net.now)
    assert bob.stats["fetch_sent"] == 0
    net.run(FETCH_GRACE_MS + 100)  # still missing a second later
    assert bob.stats["fetch_sent"] == 1


def test_a_gap_in_an_authors_numbers_starts_a_catch_up_even_when_nothing_names_the_lost_messages(tmp_path):
    net = Net(tmp_path)
    alice = net.add("alice", config=Config(causal_history_size=0))  # her messages name no earlier ones
    bob = net.add("bob")
    bob.peer_announced(alice.peer_id, "alice", [net.address(alice)[0]], net.address(alice)[1], ("general",),
                       net.now)  # found by mDNS
    net.loss = 1.0
    alice.say("general", "one", "text", net.now)
    alice.say("general", "two", "text", net.now)
    net.run(6_000)  # past the catch-up throttle; their resends are lost too
    net.loss = 0.0
    bob.dial_ended(net.address(alice))  # this network never connects the dials it takes
    bob.dials()
    alice.say("general", "three", "text", net.now)
    for data, dst in alice.datagrams_to_send():
        if dst == net.address(bob):
            bob.datagram_received(data, net.address(alice), net.now)
    assert texts(bob.store)[-1] == "three" and "one" not in texts(bob.store)
    assert bob.stats["seq_gaps"] == 1
    assert net.address(alice) in bob.dials()  # replication fetches by author and height
    _link(net, bob, alice)
    assert texts(bob.store) == ["one", "two", "three"]


def test_each_round_replicates_with_one_peer_in_turn_when_nothing_else_asks(net):
    """Anti-entropy: with nothing missing and nobody new, a peer still
    replicates, once a round, with the peer it replicated with longest ago."""
    peers = [net.add(name) for name in ("alice", "bob", "carol")]
    net.run(ROUND_EVERY_MS - 1_000)  # the dials of meeting each other are over
    for rt in peers:
        for other in peers:
            rt.dial_ended(net.address(other))  # this network never connects the dials it takes
    net.dialed.clear()
    net.run(1_000)
    first = dict(net.dialed)
    assert len(net.dialed) == len(first) == 3  # one each
    net.run(ROUND_EVERY_MS - 100)
    assert len(net.dialed) == 3  # nothing between rounds
    for rt in peers:
        rt.dial_ended(first[net.address(rt)])
    net.run(100)
    second = dict(net.dialed[3:])
    for rt in peers:  # the other one's turn
        me = net.address(rt)
        assert {first[me], second[me]} == {net.address(p) for p in peers} - {me}


def test_a_peer_whose_first_address_passes_nothing_is_reached_at_its_next_within_one_probe(tmp_path):
    """Each announces an IPv4 and an IPv6 address and only IPv6 gets through
    (a host that drops IPv4). Each side tries the other's IPv4 address first,
    moves on after PROBE_MS and introduces itself at the next one: heard
    there, it is moved there, and each answers the other well before any
    keep-alive would have found the way (the first is due ~20 s in)."""
    v4 = {"alice": "192.0.2.1", "bob": "192.0.2.2"}
    v6 = {"alice": "2001:db8::1", "bob": "2001:db8::2"}
    now = T0
    rts = {name: Runtime(Store(tmp_path / f"{name}.sqlite3"), nick=name) for name in v4}
    for name, rt in rts.items():
        rt.start(["general"], 7000, [v4[name], v6[name]], now)
    for name, rt in rts.items():
        other = rts["bob" if name == "alice" else "alice"]
        rt.peer_announced(other.peer_id, other.nick, [v4[other.nick], v6[other.nick]], 7000,
                          other.discovery_names, now)
        assert rt.peers.get(other.peer_id).address == (v4[other.nick], 7000)  # IPv4 is tried first
    at = {(v6[name], 7000): rt for name, rt in rts.items()}  # the only addresses that receive
    while now < T0 + PROBE_MS + 1_000:
        now += 100
        for name, rt in rts.items():
            if (deadline := rt.get_timer()) is not None and deadline <= now:
                rt.handle_timer(now)
            rt.dials()
            for data, dst in rt.datagrams_to_send():
                if dst in at:
                    at[dst].datagram_received(data, (v6[name], 7000), now)
    for name, rt in rts.items():
        other = rts["bob" if name == "alice" else "alice"]
        seen = rt.peers.get(other.peer_id)
        assert seen.address == (v6[other.nick], 7000) and seen.answers


def test_typing_shows_once_then_expires(net):
    alice, bob = net.add("alice"), net.add("bob")
    alice.typing("general", net.now)
    alice.typing("general", net.now + 1)  # too soon: not sent again
    net.pump()
    assert [(e.peer_id, e.nick) for e in of(net.seen(bob), ev.Typing)] == [(alice.peer_id, "alice")]
    net.run(7_000)
    assert [e.peer_id for e in of(net.seen(bob), ev.TypingStopped)] == [alice.peer_id]


def test_a_silent_peer_is_dropped_and_a_leaving_one_at_once(tmp_path):
    net = Net(tmp_path)
    alice, bob, carol = net.add("alice"), net.add("bob"), net.add("carol")
    # that is how they are heard: a sync is checked every 10-13 s and sent at
    # the latest once 20 s have passed since the last, so within 26 s
    net.run(27_000)
    assert {e.peer_id for e in of(net.seen(alice), ev.PeerJoined)} == {bob.peer_id, carol.peer_id}
    carol.leave(net.now)
    net.pump()
    assert [e.peer_id for e in of(net.seen(alice), ev.PeerLeft)] == [carol.peer_id]
    del net.nodes[net.address(bob)]  # bob crashes: no goodbye
    net.run(50_000)
    assert [e.peer_id for e in of(net.seen(alice), ev.PeerLeft)] == [carol.peer_id, bob.peer_id]


def _link(net: Net, dialer, listener) -> None:
    """Run one replication session between two runtimes over an in-memory
    stream, answering their store reads at once."""
    a_conn = dialer.stream_opened(net.address(listener), initiator=True, now=net.now)
    b_conn = listener.stream_opened(net.address(dialer), initiator=False, now=net.now)
    ends = [(dialer, a_conn, listener, b_conn), (listener, b_conn, dialer, a_conn)]
    for _ in range(100):
        moved = False
        for rt, conn, other, other_conn in ends:
            for wanted_conn, wanted in rt.reads():
                rt.store_answered(wanted_conn, wanted, rt.read_wanted(rt.store, wanted), net.now)
                moved = True
            for out in conn.datagrams_to_send(net.now):
                moved = True
                other.stream_frames(other_conn, [out.data], net.now)
        if not moved:
            break
    net.pump()


def test_a_peer_that_was_away_catches_up_through_replication(tmp_path):
    net = Net(tmp_path)
    alice, bob = net.add("alice"), net.add("bob")
    carol = net.add("carol")
    away = net.address(carol)
    del net.nodes[away]  # carol is away: she hears nothing
    for i in range(30):
        alice.say("general", f"a{i}", "text", net.now)
        bob.say("general", f"b{i}", "text", net.now)
        net.pump()
    net.nodes[away] = carol
    assert texts(carol.store) == [] and len(texts(alice.store)) == 60
    _link(net, carol, alice)
    assert len(texts(carol.store)) == 60
    assert texts(carol.store) == texts(alice.store)
    finished = of(net.seen(carol), ev.CatchupFinished)
    assert finished and finished[-1].received == 60 and finished[-1].state == "done"


def test_each_datagram_is_parsed_once_by_routing_not_again_by_the_engine(net, monkeypatch):
    import sync.sds.channel

    parsed_by_engine = []
    real_checked = sync.sds.channel.checked
    monkeypatch.setattr(sync.sds.channel, "checked", lambda data, config: parsed_by_engine.append(data)
                        or real_checked(data, config))
    alice, bob = net.add("alice"), net.add("bob")
    for i in range(3):
        alice.say("general", f"a{i}", "text", net.now)
        net.run(300)
    assert texts(bob.store) == ["a0", "a1", "a2"]
    assert bob.stats["datagrams_in"] >= 3 and parsed_by_engine == []


def test_a_replicated_entry_is_parsed_once_by_its_validation_not_again_by_the_engine(tmp_path, monkeypatch):
    import sync.sds.channel

    net = Net(tmp_path)
    alice, carol = net.add("alice"), net.add("carol")
    away = net.address(carol)
    del net.nodes[away]
    for i in range(5):
        alice.say("general", f"a{i}", "text", net.now)
        net.pump()
    net.nodes[away] = carol
    parsed_by_engine = []
    real_checked = sync.sds.channel.checked
    monkeypatch.setattr(sync.sds.channel, "checked", lambda data, config: parsed_by_engine.append(data)
                        or real_checked(data, config))
    _link(net, carol, alice)
    assert texts(carol.store) == [f"a{i}" for i in range(5)] and carol.stats["replicated_in"] == 5
    assert parsed_by_engine == []
