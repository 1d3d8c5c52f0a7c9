"""Set reconciliation of log heights: each side learns exactly which logs the
other holds at another height (with that height), in few rounds and few bytes
when few differ."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sync.replication.reconcile as reconcile
from sync.replication.messages import (Done, Fingerprint, ItemPayload, LowerBound, ReplicationError, Terminal, decode,
                                       encode)
from sync.replication.reconcile import MIN, Reconciler, lift, separator, unlift


def run(a_items, b_items):
    """Both sides to the end, every message through the real CBOR encoding.
    Returns the two sides, the rounds (one-way flights) and the bytes."""
    a, b = Reconciler(0, a_items), Reconciler(0, b_items)
    a.start()
    src, dst, rounds, size = a, b, 0, 0
    while msgs := src.messages():
        rounds += 1
        assert rounds <= 20, "reconciliation does not converge"
        for msg in msgs:
            data = encode(msg)
            size += len(data)
            dst.receive(decode(data))
        src, dst = dst, src
    assert a.finished and b.finished, "reconciliation did not terminate"
    return a, b, rounds, size


def expected_plan(mine, theirs):
    """Every log of mine they hold at another height, with their height (0: they lack it)."""
    heights = {(pk, log): seq for pk, log, seq in theirs}
    return sorted((pk, log, heights.get((pk, log), 0)) for pk, log, seq in mine if heights.get((pk, log), 0) != seq)


def check(a_items, b_items):
    a, b, rounds, size = run(a_items, b_items)
    assert a.plan() == expected_plan(a_items, b_items)
    assert b.plan() == expected_plan(b_items, a_items)
    return a, b, rounds, size


def round_trips(a, b):
    """As negentropy counts them: the initiator's round trips until it knows
    what to send; the responder knows with the initiator's next message."""
    return max(math.ceil(a.known_at / 2), math.ceil((b.known_at - 1) / 2))


def key(rng):
    return f"{rng.getrandbits(128):032x}"


def model(n, d, seed=1, heights=False):
    """n logs; d of them held by one side only, half on each side (or, with
    ``heights``, held by both at different heights)."""
    rng = random.Random(seed)
    common = [(key(rng), 7_000_000_000_000_000_000 + i % 7, rng.randint(1, 500)) for i in range(n - d)]
    if heights:
        changed = [(key(rng), 9, rng.randint(1, 50)) for _ in range(d)]
        return common + changed, common + [(pk, log, seq + rng.randint(1, 9)) for pk, log, seq in changed]
    return (common + [(key(rng), 7, 3) for _ in range(d // 2)],
            common + [(key(rng), 7, 3) for _ in range(d - d // 2)])


# Authors with long shared prefixes and several logs each, heights from 0:
# every kind of bound (a short prefix, a whole key with a log id) gets made.
authors = st.sampled_from(["a", "ab", "abc", "abd", "b", "ba0", "ba1", "c" * 32, "c" * 31 + "d", "\u00e9"])
logs = st.dictionaries(st.tuples(authors, st.integers(0, 40)), st.integers(0, 6), max_size=120)


@settings(max_examples=400, deadline=None)
@given(logs, logs, st.sampled_from(["independent", "overlap", "superset"]))
def test_each_side_learns_every_log_the_other_holds_differently(a_logs, b_logs, how):
    if how == "overlap":  # mostly the same logs, a few heights apart
        b_logs = {**a_logs, **b_logs}
    elif how == "superset":  # b holds everything a holds, and more
        b_logs = {**b_logs, **a_logs}
    check([(pk, log, seq) for (pk, log), seq in a_logs.items()], [(pk, log, seq) for (pk, log), seq in b_logs.items()])


@pytest.mark.parametrize("n", [0, 1, 5, 100, 3_000])
def test_empty_sides(n):
    items, _ = model(n, 0)
    for a_items, b_items in ((items, []), ([], items)):
        a, b, rounds, _ = check(a_items, b_items)
        assert rounds <= 3  # the side that has something sends it all at once


@pytest.mark.parametrize("extra", [1, 2, 17, 500])
def test_one_side_a_superset(extra):
    base, more = model(5_000, extra)
    superset = base + [item for item in more if item not in base]
    for a_items, b_items in ((superset, base[:5_000 - extra]), (base[:5_000 - extra], superset)):
        check(a_items, b_items)


def test_equal_fingerprints_elsewhere_never_settle_a_range():
    """One side's ranges all carry the same fingerprint (every one empty), the
    other's differ in content: each range is answered for what it holds."""
    rng = random.Random(3)
    narrow = [("0" + key(rng)[1:], 1, 2) for _ in range(300)]  # all under one prefix
    wide = narrow[:100] + [(key(rng), 1, 2) for _ in range(3_000)]
    check(narrow, wide)
    check(wide, narrow)


def test_same_heights_shuffled_among_logs_are_told_apart():
    """Same logs, same multiset of heights, same counts in every range: only
    which log holds which height differs."""
    rng = random.Random(4)
    keys = sorted(key(rng) for _ in range(2_000))
    seqs = [rng.randint(1, 1_000) for _ in keys]
    a_items = [(k, 1, s) for k, s in zip(keys, seqs, strict=True)]
    swapped = list(seqs)
    for i in range(0, 200, 2):
        swapped[i * 7], swapped[i * 7 + 1] = swapped[i * 7 + 1], swapped[i * 7]
    b_items = [(k, 1, s) for k, s in zip(keys, swapped, strict=True)]
    a, b, _, _ = check(a_items, b_items)
    assert len(a.plan()) == sum(1 for x, y in zip(seqs, swapped, strict=True) if x != y)


def test_nothing_differs_costs_one_fingerprint_and_one_done():
    items, _ = model(20_000, 0)
    a, b, rounds, size = check(items, items)
    assert rounds == 2 and size <= 37
    assert round_trips(a, b) == 1


class Counting(list):
    """A list that counts the elements read from it (bisect reads count too)."""

    reads = 0

    def __getitem__(self, i):
        got = list.__getitem__(self, i)
        Counting.reads += len(got) if isinstance(i, slice) else 1
        return got


def items_read(n, d):
    a_items, b_items = model(n, d)
    a, b = Reconciler(0, a_items), Reconciler(0, b_items)
    for side in (a, b):  # after the sets are built, every read of them is counted
        side.mine.items, side.mine.hashes, side.mine.sums = map(Counting, (side.mine.items, side.mine.hashes,
                                                                            side.mine.sums))
    Counting.reads = 0
    a.start()
    src, dst = a, b
    while msgs := src.messages():
        for msg in msgs:
            dst.receive(decode(encode(msg)))
        src, dst = dst, src
    return Counting.reads


@pytest.mark.parametrize("d", [1, 5])
def test_work_grows_with_the_differences_not_the_set(d):
    small, large = items_read(10_000, d), items_read(100_000, d)
    assert large <= 2 * small + 100 and large < 100_000 / 4


@pytest.mark.parametrize("d", [1, 2, 20, 200])
def test_bytes_and_round_trips_stay_within_negentropys(d):
    a_items, b_items = model(20_000, d)
    a, b, rounds, size = check(a_items, b_items)
    assert round_trips(a, b) <= 2
    assert size <= 1_300 * max(d, 2)  # negentropy: 1,014-1,289 B per difference at 10^5, more at small d
    heights_a, heights_b = model(20_000, d, heights=True)
    check(heights_a, heights_b)


@pytest.mark.slow
@pytest.mark.parametrize("d", [20, 2_000])
def test_a_hundred_thousand_logs(d):
    a_items, b_items = model(100_000, d, seed=7)
    a, b, rounds, size = check(a_items, b_items)
    assert round_trips(a, b) <= 2  # negentropy: 2
    assert size <= {20: 25_789, 2_000: 1_314_757}[d]  # negentropy's bytes for the same model
    check(*model(100_000, d, seed=8, heights=True))


def test_fingerprint_encoding():
    assert unlift(lift(5, 0)) == (5, 0, None)
    assert unlift(lift(2**64 + 3, 300)) == (3, 300, None)
    assert unlift(lift(1, 1, ("ab", 1, 300))) == (1, 1, (reconcile.log_hash(("ab", 1)), 300))
    for bad in (b"", b"\x00" * 8, b"\x00" * 8 + b"\x80", b"\x00" * 9 + b"\x01", b"\x00" * 8 + b"\x01abc",
                b"\x00" * 8 + b"\x02abcd\x01", b"\x00" * 8 + b"\x01abcd\x01\x01"):
        with pytest.raises(ReplicationError):
            unlift(bad)


items = st.tuples(authors, st.integers(0, 5), st.integers(0, 5))


@given(items, items)
def test_a_separator_lies_between_and_keeps_a_log_whole(x, y):
    if x[:2] == y[:2]:
        return
    prev, nxt = min(x, y), max(x, y)
    bound = separator(prev, nxt)
    assert prev < bound <= nxt
    assert (nxt[0], nxt[1], 0) >= bound and bound[2] == 0  # no height of nxt's log lies below it


@pytest.mark.parametrize("messages", [
    [Fingerprint(0, lift(1, 1), ("b", 0, 0)), Fingerprint(0, lift(1, 1), ("a", 0, 0))],  # bounds go back
    [LowerBound(0, ("b", 0, 0)), LowerBound(0, ("a", 0, 0))],
    [ItemPayload(0, ("b", 1, 1)), ItemPayload(0, ("a", 1, 1), True, MIN)],  # values out of order
    [ItemPayload(0, ("b", 1, 1)), ItemPayload(0, ("b", 1, 2), True, MIN)],  # one log twice
    [ItemPayload(0, ("c", 1, 1), True, ("b", 0, 0))],  # a value past its upper bound
    [ItemPayload(0, ("a", 1, 1)), Terminal(0)],  # a run never closed
    [Fingerprint(0, b"\x00" * 8 + b"\x01xy", MIN), Terminal(0)],
    [Done(0, ("m", 0, 0)), Terminal(0)],  # the initiator's range is answered only halfway
])
def test_bad_rounds_are_refused_with_a_reason(messages):
    a = Reconciler(0, [("a", 1, 1), ("z", 1, 1)])
    a.start()
    a.messages()
    with pytest.raises(ReplicationError):
        for msg in messages:
            a.receive(msg)


def test_nothing_is_accepted_after_the_end():
    a, b, _, _ = run([("a", 1, 1)], [("a", 1, 1)])
    with pytest.raises(ReplicationError):
        a.receive(Terminal(0))
