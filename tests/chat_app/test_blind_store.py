"""The blind store's limit: a channel kept blind holds at most ``limit``
datagrams, the oldest go first, and the count survives a restart."""

import sqlite3

import pytest

from chat_app.store import Store

TAG, OTHER = bytes(16), bytes([1] * 16)


def held(store, tag):
    return store.blind.held(tag)


def test_past_the_limit_the_oldest_go_and_repeats_count_once(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    for i in range(8):
        assert store.blind.keep(TAG, f"id{i}", b"d%d" % i, now=i, limit=5)
    assert held(store, TAG) == [b"d3", b"d4", b"d5", b"d6", b"d7"]
    assert not store.blind.keep(TAG, "id7", b"d7", now=9, limit=5)  # held already: nothing goes
    assert held(store, TAG) == [b"d3", b"d4", b"d5", b"d6", b"d7"]
    store.blind.keep(OTHER, "x", b"x", now=10, limit=5)  # another channel has a limit of its own
    assert held(store, TAG)[0] == b"d3" and held(store, OTHER) == [b"x"]


def test_the_count_is_read_again_after_a_restart(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    for i in range(4):
        store.blind.keep(TAG, f"id{i}", b"d%d" % i, now=i, limit=10)
    store.close()
    store = Store(tmp_path / "db.sqlite3")
    store.blind.keep(TAG, "id4", b"d4", now=4, limit=3)  # a lower limit: the two oldest beyond it go too
    assert held(store, TAG) == [b"d2", b"d3", b"d4"]


def test_a_failed_insert_leaves_the_count_as_it_was(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    for i in range(3):
        store.blind.keep(TAG, f"id{i}", b"d%d" % i, now=i, limit=3)
    with pytest.raises(sqlite3.Error):
        store.blind.keep(TAG, "bad", object(), now=5, limit=3)  # no SQLite value: the insert fails
    store.blind.keep(TAG, "id3", b"d3", now=6, limit=3)
    assert held(store, TAG) == [b"d1", b"d2", b"d3"]


def test_forgetting_a_channel_drops_what_is_held_of_it_and_the_note_to_keep_it(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    for tag in (TAG, OTHER):
        store.blind.remember(tag)
        for i in range(3):
            store.blind.keep(tag, f"{tag.hex()}{i}", b"d%d" % i, now=i, limit=3)
    assert store.blind.forget(TAG) == 3
    assert held(store, TAG) == [] and store.blind.tags() == [OTHER] and len(held(store, OTHER)) == 3
    for i in range(3):  # kept again later, it counts from nothing: nothing is dropped early
        store.blind.keep(TAG, f"again{i}", b"a%d" % i, now=10 + i, limit=3)
    assert held(store, TAG) == [b"a0", b"a1", b"a2"]
    assert store.blind.forget(bytes([9] * 16)) == 0
