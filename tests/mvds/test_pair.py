"""Two nodes on a lossy in-memory link with a fake clock (``pair.Pair``):
every message arrives exactly once, in order, whatever the link or the
recipient does, and even when the sender restarts mid-retransmission."""

from __future__ import annotations

import pytest

from sync.mvds import Config, Mode

from .pair import Conditions, Pair

MINUTE = 60_000


def conversation(n: int, every_ms: int, start_ms: int = 0, mode: Mode | None = None):
    """``n`` messages; every third one long enough to go in interactive mode
    by default."""
    return [(start_ms + i * every_ms, (b"%03d " % i) * (1 if i % 3 else 300), mode) for i in range(n)]


def assert_once_in_order(pair: Pair, messages) -> None:
    bodies = [body for _, body, _ in messages]
    assert [body for body, _ in pair.outcome.delivered] == bodies
    assert len(pair.outcome.acknowledged) == len(bodies)  # and the sender knows
    assert pair.nodes["alice"].waiting("bob") == 0


@pytest.mark.parametrize("mode", [None, Mode.BATCH, Mode.INTERACTIVE])
@pytest.mark.parametrize("seed", range(3))
def test_thirty_percent_loss(seed, mode):
    messages = conversation(60, every_ms=700, mode=mode)
    pair = Pair(Conditions(loss=0.3), seed=seed)
    pair.run(messages, until_ms=10 * MINUTE)
    assert_once_in_order(pair, messages)
    assert max(pair.outcome.latencies()) < 30_000


@pytest.mark.parametrize("mode", [None, Mode.BATCH, Mode.INTERACTIVE])
def test_recipient_offline_for_two_minutes_then_back(mode):
    messages = conversation(30, every_ms=3_000, start_ms=5_000, mode=mode)  # most written while bob is away
    pair = Pair(Conditions(loss=0.1, online=[(0, 10_000), (130_000, 10 * MINUTE)]), seed=7)
    pair.run(messages, until_ms=10 * MINUTE)
    assert_once_in_order(pair, messages)
    back = 1_700_000_000_000 + 130_000
    late = [at for _, at in pair.outcome.delivered if at > back]
    # the backoff resets on return: what waited arrives within seconds, not at the next backoff
    assert late and min(late) - back < 5_000


@pytest.mark.parametrize("seed", range(3))
def test_sender_restored_mid_retransmission(seed):
    messages = conversation(40, every_ms=2_000)
    conditions = Conditions(loss=0.3, online=[(0, 20_000), (110_000, 10 * MINUTE)],
                            restarts=(30_000, 60_000, 111_000))
    pair = Pair(conditions, seed=seed)
    pair.run(messages, until_ms=10 * MINUTE)
    assert_once_in_order(pair, messages)
    assert pair.nodes["alice"].stats["message_resent"] > 0  # the restored node did retransmit


def test_without_the_reset_the_returning_peer_waits_for_the_backoff():
    """What the reset buys: without discovery (and with the comeback rule
    effectively off), messages wait for their next scheduled retransmission."""
    messages = conversation(10, every_ms=1_000, start_ms=12_000)
    online = [(0, 10_000), (131_700, 10 * MINUTE)]
    fast = Pair(Conditions(online=online), seed=1)
    fast.run(messages, until_ms=10 * MINUTE)
    slow = Pair(Conditions(online=online, discovery_ms=10**9), Config(comeback_after_ms=10**9), seed=1)
    slow.run(messages, until_ms=10 * MINUTE)
    assert [b for b, _ in slow.outcome.delivered] == [b for b, _ in fast.outcome.delivered]
    back = 1_700_000_000_000 + 131_700
    assert fast.outcome.delivered[-1][1] - back < 3_000 < slow.outcome.delivered[0][1] - back
