"""Set reconciliation of log heights: each side learns exactly which logs the
other is behind on, in few messages when few differ."""

from hypothesis import given, settings
from hypothesis import strategies as st

from sync.replication.messages import decode, encode
from sync.replication.reconcile import Reconciler


def run(a_items, b_items, rounds=200):
    a, b = Reconciler(0, a_items), Reconciler(0, b_items)
    a.start()
    trips = 0
    for _ in range(rounds):
        to_b = a.messages()
        for msg in to_b:
            b.receive(decode(encode(msg)))  # through the real CBOR encoding
        to_a = b.messages()
        for msg in to_a:
            a.receive(decode(encode(msg)))
        if not to_a and not to_b:
            break
        trips += 1  # a round trip that carried messages
    assert a.finished and b.finished, "reconciliation did not terminate"
    return a, b, trips


def truth(mine, theirs):
    heights = {(pk, log): seq for pk, log, seq in theirs}
    return sorted((pk, log, heights.get((pk, log), 0)) for pk, log, seq in mine if heights.get((pk, log), 0) < seq)


logs = st.dictionaries(st.tuples(st.sampled_from(["ab", "cd", "ef", "gh"]), st.integers(0, 30)),
                       st.integers(1, 5), max_size=60)


@settings(max_examples=300, deadline=None)
@given(logs, logs, st.booleans())
def test_each_side_learns_exactly_where_the_other_is_behind(a_logs, b_logs, share):
    if share:  # mostly the same logs, a few heights apart
        b_logs = {**a_logs, **b_logs}
    a_items = [(pk, log, seq) for (pk, log), seq in a_logs.items()]
    b_items = [(pk, log, seq) for (pk, log), seq in b_logs.items()]
    a, b, _ = run(a_items, b_items)
    for side, mine, theirs in ((a, a_items, b_items), (b, b_items, a_items)):
        plan = side.plan()
        assert set(truth(mine, theirs)) <= set(plan)  # every log they are behind on
        heights = {(pk, log): seq for pk, log, seq in theirs}
        assert all(seq == heights.get((pk, log), 0) for pk, log, seq in plan)  # with their true height
        assert {(pk, log) for pk, log, _ in plan} <= {(pk, log) for pk, log, _ in mine}


def test_cost_grows_with_the_differences_not_the_set():
    items = [(f"author{i:05d}", 7, 10) for i in range(20_000)]
    a, b, trips = run(items, items)
    assert a.messages_sent + b.messages_sent <= 4 and trips <= 2  # one fingerprint, one Done, two Terminals
    changed = list(items)
    for i in (17, 5_000, 12_345):
        changed[i] = (changed[i][0], 7, 11)
    a, b, trips = run(items, changed)
    assert set(b.plan()) >= {(f"author{i:05d}", 7, 10) for i in (17, 5_000, 12_345)}
    assert len(b.plan()) <= 3 * 5  # only logs in the few ranges that differed
    assert a.messages_sent + b.messages_sent < 3 * 2 * 15 * 2 + 20  # ~ d * log2(N) fingerprints, not N
    assert trips <= 2 * 15
