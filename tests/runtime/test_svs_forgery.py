"""An SVS peer with a valid key that lies about its node or a sequence
number changes no state vector, and what it can make a member keep is
bounded: real runtimes, real SQLite files, in memory."""

from __future__ import annotations

from chat_app import events as ev
from chat_app.crypto import Identity, Kind, seal
from chat_app.runtime.svs_routing import group_name, node_name
from chat_app.store import Store
from sync.svs import Name, Producer, packets, vector

from .conftest import Net, texts

MALLORY = ("10.0.0.66", 9)


def member(rt):
    return rt.conversations["general"].engine.member


def interest(signer: Identity, sender_id: str, entries: dict[Producer, int]) -> bytes:
    """A sync interest from ``sender_id``'s node, signed by ``signer``."""
    data = packets.encode_sync_interest(Name.parse(group_name("general")), Name.parse(node_name(sender_id)),
                                        vector.encode_entries(vector.entries_by_node(entries)), 7)
    return seal(signer, Kind.SVS, data)


def producer(rt) -> Producer:
    return member(rt).me


def rejected(rt) -> list[str]:
    return [e.kind for e in rt.events() if isinstance(e, ev.DatagramRejected)]


def saved_vector(rt) -> list:
    return Store(rt.store.path).states.load("general")["svs"]["vector"]


def test_an_interest_or_publication_that_lies_about_its_node_or_number_changes_no_vector(tmp_path):
    net = Net(tmp_path)
    alice, carol = net.add("alice", channels=("general+svs",)), net.add("carol", channels=("general+svs",))
    for i in (1, 2):
        alice.say("general", f"line {i}", "text", net.now)
    net.run(3_000)
    assert texts(carol.store) == ["line 1", "line 2"]
    before, saved = dict(member(carol).vector), saved_vector(carol)
    mallory = Identity.generate()
    carol.events()
    # an interest naming alice's node as its own, signed by mallory: alice at 50
    carol.datagram_received(interest(mallory, alice.peer_id, {producer(alice): 50}), MALLORY, net.now)
    assert rejected(carol) == ["impostor"]
    # a publication of alice's number 5 holding her real message number 1
    record = alice.store.messages("general")[0].wire
    forged = packets.encode_publication(member(carol).group, producer(alice), 5, record)
    carol.datagram_received(seal(mallory, Kind.SVS, forged), MALLORY, net.now)
    assert rejected(carol) == ["publication"]
    # a vector naming a node that is no member's id
    odd = {Producer(Name.parse("/" + "x" * 600), 1): 1}
    carol.datagram_received(interest(mallory, mallory.sender_id, odd), MALLORY, net.now)
    assert rejected(carol) == ["malformed"]
    net.run(3_000)
    assert member(carol).vector == before and saved_vector(carol) == saved
    assert texts(carol.store) == ["line 1", "line 2"]


def test_a_vector_showing_a_member_further_on_than_it_is_does_not_move_its_number(tmp_path):
    net = Net(tmp_path)
    alice, carol = net.add("alice", channels=("general+svs",)), net.add("carol", channels=("general+svs",))
    alice.say("general", "one", "text", net.now)
    net.run(2_000)
    mallory = Identity.generate()
    alice.datagram_received(interest(mallory, mallory.sender_id, {producer(alice): 1_000_000}), MALLORY, net.now)
    net.run(1_000)
    assert member(alice).seq == 1 and member(alice).stats["own_seq_claimed"] == 1
    alice.say("general", "two", "text", net.now)  # number 2, not 1,000,001: carol needs nothing that never comes
    net.run(3_000)
    assert texts(carol.store) == ["one", "two"]
    assert [m.seq for m in alice.store.messages("general")] == [1, 2]


def test_made_up_producers_a_member_is_told_of_are_bounded(tmp_path):
    net = Net(tmp_path)
    carol = net.add("carol", channels=("general+svs",))
    mallory = Identity.generate()
    for batch in range(4):  # 4 x 500 producers nobody has heard of, at huge numbers
        made_up = {Producer(Name.parse(node_name(f"{batch:02x}{i:030x}")), 1): 2**40 for i in range(500)}
        for part in range(0, 500, 20):  # as a liar would send them: datagrams of a few dozen entries
            chunk = dict(list(made_up.items())[part:part + 20])
            carol.datagram_received(interest(mallory, mallory.sender_id, chunk), MALLORY, net.now)
        net.run(500)
    kept = member(carol)
    assert len(kept.hearsay) == 1_024 and len(kept.vector) == 1_024
    assert kept.stats["hearsay_refused"] == 2_000 - 1_024
    assert len(saved_vector(carol)) == 1_024
    assert len(kept._data.fetch.in_flight) <= kept.config.fetch_window


def test_replicated_messages_waiting_for_an_earlier_one_are_bounded_over_all_authors(tmp_path, monkeypatch):
    """Anyone may make keys and sign each one's message number 2: what waits
    for number 1 is bounded over all authors, not per author."""
    from chat_app.runtime import svs_conversation
    from tests.replication.forgery import chat_message

    monkeypatch.setattr(svs_conversation, "PENDING", 10)
    net = Net(tmp_path)
    carol = net.add("carol", channels=("general+svs",))
    conversation = carol.conversations["general"]
    for n in range(30):
        author = Identity.generate()
        routed = carol.envelopes.open_entry(seal(author, Kind.SDS, chat_message(author.sender_id, "general", 2,
                                                                                 f"second of {n}", net.now + n)))
        conversation.engine.receive_message(routed.parsed, net.now)
        carol.joined.step("general", net.now)
    assert conversation._waiting == 10 and sum(map(len, conversation._pending.values())) == 10
    assert texts(carol.store) == []
