"""SVS channels in the runtime: real engines, real SQLite files, an
in-memory network with a fake clock (``conftest.Net``)."""

from __future__ import annotations

import pytest

from chat_app import events as ev
from chat_app.crypto import Kind
from chat_app.runtime import Runtime
from chat_app.runtime.channels import SVS_NAMES_KEPT
from chat_app.runtime.fetching import BEHIND
from chat_app.runtime.svs_conversation import GAP_GRACE_MAX_MS, GAP_GRACE_MS, SvsConversation
from chat_app.store import Store
from chat_app.tui.history import row_from_stored
from chat_app.tui.widgets.message_lines import MessageRenderer
from sync.svs import Producer, packets

from .conftest import Net, texts
from .test_runtime import FlakyStore


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def log_of(rt: Runtime, channel: str = "general") -> list[tuple[int, str, str]]:
    return [(m.lamport, m.message_id, m.text) for m in rt.store.messages(channel)]


@pytest.fixture
def svs_net(tmp_path):
    return Net(tmp_path)


def test_a_channel_marked_svs_runs_on_svs_and_its_datagrams_are_svs_envelopes(svs_net):
    alice = svs_net.add("alice", channels=("general+svs",))
    bob = svs_net.add("bob", channels=("general+svs",))
    assert isinstance(alice.conversations["general"], SvsConversation)
    assert alice.store.protocol("general") == "svs" and alice.svs_channels == ("general",)
    alice.say("general", "hello over svs", "text", svs_net.now)
    svs_net.run(1_000)
    assert texts(bob.store) == ["hello over svs"]
    kinds = {data[1] for src, data, _ in svs_net.sent}
    assert Kind.SVS in kinds and Kind.SDS not in kinds  # no SDS sync or chat message: only SVS packets


def test_a_failed_commit_on_an_svs_channel_sends_nothing_and_the_message_comes_again(svs_net, tmp_path):
    store = FlakyStore(tmp_path / "alice.sqlite3")
    alice = svs_net.add("alice", channels=("general+svs",), store=store)
    bob = svs_net.add("bob", channels=("general+svs",))
    bob.say("general", "first", "text", svs_net.now)
    svs_net.run(1_000)
    store.fail_next = True
    bob.say("general", "second", "text", svs_net.now)
    for data, _ in bob.datagrams_to_send():
        alice.datagram_received(data, svs_net.address(bob), svs_net.now)
    assert alice.datagrams_to_send() == []  # nothing of the failed step leaves
    assert [e for e in alice.events() if isinstance(e, ev.Error)] and alice.stats["step_failed"] == 1
    assert texts(store) == ["first"]
    svs_net.run(10_000)  # the engine is back where the store is: it fetches "second" again
    assert texts(store) == ["first", "second"] == texts(bob.store)


@pytest.mark.slow
def test_members_hold_the_same_log_in_lamport_order_under_loss(tmp_path):
    net = Net(tmp_path, loss=0.3, seed=7)
    peers = [net.add(name, channels=("general+svs",)) for name in ("alice", "bob", "carol")]
    for i in range(30):
        peers[i % 3].say("general", f"m{i}", "text", net.now)
        net.run(300)
    # A gap shows at the author's next publication or the next periodic sync interest (30 s), then is
    # fetched with retries backing off to 8 s; at 30% loss each way a fetch takes a few tries.
    for _ in range(36):
        if all(rt.store.count("general") == 30 for rt in peers):
            break
        net.run(5_000)
    logs = [log_of(rt) for rt in peers]
    assert len(logs[0]) == 30
    assert logs[0] == logs[1] == logs[2]
    assert logs[0] == sorted(logs[0])  # (lamport, message id) order
    for rt in peers:  # each author's messages stored in sequence order, numbered from 1 without a gap
        for author in {m.sender_id for m in rt.store.messages("general")}:
            seqs = [m.seq for m in sorted(rt.store.messages("general"), key=lambda m: m.delivered_at)
                    if m.sender_id == author]
            assert seqs == list(range(1, len(seqs) + 1))


def test_sequence_numbers_survive_a_restart_and_are_stored_before_the_publication_leaves(tmp_path):
    net = Net(tmp_path)
    alice = net.add("alice", channels=("general+svs",))
    net.add("bob", channels=("general+svs",))
    alice.say("general", "one", "text", net.now)
    queued = alice.datagrams_to_send()
    assert queued and alice.store.last_seq("general", alice.peer_id) == 1  # stored before it is sent
    saved = alice.store.states.load("general")["svs"]["vector"]
    assert [seq for node, _, seq in saved if node.endswith(alice.peer_id.encode())] == [1]
    alice.say("general", "two", "text", net.now)
    net.pump()
    store_path = alice.store.path
    alice.store.close()
    del net.nodes[net.address(alice)]
    again = Runtime(Store(store_path), nick="alice")
    again.start([], 7100, ["10.0.0.1"], net.now)  # joined channels come back with their protocol
    assert isinstance(again.conversations["general"], SvsConversation)
    again.say("general", "three", "text", net.now)
    assert [m.seq for m in again.store.messages("general")] == [1, 2, 3]


def test_typing_travels_in_an_svs_channel(svs_net):
    alice = svs_net.add("alice", channels=("general+svs",))
    bob = svs_net.add("bob", channels=("general+svs",))
    alice.typing("general", svs_net.now)
    svs_net.pump()
    assert [t.nick for t in of(svs_net.seen(bob), ev.Typing)] == ["alice"]


def test_a_joiner_uses_the_protocol_the_channel_was_announced_with(svs_net):
    alice = svs_net.add("alice", channels=("general+svs",))
    bob = svs_net.add("bob", channels=())
    bob.peer_announced(alice.peer_id, "alice", ["10.0.0.1"], 7000, ("general",), svs_net.now, svs=alice.svs_channels)
    assert bob.join("#general", svs_net.now)
    assert bob.store.protocol("general") == "svs"
    alice.say("general", "found you", "text", svs_net.now)
    svs_net.run(1_000)
    assert texts(bob.store) == ["found you"]


def test_a_channel_with_history_cannot_change_protocol(svs_net):
    alice = svs_net.add("alice")
    alice.say("general", "sds history", "text", svs_net.now)
    alice.part("general")
    assert not alice.join("#general+svs", svs_net.now)
    assert "runs on SDS here" in of(alice.events(), ev.Error)[-1].reason


def test_an_svs_and_an_sds_channel_side_by_side(svs_net):
    alice = svs_net.add("alice", channels=("general", "ops+svs"))
    bob = svs_net.add("bob", channels=("general", "ops+svs"))
    alice.say("general", "over sds", "text", svs_net.now)
    alice.say("ops", "over svs", "text", svs_net.now)
    svs_net.run(2_000)
    assert texts(bob.store, "general") == ["over sds"] and texts(bob.store, "ops") == ["over svs"]
    assert bob.conversations["general"].protocol == "sds" and bob.conversations["ops"].protocol == "svs"


def test_a_forged_publication_is_refused_before_the_engine_sees_it(svs_net):
    alice = svs_net.add("alice", channels=("general+svs",))
    bob = svs_net.add("bob", channels=("general+svs",))
    alice.say("general", "genuine", "text", svs_net.now)
    svs_net.run(1_000)
    conv = alice.conversations["general"]
    # mallory (bob's key) serves a publication of alice's seq 2 holding bob's own record
    bob.say("general", "bob's", "text", svs_net.now)
    svs_net.run(1_000)
    bob_wire = bob.store.messages("general")[-1].wire
    forged = packets.encode_publication(conv.engine.member.group, Producer(conv.engine.member.node,
                                        conv.engine.member.bootstrap), 2, bob_wire)
    sealed = bob.envelopes.seal_svs("general", forged)
    carol = svs_net.add("carol", channels=("general+svs",))
    carol.datagram_received(sealed, svs_net.address(bob), svs_net.now)
    rejected = of(carol.events(), ev.DatagramRejected)
    assert [r.kind for r in rejected] == ["publication"]
    assert "another author" in rejected[0].reason
    assert carol.store.count("general") == 0


def test_replicated_messages_are_stored_in_each_authors_order_and_not_fetched_again(svs_net):
    alice = svs_net.add("alice", channels=("general+svs",))
    for i in range(3):
        alice.say("general", f"a{i}", "text", svs_net.now)
    wires = [m.wire for m in alice.store.messages("general")]
    carol = Runtime(Store(svs_net.tmp_path / "carol.sqlite3"), nick="carol")
    carol.start(["general+svs"], 7999, ["10.0.0.9"], svs_net.now)
    conv = carol.conversations["general"]
    for wire in (wires[2], wires[0], wires[1]):  # as a link with a hole might bring them
        routed = carol.envelopes.open_entry(wire)
        conv.engine.receive_message(routed.parsed, svs_net.now, ("10.0.0.1", 7000))
        carol.joined.step("general", svs_net.now)
    assert [d.seq for d in of(carol.events(), ev.MessageDelivered)] == [1, 2, 3]
    assert texts(carol.store) == ["a0", "a1", "a2"]
    alice.datagrams_to_send()
    alice.peers.static.append(("10.0.0.9", 7999))  # now alice and carol hear each other
    alice.say("general", "a3", "text", svs_net.now)  # its sync interest shows carol seq 4
    for _ in range(3):
        for data, _ in alice.datagrams_to_send():
            carol.datagram_received(data, ("10.0.0.1", 7000), svs_net.now)
        for data, _ in carol.datagrams_to_send():
            alice.datagram_received(data, ("10.0.0.9", 7999), svs_net.now)
    assert texts(carol.store) == ["a0", "a1", "a2", "a3"]
    assert conv.engine.member.stats["data_interest_sent"] == 1  # seq 4 alone: 1-3 came by replication


def test_a_private_svs_channel_is_encrypted_and_named_by_its_tag_only(svs_net):
    alice = svs_net.add("alice", channels=(), passphrases={"hideout+svs": "correct horse battery staple"})
    bob = svs_net.add("bob", channels=(), passphrases={"hideout+svs": "correct horse battery staple"})
    assert alice.conversations["hideout"].protocol == "svs"
    assert alice.svs_channels == (alice.envelopes.link_name("hideout"),)  # announced by its tag
    alice.say("hideout", "whisper", "text", svs_net.now)
    svs_net.run(1_000)
    assert texts(bob.store, "hideout") == ["whisper"]
    sent = [data for _, data, _ in svs_net.sent]
    assert sent and not any(b"hideout" in d or b"whisper" in d for d in sent)
    # every channel datagram is encrypted; the one thing in the clear is each peer's exchange key statement
    # (publications marked lasting, 0x50, for a blind store to keep; interests passing, 0x51)
    assert all(d[1] in (Kind.PRIVATE, Kind.PRIVATE_PASSING) for d in sent if d[1] != Kind.EXCHANGE_KEY)
    assert any(d[1] == Kind.PRIVATE for d in sent) and any(d[1] == Kind.PRIVATE_PASSING for d in sent)


def test_members_of_a_quiet_svs_channel_stay_present(svs_net):
    """SVS suppresses all but one periodic sync interest in a quiet group; the
    peer table drops a peer silent for 45 s - so each member keeps speaking."""
    alice = svs_net.add("alice", channels=("general+svs",))
    bob = svs_net.add("bob", channels=("general+svs",))
    carol = svs_net.add("carol", channels=("general+svs",))
    svs_net.run(150_000)
    for rt in (alice, bob, carol):
        assert not of(svs_net.seen(rt), ev.PeerLeft)
        assert len(rt.peers.targets("general")) == 2
    bob.say("general", "still here", "text", svs_net.now)
    svs_net.run(1_000)
    assert texts(alice.store) == texts(carol.store) == ["still here"]


def test_our_message_shows_as_possibly_received_by_each_member_whose_vector_names_it(svs_net):
    """SVS has no acknowledgements; each member's vector showing our number
    is the receipt (◐ n): counted once per member, stored, never ● (a vector
    says a member heard of the message, not that its fetch is done)."""
    alice = svs_net.add("alice", channels=("general+svs",))
    bob = svs_net.add("bob", channels=("general+svs",))
    svs_net.add("carol", channels=("general+svs",))
    first = alice.say("general", "one", "text", svs_net.now)
    second = alice.say("general", "two", "text", svs_net.now)
    assert own_row(alice.store, first).ack == "unacknowledged"
    svs_net.run(25_000)  # each member's vector goes out at least once (20 s keepalive)
    for mid in (first, second):
        acks = [e for e in of(svs_net.seen(alice), ev.MessageAcknowledged) if e.message_id == mid]
        assert [(a.state, a.via) for a in acks] == [("possibly_acknowledged", "state_vector")] * len(acks)
        assert sorted(a.peers for a in acks) == [1, 2]  # one event as each of the two members shows it
        assert (own_row(alice.store, mid).ack, own_row(alice.store, mid).ack_peers) == ("possibly_acknowledged", 2)
    assert own_row(bob.store, first).ack is None  # not bob's own message
    shown = MessageRenderer("alice").render(row_from_stored(own_row(alice.store, first)), 80, False, None, None)
    assert shown[0].text.rstrip().endswith("◐ 2")  # what the client draws from the stored row
    svs_net.run(45_000)  # more vectors, the same members: the count stays
    assert own_row(alice.store, first).ack_peers == 2
    assert len([e for e in of(svs_net.seen(alice), ev.MessageAcknowledged) if e.message_id == first]) == 2


def test_a_restarted_member_remembers_who_showed_its_messages(tmp_path):
    net = Net(tmp_path)
    alice = net.add("alice", channels=("general+svs",))
    net.add("bob", channels=("general+svs",))
    mid = alice.say("general", "one", "text", net.now)
    net.run(25_000)
    path = alice.store.path
    alice.store.close()
    address = net.address(alice)
    del net.nodes[address]
    again = Runtime(Store(path), nick="alice", static_peers=[a for a in net.nodes])
    net.nodes[address] = again
    net.events[address] = []
    again.start([], address[1], [address[0]], net.now)
    net.run(45_000)  # bob's vectors keep showing alice's message 1: nothing new to report
    assert not [e for e in of(net.seen(again), ev.MessageAcknowledged) if e.message_id == mid]
    assert own_row(again.store, mid).ack_peers == 1


def own_row(store: Store, message_id: str, channel: str = "general"):
    return next(m for m in store.messages(channel) if m.message_id == message_id)


def test_a_member_that_missed_a_publication_fetches_it_as_soon_as_any_vector_shows_it(tmp_path):
    """The spec lets nothing reveal a missed publication sooner than the next
    vector heard; the data interest then goes out in the same step, with no
    time passing."""
    net = Net(tmp_path)
    alice = net.add("alice", channels=("general+svs",))
    bob = net.add("bob", channels=("general+svs",))
    carol = net.add("carol", channels=("general+svs",))
    alice.say("general", "bob misses this", "text", net.now)
    for data, dst in alice.datagrams_to_send():  # alice's sync interest reaches carol alone
        if dst == net.address(carol):
            carol.datagram_received(data, net.address(alice), net.now)
    net.pump()
    assert texts(carol.store) == ["bob misses this"] and texts(bob.store) == []
    carol.say("general", "carol speaks", "text", net.now)  # her sync interest shows alice's number too
    net.pump()
    assert sorted(texts(bob.store)) == ["bob misses this", "carol speaks"]


def _met(net, alice, bob) -> int:
    """alice and bob found each other (mDNS) and their first catch-up is over;
    how many dials the network has seen."""
    for rt, other in ((alice, bob), (bob, alice)):
        host, port = net.address(other)
        rt.peer_announced(other.peer_id, other.nick, [host], port, ("general",), net.now, svs=("general",))
    net.run(3_000)
    for who, address in net.dialed:
        net.nodes[who].dial_ended(address)
    return len(net.dialed)


def test_a_member_that_fetches_in_vain_catches_up_by_replication(tmp_path):
    """Fetching a publication takes a datagram each way, which loss takes
    too; replication runs over TCP: what a vector showed and the member
    could not fetch within a second is replicated for."""
    net = Net(tmp_path)
    alice = net.add("alice", channels=("general+svs",))
    bob = net.add("bob", channels=("general+svs",))
    before = _met(net, alice, bob)
    net.loss = 1.0
    alice.say("general", "bob misses this", "text", net.now)
    net.pump()
    alice.say("general", "and this shows it", "text", net.now)  # its vector shows the number bob lacks
    gone = net.address(alice)
    del net.nodes[gone]  # and alice answers no fetch
    net.loss = 0.0
    for data, dst in alice.datagrams_to_send():
        if dst == net.address(bob):
            bob.datagram_received(data, gone, net.now)
    net.pump()
    assert net.dialed[before:] == []  # the member's own fetch first
    net.run(1_500)
    assert (net.address(bob), gone) in net.dialed[before:]


def test_without_loss_an_svs_channel_does_not_replicate_for_each_message(tmp_path):
    net = Net(tmp_path)
    alice = net.add("alice", channels=("general+svs",))
    bob = net.add("bob", channels=("general+svs",))
    before = _met(net, alice, bob)
    for text in ("one", "two", "three"):
        alice.say("general", text, "text", net.now)
        net.run(500)
    net.run(3_000)
    assert texts(bob.store) == ["one", "two", "three"] and net.dialed[before:] == []


def test_a_peer_announcement_says_which_of_its_channels_run_on_svs(tmp_path):
    net = Net(tmp_path)
    alice = net.add("alice", channels=("general",))
    alice.peer_announced("b" * 32, "bob", ["10.0.0.9"], 7000, ("general", "plans"), net.now, svs=("plans",))
    (joined,) = of(alice.events(), ev.PeerJoined)
    assert joined.channels == ("general", "plans") and joined.svs == ("plans",)


def test_svs_names_announced_by_one_shot_keys_are_bounded_and_an_honest_announcement_still_counts(tmp_path):
    """Every name a peer announces as SVS is remembered for a later /join,
    after the peer has gone: a flood of made-up keys announcing 20 names
    each grew that memory without end."""
    net = Net(tmp_path)
    alice = net.add("alice", channels=("general",))
    alice.peer_announced("b" * 32, "bob", ["10.0.0.9"], 7000, ("plans",), net.now, svs=("plans",))
    for n in range(500):
        names = tuple(f"c{n}-{i}" for i in range(20))
        alice.peer_announced(f"{n:032x}", "x", [f"10.1.{n // 250}.{n % 250 + 1}"], 7000, names, net.now, svs=names)
    assert len(alice.joined.announced_svs) == SVS_NAMES_KEPT  # not 10,001
    alice.peer_announced("b" * 32, "bob", ["10.0.0.9"], 7000, ("plans",), net.now, svs=("plans",))  # bob again
    assert alice.join("plans", net.now) and isinstance(alice.conversations["plans"], SvsConversation)


def test_a_member_whose_input_is_behind_neither_asks_again_nor_replicates_for_what_may_be_queued(svs_net):
    """Datagrams read in large batches say our input is behind: the answer
    to a data interest is then most likely queued, unread. The member asks
    once and waits; it asks again and replicates only ``GAP_GRACE_MS`` after
    a read said it caught up - or after ``GAP_GRACE_MAX_MS`` however far behind."""
    net = svs_net
    alice = net.add("alice", channels=("general+svs",))
    bob = net.add("bob", channels=("general+svs",))
    net.run(3_000)  # met, and replicated on meeting
    for rt, other in ((alice, bob), (bob, alice)):
        rt.dial_ended(net.address(other))  # this network never connects the dials it takes
    net.dialed.clear()
    net.loss = 1.0  # what bob asks for, and its answer, wait in queues: never delivered here
    alice.say("general", "one", "text", net.now)
    shown = [data for data, dst in alice.datagrams_to_send() if dst == net.address(bob)]
    member = bob.conversations["general"].engine.member
    asked = member.stats["data_interest_sent"]
    noise = [(b"\x00\x09junk", ("10.0.0.9", 1))] * (BEHIND - 1)  # refused, but read in the same batch
    bob.datagrams_received([(shown[0], net.address(alice)), *noise], net.now)
    assert member.stats["data_interest_sent"] == asked + 1
    for _ in range(10):  # 5 s of large batches
        net.run(500)
        bob.datagrams_received(noise + noise[:1], net.now)
    assert member.stats["data_interest_sent"] == asked + 1  # not asked again
    assert bob.stats["seq_gaps"] == 0 and not net.dialed  # nor replicated
    bob.datagrams_received(noise[:1], net.now)  # caught up: a small batch
    net.run(GAP_GRACE_MS - 200)
    assert bob.stats["seq_gaps"] == 0
    net.run(400)
    assert member.stats["data_interest_sent"] > asked + 1
    assert bob.stats["seq_gaps"] == 1 and (net.address(bob), net.address(alice)) in net.dialed


def test_a_member_kept_behind_still_replicates_after_the_longest_grace(svs_net):
    net = svs_net
    alice = net.add("alice", channels=("general+svs",))
    bob = net.add("bob", channels=("general+svs",))
    net.run(3_000)
    for rt, other in ((alice, bob), (bob, alice)):
        rt.dial_ended(net.address(other))
    net.dialed.clear()
    net.loss = 1.0
    alice.say("general", "one", "text", net.now)
    shown = [data for data, dst in alice.datagrams_to_send() if dst == net.address(bob)]
    noise = [(b"\x00\x09junk", ("10.0.0.9", 1))] * BEHIND  # a flood that keeps bob behind
    bob.datagrams_received([(shown[0], net.address(alice)), *noise], net.now)
    start = net.now
    while net.now - start < GAP_GRACE_MAX_MS - 500:
        net.run(500)
        bob.datagrams_received(noise, net.now)
    assert bob.stats["seq_gaps"] == 0
    net.run(1_000)
    assert bob.stats["seq_gaps"] == 1 and (net.address(bob), net.address(alice)) in net.dialed
