"""The bounded tables: what they keep is exactly the latest so many, as a
plain dict and list kept side by side would say."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from chat_app.bounded import OVERHEAD, ByteLru, Latest

KEYS = st.integers(0, 12)
OPS = st.lists(st.tuples(st.sampled_from(["put", "touch", "pop", "get"]), KEYS, st.integers()), max_size=200)


@given(st.integers(1, 8), OPS)
def test_latest_keeps_the_entries_put_or_touched_latest_oldest_first(capacity, ops):
    table: Latest[int, int] = Latest(capacity)
    model: dict[int, int] = {}
    order: list[int] = []  # oldest first
    for op, key, value in ops:
        if op == "put":
            dropped = table.put(key, value)
            model[key] = value
            order = [k for k in order if k != key] + [key]
            expected = order.pop(0) if len(order) > capacity else None
            if expected is not None:
                del model[expected]
            assert dropped == expected
        elif op == "touch" and key in model:
            table.touch(key)
            order = [k for k in order if k != key] + [key]
        elif op == "pop":
            assert table.pop(key) == model.pop(key, None)
            order = [k for k in order if k != key]
        else:  # reading is not a use: the order stays
            assert table.get(key) == model.get(key)
        assert list(table) == order
        assert dict(table.items()) == model and len(table) == len(model) <= capacity


def test_a_byte_lru_drops_the_least_recently_used_past_either_bound():
    cache = ByteLru(capacity=3, max_bytes=3 * (OVERHEAD + 10))
    for key in "abc":
        cache.put(key, key.upper(), 10)
    assert cache.get("a") == "A"  # a use: "b" is now the least recent
    cache.put("d", "D", 10)
    assert "b" not in cache and len(cache) == 3
    cache.put("big", "X", 2 * (OVERHEAD + 10))  # over the bytes alone: two more go
    assert "big" in cache and len(cache) == 1 and cache.bytes == 3 * OVERHEAD + 20
