"""A blind store under flood: anyone can send datagrams under a private
channel's (public) tag, and the store cannot tell them from a member's. What
it spends on them - budget, disk, memory - is bounded; a real late member is
still served the whole channel."""

from __future__ import annotations

import os
import sqlite3

from chat_app.crypto import blind_id
from chat_app.runtime import blind as blind_mod

from .conftest import texts
from .test_private import PASS, ROOM

TAG = bytes(range(16))


def datagram(tag: bytes, size: int, kind: int = 0x50) -> bytes:
    """A datagram under ``tag`` that only its (random) bytes tell from a member's."""
    return bytes((1, kind)) + tag + os.urandom(size)


def held(rt, tag: bytes) -> tuple[int, int]:
    """Rows and bytes kept for ``tag``, read from the SQLite file itself."""
    conn = sqlite3.connect(rt.store.path)
    try:
        return conn.execute("SELECT count(*), coalesce(sum(length(data)), 0) FROM blind WHERE tag = ?",
                            (tag,)).fetchone()
    finally:
        conn.close()


def test_a_flood_from_one_source_is_mostly_dropped_over_budget_before_any_store_work(net):
    store = net.add("store", channels=("~" + TAG.hex(),))
    source = ("10.0.0.66", 4000)
    store.datagrams_received([(datagram(TAG, 1_000), source) for _ in range(3_000)], net.now)
    rows, _ = held(store, TAG)
    assert store.stats["blind_over_budget"] >= 2_000
    assert rows == store.stats["blind_kept"] <= 3_000 - store.stats["blind_over_budget"]
    # the budget refills with time: a source sending at a member's pace is never refused
    net.now += 10_000
    for _ in range(50):
        net.now += 100
        store.datagram_received(datagram(TAG, 1_000), source, net.now)
    assert held(store, TAG)[0] == rows + 50


def test_many_sources_cannot_grow_a_channel_past_its_byte_cap_and_the_oldest_go_first(net):
    store = net.add("store", channels=("~" + TAG.hex(),))
    size, cap = 60_000, getattr(blind_mod, "BYTES", 64 << 20)  # 64 MiB
    count = cap // size + 200  # about 12 MB past the cap
    sent = []
    for i in range(count):
        net.now += 1
        data = datagram(TAG, size)
        sent.append(blind_id(data))
        store.datagram_received(data, (f"10.1.0.{i % 12}", 5000), net.now)  # 12 sources, each within its budget
    rows, size_held = held(store, TAG)
    assert store.stats["blind_over_budget"] == 0 and store.stats["blind_kept"] == count
    assert cap - 2 * size < size_held <= cap
    kept = set(store.store.blind.ids(TAG))
    assert len(kept) == rows and kept == set(sent[-rows:])  # the newest, the oldest gone


def test_many_addresses_asking_to_be_served_keep_the_queue_bounded_and_a_late_member_still_gets_everything(net):
    alice = net.add("alice", channels=(), passphrases={ROOM: PASS})
    tag_name = alice.announced_channels[0]
    tag = bytes.fromhex(tag_name[1:])
    store = net.add("store", channels=(tag_name,))
    for i in range(30):
        alice.say(ROOM, f"line {i}", "text", net.now)
        net.run(200)
    del net.nodes[net.address(alice)]
    for i in range(200):  # garbage under the tag, from addresses of its own: held like members' datagrams
        store.datagram_received(datagram(tag, 1_000), (f"10.2.0.{i}", 6000), net.now)
    assert held(store, tag)[0] >= 230
    blind = store.private.blind
    for k in range(100):  # a tiny passing datagram from each of 100 addresses, each proven: each asks to be served
        addr = (f"10.3.0.{k}", 7000)
        store.datagram_received(datagram(tag, 40, kind=0x51), addr, net.now)
        cookie = blind._cookies.mint(tag, addr, net.now)  # the one its challenge carries (queued behind others)
        store.datagram_received(bytes((1, 0x53)) + tag + cookie, addr, net.now)  # sent back: proven
        assert len(blind._queue) <= blind_mod.QUEUE
    assert store.stats["blind_serve_busy"] > 0  # past SERVING at once, refused: asked again later
    carol = net.add("carol", channels=(), passphrases={ROOM: PASS})
    for _ in range(1_200):  # two minutes: carol's sync reaches the store again and again until it has room
        net.run(100)
        assert len(blind._queue) <= blind_mod.QUEUE and len(blind._serving) <= blind_mod.SERVING
        if len(texts(carol.store, ROOM)) == 30 and not blind._serving:
            break
    assert texts(carol.store, ROOM) == [f"line {i}" for i in range(30)]
    served = {blind_id(d) for src, d, dst in net.sent if src == net.address(store) and dst == net.address(carol)}
    assert served >= set(store.store.blind.ids(tag))  # every one held, the 200 kept at one instant included
