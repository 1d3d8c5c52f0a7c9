"""The bloom filter sized to the message rate keeps every id a peer must
still be able to acknowledge."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from sync.sds import Config
from sync.sds.bloom import RollingBloom


@settings(max_examples=40, deadline=None)
@given(rate=st.integers(1, 400), gap_ms=st.integers(50, 10_000), lag_ms=st.integers(0, 3_000),
       before=st.integers(0, 3_000))
def test_an_id_stays_in_the_filter_while_a_peer_may_still_acknowledge_it(rate, gap_ms, lag_ms, before):
    capacity = Config.bloom_capacity_for(rate, gap_ms, lag_ms)
    bloom = RollingBloom(capacity, 0.01)
    for i in range(before):  # however full the filter was
        bloom.add(f"old {i}")
    bloom.add("ours")
    for i in range(math.floor(rate * (gap_ms + lag_ms) / 1000)):  # what arrives until the peer sends
        bloom.add(f"later {i}")
    assert "ours" in bloom


def test_the_default_covers_a_busy_channel_of_chatting_peers():
    assert Config().bloom_capacity >= Config.bloom_capacity_for(250, 100, 900)
