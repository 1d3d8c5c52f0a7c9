"""SVS members on an in-memory lossy network with a fake clock
(``sync.svs.testbed``): they converge through loss, churn, crashes, and with
a vector of 1,000 producers that no datagram can hold."""

import random

import pytest

from sync.svs import Channel, Config
from sync.svs import testbed as bed

GROUP = "/sds-chat/general"
SECOND = 1_000


def group_of(n, loss, seed, config=None):
    config = config or Config()
    return bed.Testbed(n, lambda i, now: Channel(GROUP, f"/m{i:04d}", now, config),
                   lambda state: Channel.restore(state, config), loss=loss, seed=seed)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ten_members_at_30_percent_loss_with_churn_all_converge(seed):
    tb = group_of(10, loss=0.3, seed=seed)
    rng = random.Random(seed)
    away: set[int] = set()
    for k in range(150):
        tb.run_until(tb.now + rng.randrange(100, 800))
        if rng.random() < 0.1:  # churn: someone leaves or comes back
            i = rng.randrange(10)
            if i in away:
                tb.rejoin(i)
                away.discard(i)
            elif len(away) < 3:
                tb.leave(i)
                away.add(i)
        author = rng.choice([i for i in range(10) if i not in away])
        tb.publish(author, f"message {k} from {author}".encode())
    for i in sorted(away):
        tb.rejoin(i)
    tb.run_until(tb.now + 90 * SECOND)
    assert len(tb.sent) == 150
    assert tb.converged(), [len(m.delivered) for m in tb.members]
    assert tb.wire.lost > 0.25 * tb.wire.datagrams  # the loss really happened


def test_members_deliver_each_producers_publications_in_sequence_order():
    tb = group_of(5, loss=0.3, seed=7)
    for k in range(60):
        tb.publish(k % 5, f"{k % 5}:{k // 5:03d}".encode())
        tb.run_until(tb.now + 50)
    tb.run_until(tb.now + 90 * SECOND)
    assert tb.converged()
    for member in tb.members:
        order = sorted(member.delivered, key=member.delivered.__getitem__)
        for author in range(5):
            mine = [c for c in order if c.startswith(f"{author}:".encode())]
            assert mine == sorted(mine)


def test_a_member_that_crashed_without_its_state_catches_up_and_publishes_anew():
    tb = group_of(4, loss=0.2, seed=11)
    for k in range(20):
        tb.publish(k % 4, f"before {k}".encode())
        tb.run_until(tb.now + 200)
    tb.run_until(tb.now + 30 * SECOND)
    tb.leave(0, keep_state=False)
    tb.run_until(tb.now + 2 * SECOND)
    tb.rejoin(0)  # a new bootstrap time: its sequence restarts at 1 under a new producer
    tb.publish(0, b"after the crash")
    tb.run_until(tb.now + 60 * SECOND)
    assert tb.converged(), [len(m.delivered) for m in tb.members]
    assert len(tb.members[0].engine.vector) == 5  # four producers, and member 0 twice


@pytest.mark.slow
def test_a_thousand_producers_split_vectors_and_converge():
    """1,000 producers pass through a group of 3 (each publishes once, in
    batches of 10, and leaves); the state vector is ~22 KB, far beyond one
    datagram. Then a fresh member and one that was away for all of it join at
    30% loss and fetch every publication from members other than the long-gone
    producers."""
    config = Config()
    producers, keep = 1_000, 3
    n = keep + producers + 1
    tb = group_of(n, loss=0.0, seed=5, config=config)
    away_member, fresh = keep - 1, n - 1
    for i in range(keep - 1, n):
        tb.leave(i)
    for batch in range(keep, keep + producers, 10):
        for i in range(batch, batch + 10):
            tb.rejoin(i)
            tb.publish(i, f"from {i}".encode())
        tb.run_until(tb.now + 95)  # long enough for the members to fetch it, not to reply
        for i in range(batch, batch + 10):
            tb.leave(i)
        tb.run_until(tb.now + 400)
    tb.run_until(tb.now + 2 * SECOND)
    assert [len(tb.members[i].delivered) for i in range(keep - 1)] == [producers] * (keep - 1)
    assert tb.wire.largest_broadcast <= config.max_datagram_bytes
    assert len(tb.members[0].engine.vector) == producers

    tb.loss = 0.3
    tb.members[fresh].saved = None
    tb.rejoin(fresh)
    tb.rejoin(away_member)
    tb.run_until(tb.now + 120 * SECOND)
    assert tb.converged(), [len(tb.members[i].delivered) for i in tb.online()]
    assert tb.wire.largest_broadcast <= config.max_datagram_bytes
