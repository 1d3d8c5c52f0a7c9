"""Our own entry in other members' vectors: who has heard of our publications."""

from hypothesis import given
from hypothesis import strategies as st

from sync.svs import Channel, Known
from sync.svs.receipts import REPORTED_PER_STEP, Receipts

from .helpers import T0, member, sync_interest


def known(ch: Channel) -> list[tuple[int, int]]:
    return [(e.seq, e.members) for e in ch.events() if isinstance(e, Known)]


def test_each_member_counts_once_and_only_as_far_as_we_published():
    ch = member()
    for i in range(3):
        ch.send(b"m%d" % i, T0 + i)
    ch.events()
    ch.receive(sync_interest("/bob", {ch.me: 2}), T0 + 10)
    assert known(ch) == [(1, 1), (2, 1)]
    ch.receive(sync_interest("/bob", {ch.me: 2}), T0 + 20)  # the same vector again: nothing new
    assert known(ch) == []
    ch.receive(sync_interest("/carol", {ch.me: 3}), T0 + 30)
    assert known(ch) == [(1, 2), (2, 2), (3, 1)]
    ch.receive(sync_interest("/bob", {ch.me: 3}), T0 + 40)
    assert known(ch) == [(3, 2)]
    restored = Channel.restore(ch.export_state())
    restored.receive(sync_interest("/carol", {restored.me: 3}), T0 + 50)
    assert known(restored) == []  # remembered across a restart


@given(st.lists(st.tuples(st.sampled_from("abcde"), st.integers(1, 300)), max_size=40))
def test_the_count_for_each_publication_is_the_members_whose_vector_reached_it(shown):
    receipts, highest = Receipts(), {}
    for who, seq in shown:
        before = highest.get(who, 0)
        highest[who] = max(seq, before)
        reported = receipts.saw(who, seq)
        # each newly reached publication (the latest REPORTED_PER_STEP of them), oldest first ...
        assert [n for n, _ in reported] == list(range(max(before + 1, seq - REPORTED_PER_STEP + 1), seq + 1))
        for n, members in reported:  # ... with the members whose vectors reach it so far
            assert members == sum(1 for s in highest.values() if s >= n)
