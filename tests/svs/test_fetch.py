"""Publication retrieval (retry, backoff, other holders, in-order delivery),
answering data interests, and sequence numbers across restarts."""

import cbor2

from sync.core import BROADCAST
from sync.svs import Channel, Config, DataWanted, Delivered
from sync.svs import packets

from .helpers import BOOT, GROUP, T0, decode, member, p, sync_interest

ALICE = p("/alice")


def requests(ch, now):
    packets_out = [(decode(o.data), o.to) for o in ch.datagrams_to_send(now)]
    return [(packet.seq, to) for packet, to in packets_out if isinstance(packet, packets.DataInterest)]


def publication(seq, content=None):
    from sync.svs import Name
    return packets.encode_publication(Name.parse(GROUP), ALICE, seq, content or f"m{seq}".encode())


def test_an_unanswered_fetch_is_retried_with_backoff_to_the_producer_and_a_holder():
    ch = member()
    ch.receive(sync_interest("/alice", {ALICE: 1}), T0, "A")
    ch.receive(sync_interest("/carol", {ALICE: 1}), T0, "C")  # carol has heard of it too
    ch.receive(sync_interest("/dave", {ALICE: 1}), T0, "D")  # and dave
    assert requests(ch, T0) == [(1, "A")]
    now, waits, targets = T0, [], []
    for _ in range(6):
        sent = []
        while not sent:  # (the periodic sync interest may fall in between)
            due = ch.get_timer()
            ch.handle_timer(due)
            sent = requests(ch, due)
        waits.append(due - now)
        targets.append([to for _, to in sent])
        now = due
    assert waits == [1_000, 2_000, 4_000, 8_000, 8_000, 8_000]  # doubling, capped
    assert targets == [["A", "C"], ["A", "D"]] * 3  # the producer each time, the holders in turn
    ch.receive(publication(1), now + 10, "A")
    assert Delivered("/alice", BOOT, 1, b"m1") in list(ch.events())
    assert ch.get_timer() > now + 20_000  # no more retries: only the periodic timer


def test_no_retry_goes_out_till_behind_timeout_after_the_hosts_input_was_last_behind():
    """The host read a large batch (its input is behind): the answer is most
    likely queued, so a retry falling due before then waits."""
    ch = member(config=Config(fetch_timeout_ms=250, behind_timeout_ms=1_000))
    ch.receive(sync_interest("/alice", {ALICE: 1}), T0, "A")
    assert requests(ch, T0) == [(1, "A")]
    for now in range(T0 + 250, T0 + 3_000, 250):  # still behind at every read
        ch.behind_at = now
        ch.handle_timer(now)
        assert requests(ch, now) == []
    ch.handle_timer(T0 + 3_749)  # last behind at 2,750
    assert requests(ch, T0 + 3_749) == []
    ch.handle_timer(T0 + 3_750)
    assert requests(ch, T0 + 3_750) == [(1, "A")]  # a second after it last was


def test_more_requests_are_in_flight_while_the_hosts_input_is_behind():
    """Answers take as long as the host's backlog: what is in flight is what
    is published meanwhile, so the window widens while it is behind."""
    ch = member(config=Config(fetch_window=2, behind_timeout_ms=1_000, behind_fetch_window=4))
    ch.receive(sync_interest("/alice", {ALICE: 10}), T0, "A")
    assert [seq for seq, _ in requests(ch, T0)] == [1, 2]
    ch.behind_at = T0 + 10
    ch.handle_timer(T0 + 10)
    assert [seq for seq, _ in requests(ch, T0 + 10)] == [3, 4]


def test_with_no_address_known_the_data_interest_is_broadcast():
    ch = member()
    ch.receive(sync_interest("/alice", {ALICE: 1}), T0)  # source unknown
    assert requests(ch, T0) == [(1, BROADCAST)]


def test_publications_are_delivered_in_sequence_order_whatever_order_they_arrive_in():
    ch = member()
    ch.receive(sync_interest("/alice", {ALICE: 3}), T0, "A")
    ch.datagrams_to_send(T0)
    list(ch.events())
    ch.receive(publication(3), T0 + 1, "A")
    ch.receive(publication(2), T0 + 2, "A")
    assert [e for e in ch.events() if isinstance(e, Delivered)] == []
    ch.receive(publication(1), T0 + 3, "A")
    ch.receive(publication(2), T0 + 4, "A")  # a duplicate: ignored
    assert [e.seq for e in ch.events() if isinstance(e, Delivered)] == [1, 2, 3]
    assert ch.stats["duplicate"] == 1


def test_a_publication_nobody_announced_is_dropped():
    ch = member()
    ch.receive(publication(1), T0, "A")
    assert list(ch.events()) == [] and ch.stats["unsolicited"] == 1


def test_the_fetch_window_bounds_requests_in_flight():
    ch = member(config=Config(fetch_window=5))
    ch.receive(sync_interest("/alice", {ALICE: 40}), T0, "A")
    assert [s for s, _ in requests(ch, T0)] == [1, 2, 3, 4, 5]
    ch.receive(publication(1), T0 + 5, "A")
    assert [s for s, _ in requests(ch, T0 + 5)] == [6]


def test_a_member_answers_from_its_cache_then_asks_its_runtime():
    ch = member(config=Config(cache_size=2))
    for k in range(3):
        ch.send(f"m{k}".encode(), T0 + k)
    ch.datagrams_to_send(T0)
    list(ch.events())
    from sync.svs import Name
    ask = lambda seq: packets.encode_data_interest(Name.parse(GROUP), ch.me, seq, 0)  # noqa: E731
    ch.receive(ask(3), T0 + 10, "B")
    [answer] = ch.datagrams_to_send(T0 + 10)
    assert answer.to == "B" and decode(answer.data).content == b"m2"
    ch.receive(ask(1), T0 + 11, "B")  # evicted from the cache
    assert ch.datagrams_to_send(T0 + 11) == []
    [wanted] = list(ch.events())
    assert wanted == DataWanted("/me", ch.bootstrap, 1, "B")
    ch.provide("/me", ch.bootstrap, 1, b"m0", wanted.requester)
    [answer] = ch.datagrams_to_send(T0 + 12)
    assert answer.to == "B" and decode(answer.data).content == b"m0"
    ch.receive(ask(9), T0 + 13, "B")  # never published: as in NDN, no answer
    assert ch.datagrams_to_send(T0 + 13) == [] and list(ch.events()) == []


def test_sequence_numbers_continue_after_restore():
    ch = member()
    for k in range(3):
        ch.send(b"x", T0 + k)
    state = cbor2.loads(cbor2.dumps(ch.export_state()))
    revived = Channel.restore(state)
    assert revived.export_state() == ch.export_state()
    assert revived.send(b"after", T0 + 10) == 4


def test_a_stale_restore_never_reuses_a_number_it_hears_of():
    ch = member()
    ch.send(b"one", T0)
    stale = ch.export_state()
    ch.send(b"two", T0 + 1)
    ch.send(b"three", T0 + 2)
    revived = Channel.restore(stale)  # a state saved too early
    revived.receive(sync_interest("/bob", {ch.me: 3}), T0 + 5, "B")
    assert revived.send(b"four", T0 + 6) == 4


def test_a_member_that_lost_its_state_restarts_under_a_new_bootstrap_time():
    first = member("/me")
    first.send(b"before the crash", T0)
    later = T0 + 3_600_000
    again = member("/me", now=later)
    assert again.bootstrap == first.bootstrap + 3_600
    assert again.send(b"after", later) == 1  # a new sequence...
    bob = member("/bob")
    bob.receive(first.datagrams_to_send(T0)[0].data, T0, "ME")
    bob.receive([o for o in again.datagrams_to_send(later)][-1].data, later, "ME")
    assert bob.vector[first.me] == 1 and bob.vector[again.me] == 1  # ...that collides with nothing
    assert first.me != again.me


def test_publications_delivered_elsewhere_are_no_longer_fetched_and_release_those_waiting():
    ch = member()
    assert not ch.delivered_elsewhere("/alice", 2)  # no vector named alice yet: nothing changes
    ch.receive(sync_interest("/alice", {ALICE: 4}), T0, "A")
    assert sorted(seq for seq, _ in requests(ch, T0)) == [1, 2, 3, 4]
    list(ch.events())
    ch.receive(publication(3), T0 + 1, "A")  # waits for 1 and 2
    assert not [e for e in ch.events() if isinstance(e, Delivered)]
    assert ch.delivered_elsewhere("/alice", 2)  # replication brought 1 and 2
    assert [e.seq for e in ch.events() if isinstance(e, Delivered)] == [3]
    ch.receive(publication(1), T0 + 2, "A")  # a late answer is a duplicate, not a second delivery
    assert not [e for e in ch.events() if isinstance(e, Delivered)]
    due = T0 + 1_000
    ch.handle_timer(due)
    assert [seq for seq, _ in requests(ch, due)] == [4]  # only what is still missing is asked again
