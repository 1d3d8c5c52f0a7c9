"""An insider: a sender whose every datagram is well-formed (a peer with a key
of its own passes every check before the engine), naming history that exists
nowhere, citing our messages under one-shot ids, sending datagram-sized
filters. What it can make the channel keep is bounded per sender and in all,
in count and in bytes, and persisted entry by entry; what it sends never
reaches the log as if its history were real; honest senders go on as before."""

from __future__ import annotations

import hashlib

import cbor2
from hypothesis import given, settings
from hypothesis import strategies as st

from proto.sds_pb2 import SdsMessage
from sync.sds import Buffered, Channel, Config, Delivered, Lost, Missing, Rejected, compute_message_id
from sync.sds.holdings import held_cost, missing_cost
from sync.sds.state import apply_changes

from .helpers import T0, make, of, take

MINUTE = 60_000


def made_up(tag: str, i: int) -> str:
    """A message id nobody ever sent."""
    return hashlib.sha256(f"{tag}/{i}".encode()).hexdigest()[:32]


def message(sender: str, n: int, history: list[str], now: int, content: bytes | None = None,
            bloom: bytes = b"", hint: bytes = b"") -> bytes:
    """A valid chat message (a sync one without ``content``) from ``sender``."""
    content = b"message %d" % n if content is None else content
    msg = SdsMessage(sender_id=sender, channel_id="general", lamport_timestamp=now + n,
                     message_id=compute_message_id(sender, "general", now + n, content))
    if content:
        msg.content = content
    if bloom:
        msg.bloom_filter = bloom
    for dep in history:
        msg.causal_history.add(message_id=dep, sender_id=sender, retrieval_hint=hint)
    return msg.SerializeToString()


def state_bytes(ch: Channel) -> int:
    return len(cbor2.dumps(ch.export_state(include_log=False)))


def held(ch: Channel, sender: str) -> int:
    return len(ch._incoming.holdings.share(sender).held)


def test_made_up_history_from_one_sender_is_bounded_refused_past_its_share_and_written_entry_by_entry():
    carol, alice = make("carol"), make("alice")
    config = carol.config
    saved = carol.export_state(include_log=False)
    now, sizes, written = T0, [], []
    for n in range(2_000):  # each names 256 ids that exist nowhere, the most a message may
        now += 1
        carol.receive(message("insider", n, [made_up(f"m{n}", i) for i in range(256)], now), now)
        events = list(carol.events())
        changes = carol.take_changes()
        saved = apply_changes(saved, changes)
        written.append(len(cbor2.dumps(changes)))
        if n % 250 == 249:
            sizes.append(state_bytes(carol))
            alice.send(b"alice %d" % n, now)  # an honest sender is served throughout
            for wire in take(alice):
                carol.receive(wire, now)
            assert [e.content for e in of(carol.events(), Delivered)] == [b"alice %d" % n]
            saved = apply_changes(saved, carol.take_changes())
    share = carol._incoming.holdings.share("insider")
    assert share.missing <= config.max_missing_per_sender and len(carol._incoming.missing) <= config.max_missing
    assert share.bytes <= config.max_held_bytes_per_sender
    assert carol.stats["held_full"] >= 1_990  # the first two fit its share; the rest are refused, one line each
    (refused,) = of(events, Rejected)
    assert refused.kind == "held_full" and "\n" not in refused.reason
    assert max(sizes) < 1_000_000 and max(sizes) - min(sizes) < 50_000  # bounded, and flat
    assert max(written[100:]) < 4_000  # a refused datagram writes the clock, not the missing ids
    assert saved == carol.export_state(include_log=False)  # every change was an entry
    assert "repair" not in saved


def test_a_sync_message_naming_made_up_history_is_chased_within_its_senders_share():
    carol = make("carol")
    config = carol.config
    now = T0
    for n in range(40):
        now += 1
        carol.receive(message("insider", n, [made_up(f"s{n}", i) for i in range(256)], now, content=b""), now)
    assert carol._incoming.holdings.share("insider").missing == config.max_missing_per_sender
    assert carol.stats["missing_full"] == 40 * 256 - config.max_missing_per_sender
    missing = [e for event in of(carol.events(), Missing) for e in event.entries]
    assert len(missing) == len({e.message_id for e in missing}) == config.max_missing_per_sender  # each reported once


def test_history_nobody_has_is_not_delivered_as_real_when_its_sender_has_many_messages_waiting():
    """Given up one by one, the insider's messages are refused while it has
    more than ``max_gapped_per_sender`` waiting: only the last few, when it
    holds no more than that, are delivered with their gaps - as an honest
    sender's few are."""
    carol = make("carol", lost_after_ms=MINUTE, max_gapped_per_sender=8)
    now = T0
    for n in range(20):  # twenty messages, each waiting for an id of its own that exists nowhere
        carol.receive(message("insider", n, [made_up("x", n)], now + n), now + n)
    for n in range(3):  # an honest sender with three waiting for history lost for good
        carol.receive(message("bob", n, [made_up("lost", n)], now + n), now + n)
    list(carol.events())
    carol.handle_timer(now + MINUTE + 100)
    events = list(carol.events())
    delivered = of(events, Delivered)
    assert all(e.gaps for e in delivered) and [e.sender_id for e in delivered].count("bob") == 3
    assert [e.sender_id for e in delivered].count("insider") == 8
    refused = of(events, Rejected)
    assert len(refused) == 12 and {r.kind for r in refused} == {"unfounded"} and carol.stats["unfounded"] == 12
    lost = {e.entry.message_id for e in of(events, Lost)}
    assert lost == {made_up("lost", n) for n in range(3)} | {made_up("x", n) for n in range(12, 20)}
    assert not any(carol._log.settled(made_up("x", n)) for n in range(12))  # not lost: cited again, waited for again
    assert len(carol._incoming) == 0 and len(carol._incoming.missing) == 0
    assert carol._incoming.holdings.shares == {}


def test_withholding_one_real_message_does_not_smuggle_the_rest_through_with_gaps():
    """Each waits for a made-up id and for one real message the insider
    keeps back until the made-up ids have been given up: freed by the real
    one, they still come with gaps from a sender with many waiting."""
    insider = make("insider")
    withheld_id = insider.send(b"kept back", T0)
    (withheld,) = take(insider)
    carol = make("carol", lost_after_ms=MINUTE)
    made = [made_up("y", n) for n in range(20)]
    carol.receive(message("insider", 100, made, T0, content=b""), T0)  # a sync names them first
    for n in range(20):
        carol.receive(message("insider", n + 1, [withheld_id, made[n]], T0 + 30_000), T0 + 30_000)
    list(carol.events())
    carol.handle_timer(T0 + MINUTE + 100)  # the made-up ids are given up; the real one is still missing
    assert of(carol.events(), Delivered) == [] and carol.waiting == 20
    carol.receive(withheld, T0 + MINUTE + 200)
    events = list(carol.events())
    assert [e.message_id for e in of(events, Delivered)] == [withheld_id]
    assert len(of(events, Rejected)) == 20 and carol.waiting == 0


def test_the_totals_evict_the_largest_share_first_and_spare_a_modest_one():
    config = dict(max_incoming=40, max_held_per_sender=30, max_missing=4096)
    carol = make("carol", **config)
    now = T0
    for n in range(12):  # bob waits for one message of alice's: a dozen held
        carol.receive(message("bob", n, [made_up("alice", 0)], now + n), now + n)
    for key in range(3):  # three insider keys, each filling its share
        for n in range(30):
            carol.receive(message(f"insider{key}", n, [made_up(f"i{key}", n)], now + n), now + n)
    holdings = carol._incoming.holdings
    assert len(carol._incoming) == holdings.held == 40
    assert held(carol, "bob") == 12
    assert sum(held(carol, f"insider{key}") for key in range(3)) == 28
    assert carol.stats["evicted"] + carol.stats["incoming_full"] == 90 - 28
    assert any(r.kind == "evicted" for r in of(carol.events(), Rejected))


def test_a_late_joiner_naming_200_ids_we_never_held_waits_until_they_come():
    """@waku/sds sends its last 200 messages as causal history; a peer that
    caught up elsewhere names many ids we never saw."""
    elder = make("elder")
    history = [elder.send(b"old %d" % i, T0 + i) for i in range(200)]
    old = take(elder)
    carol = make("carol")
    for n in range(10):
        carol.receive(message("joiner", n, history, T0 + 1_000 + n, hint=b"h" * 16), T0 + 1_000 + n)
    assert carol.waiting == 10 and len(carol._incoming.missing) == 200 and carol.stats["held_full"] == 0
    for wire in old:
        carol.receive(wire, T0 + 2_000)
    assert carol.waiting == 0 and len(carol.log) == 210


def test_strangers_citing_our_message_are_counted_but_not_all_remembered():
    carol = make("carol")
    mid = carol.send(b"hello", T0)
    take(carol)
    config = carol.config
    entry_sizes, now = [], T0
    for i in range(3_000):
        now += 2
        carol.receive(message(f"stranger{i:05d}", 0, [mid], now, content=b""), now)
        list(carol.events())
        changes = carol.take_changes()["entries"]
        entry = (changes.get("outgoing") or {}).get(mid) or (changes.get("watched") or {}).get(mid)
        if entry:
            entry_sizes.append(len(cbor2.dumps(entry)))
    out = carol._outgoing.watched[mid]
    assert out.peers == 3_000  # the delivery state counts every one
    assert len(out.possible_by) <= config.max_participants
    assert max(entry_sizes) < 12_000 and max(entry_sizes[-500:]) <= max(entry_sizes[500:1000]) + 64


def test_participants_filters_are_held_to_a_byte_budget():
    carol = make("carol", max_filter_bytes=200_000)
    big = bytes(60_000)  # up to a datagram long: unreadable, but kept for the watch until read
    for i in range(50):
        carol.receive(message(f"peer{i}", 0, [], T0 + i, content=b"", bloom=big), T0 + i)
    kept = [p for p, _ in carol._peers.items() if carol._peers.filter_of(p) is not None]
    assert len(carol._peers) == 50 and kept == ["peer47", "peer48", "peer49"]
    assert len(cbor2.dumps(carol.export_state(include_log=False)["peers"])) < 200_000 + 10_000


def test_the_repair_cache_is_held_to_a_byte_budget():
    carol = make("carol", repair_cache_bytes=100_000)
    text = b"x" * 20_000
    for n in range(20):
        carol.receive(message("alice", n, [], T0 + n, content=text + b"%d" % n), T0 + n)
    assert len(carol._repair.cache) == 4 and sum(map(len, carol._repair.cache.values())) <= 100_000


# ------------------------------------------------------------- bookkeeping

ops = st.lists(st.one_of(
    st.tuples(st.just("chat"), st.sampled_from(["a", "b", "c"]), st.lists(st.integers(0, 30), max_size=6)),
    st.tuples(st.just("sync"), st.sampled_from(["a", "b", "c"]), st.lists(st.integers(0, 30), max_size=6)),
    st.tuples(st.just("real"), st.integers(0, 30)),
    st.tuples(st.just("tick"), st.integers(1, 30_000)),
), max_size=60)


@settings(max_examples=80, deadline=None)
@given(ops)
def test_every_sender_is_charged_exactly_what_it_holds_and_no_bound_is_passed(script):
    """Whatever mix of waiting messages, syncs, arrivals, give-ups,
    evictions and refusals: each sender's share is what a count from
    scratch gives, and every bound holds - across restores too."""
    config = Config(max_incoming=8, max_incoming_bytes=12_000, max_held_per_sender=4,
                    max_held_bytes_per_sender=5_000, max_missing=16, max_missing_per_sender=8,
                    max_gapped_per_sender=1, lost_after_ms=40_000)
    ids = [compute_message_id("r", "general", T0 + i, b"real %d" % i) for i in range(31)]
    carol, now, n = Channel("general", "carol", T0, config), T0, 0
    for op in script:
        n += 1
        if op[0] == "tick":
            now += op[1]
            carol.handle_timer(now)
        elif op[0] == "real":
            carol.receive(message("r", op[1], [], T0, content=b"real %d" % op[1]), now)
        else:
            carol.receive(message(op[1], n, sorted({ids[i] for i in op[2]}), now,
                                  content=b"" if op[0] == "sync" else None), now)
        list(carol.events())
        carol = Channel.restore(cbor2.loads(cbor2.dumps(carol.export_state())), config)
        _check_books(carol, config)


def _check_books(ch: Channel, config: Config) -> None:
    incoming = ch._incoming
    expected: dict[str, list[int]] = {}  # sender -> [held, missing, bytes]
    for pending in incoming.pending.values():
        books = expected.setdefault(pending.sender, [0, 0, 0])
        books[0] += 1
        books[2] += held_cost(pending.wire)
    for dep, missing in incoming.missing.items():
        sender = incoming.pending[missing.owner].sender if missing.owner else missing.namer
        assert missing.owner is None or dep in incoming.pending[missing.owner].unmet
        books = expected.setdefault(sender, [0, 0, 0])
        books[1] += 1
        books[2] += missing_cost(missing.entry)
    shares = incoming.holdings.shares
    assert {s: [len(sh.held), sh.missing, sh.bytes] for s, sh in shares.items()} == expected
    assert len(incoming) <= config.max_incoming and len(incoming.missing) <= config.max_missing
    assert sum(b for _, _, b in expected.values()) <= config.max_incoming_bytes
    for held_count, missing, nbytes in expected.values():
        assert held_count <= config.max_held_per_sender and missing <= config.max_missing_per_sender
        assert nbytes <= config.max_held_bytes_per_sender
    assert not any(isinstance(e, Buffered) for e in ch.events())
