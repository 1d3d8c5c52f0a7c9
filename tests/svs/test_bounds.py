"""What a member with a valid key can make another keep: producers nobody
else has heard of, at any number, and publications served past one it holds
back. Each is bounded in count (and so in bytes): ``Config.max_producers``,
``max_hearsay``, and the fetch window ahead of what is delivered."""

from __future__ import annotations

from sync.svs import Config, Delivered, Name, packets

from .helpers import GROUP, T0, decode, member, p, sync_interest


def made_up(n: int) -> dict:
    return {p(f"/nobody{i}"): 1_000 + i for i in range(n)}


def test_a_vector_naming_many_made_up_producers_leaves_at_most_max_hearsay_of_them():
    ch = member(config=Config(max_hearsay=10, max_producers=50))
    ch.receive(sync_interest("/liar", made_up(100)), T0, "L")
    assert len(ch.vector) == len(ch.hearsay) == 10 and ch.stats["hearsay_refused"] == 90
    ch.receive(sync_interest("/alice", {p("/alice"): 3}), T0, "A")  # speaks for itself: not hearsay
    assert ch.vector[p("/alice")] == 3 and len(ch.hearsay) == 10
    ch.receive(sync_interest("/liar", made_up(200)), T0, "L")  # again, more: still ten
    assert len(ch.vector) == 11 and ch.vector.keys() >= {p(f"/nobody{i}") for i in range(10)}


def test_a_producer_heard_from_or_delivered_is_no_longer_hearsay():
    ch = member(config=Config(max_hearsay=2))
    bob, carol, dave = p("/bob"), p("/carol"), p("/dave")
    ch.receive(sync_interest("/alice", {bob: 1, carol: 1}), T0, "A")
    assert ch.hearsay == {bob, carol}
    ch.receive(sync_interest("/alice", {dave: 1}), T0, "A")
    assert dave not in ch.vector  # full
    ch.receive(sync_interest("/bob", {bob: 1}), T0, "B")  # bob speaks for himself
    ch.receive(packets.encode_publication(Name.parse(GROUP), carol, 1, b"hi"), T0, "A")  # carol's arrives
    assert [e.seq for e in ch.events() if isinstance(e, Delivered)] == [1] and ch.hearsay == set()
    ch.receive(sync_interest("/alice", {dave: 1}), T0, "A")
    assert ch.hearsay == {dave} and dave in ch.vector


def test_the_vector_never_holds_more_than_max_producers_even_of_producers_that_speak():
    ch = member(config=Config(max_producers=5))
    for i in range(20):  # each one signs its own sync interest: 20 keys
        ch.receive(sync_interest(f"/m{i}", {p(f"/m{i}"): 1}), T0, f"M{i}")
    assert len(ch.vector) == 5 and ch.stats["producers_refused"] == 15
    assert ch.export_state()["vector"] == [[q.node.encode(), q.bootstrap, s] for q, s in ch.vector.items()]


def test_a_producer_holding_back_one_publication_leaves_at_most_a_window_of_the_rest_waiting():
    """mallory says she is at 100,000 and serves every publication but her
    first: the member keeps what arrives only a fetch window ahead."""
    ch = member(config=Config(fetch_window=8))
    mallory = p("/mallory")
    ch.receive(sync_interest("/mallory", {mallory: 100_000}), T0, "M")
    now, most = T0, 0
    for _ in range(200):
        for out in ch.datagrams_to_send(now):
            packet = decode(out.data)
            if isinstance(packet, packets.DataInterest) and packet.seq != 1:
                ch.receive(packets.encode_publication(Name.parse(GROUP), mallory, packet.seq, b"x"), now, "M")
        most = max(most, len(ch._data.fetch.arrived))
        now = ch.get_timer()
        ch.handle_timer(now)
    assert most == 7  # 2..8, waiting for 1
    assert not [e for e in ch.events() if isinstance(e, Delivered)]


def test_a_vector_showing_us_further_on_moves_us_only_if_we_may_have_lost_our_state():
    for adopt, after in ((True, 1_000_000), (False, 1)):
        ch = member(config=Config(adopt_own_seq=adopt))
        ch.send(b"one", T0)
        ch.receive(sync_interest("/liar", {ch.me: 1_000_000}), T0, "L")
        assert ch.seq == after
        assert ch.send(b"next", T0) == after + 1
