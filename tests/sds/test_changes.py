"""Flat cost with many unacknowledged messages: resends back off and are
capped in rate, the state is persisted by what changed, and state saved in
the old layout still loads."""

import pathlib

import cbor2

from sync.sds import Channel, Config
from sync.sds.state import apply_changes

from .helpers import T0, make, parse, take


def test_a_lone_message_is_resent_with_doubling_periods_up_to_the_cap():
    a = make("alice", resend_unacknowledged_ms=3_000, resend_max_interval_ms=20_000,
             sync_interval_ms=10**9, sync_backoff_ms=0)
    mid = a.send(b"anyone?", T0)
    take(a)
    resent_at = []
    now = T0
    while now < T0 + 120_000:
        now = a.get_timer()
        a.handle_timer(now)
        if [w for w in take(a) if parse(w).message_id == mid]:
            resent_at.append(now - T0)
    gaps = [later - earlier for earlier, later in zip([0, *resent_at[:-1]], resent_at, strict=True)]
    assert gaps[:5] == [3_000, 6_000, 12_000, 20_000, 20_000]


def test_resends_are_capped_in_rate_however_many_are_due():
    a = make("alice", max_resends_per_s=50, sync_interval_ms=10**9, sync_backoff_ms=0, settle_sync_ms=0)
    for i in range(1_000):
        a.send(b"message %d" % i, T0)
    take(a)
    now = T0 + 3_000  # all 1,000 due at once
    a.handle_timer(now)
    burst = len(take(a))
    assert burst == 50  # a second's worth
    sent, end = burst, now + 10_000
    while (t := a.get_timer()) <= end:
        now = t
        a.handle_timer(now)
        sent += len(take(a))
    assert sent <= 50 + 50 * 10 + 1 and sent >= 50 * 10  # then 50 per second, no more
    assert a.stats["resend_deferred"] > 0


def test_in_a_larger_group_fewer_messages_are_resent_since_each_goes_to_everyone():
    """20 participants heard: 200 copies a second make 10 resent messages."""
    a = make("alice", max_resends_per_s=50, max_resent_copies_per_s=200, sync_interval_ms=10**9, sync_backoff_ms=0)
    for i in range(20):
        peer = make(f"peer{i}")
        peer.send(b"here", T0)
        a.receive(take(peer)[0], T0)
    for i in range(1_000):
        a.send(b"message %d" % i, T0)
    take(a)
    now, sent = T0 + 3_000, 0
    while (t := a.get_timer()) <= T0 + 13_000:
        now = max(now, t)
        a.handle_timer(now)
        sent += len([w for w in take(a) if parse(w).content])
    assert 10 * 10 <= sent <= 10 + 10 * 10 + 1


def test_a_step_that_sends_one_message_changes_one_entry():
    a = make("alice")
    saved = a.export_state(include_log=False)
    sizes = []
    for i in range(2_000):
        mid = a.send(b"message %d" % i, T0 + i)
        take(a)
        list(a.events())
        changes = a.take_changes()
        assert list(changes["entries"]) == ["outgoing"] and list(changes["entries"]["outgoing"]) == [mid]
        assert list(changes["parts"]) == ["clock"]
        saved = apply_changes(saved, changes)
        sizes.append(len(cbor2.dumps(changes)))
    assert max(sizes[-100:]) <= max(sizes[:100]) + 16  # flat: does not grow with the buffer
    assert len(saved["outgoing"]) == 2_000
    assert saved == a.export_state(include_log=False)


def test_changes_record_removals_and_rebuild_an_identical_channel():
    a, b = make("alice"), make("bob")
    saved = a.export_state(include_log=False)
    rows = []
    ids = [a.send(b"m%d" % i, T0 + i) for i in range(3)]
    for wire in take(a):
        b.receive(wire, T0 + 5)
    b.send(b"bob builds on them", T0 + 6)
    for wire in take(b):
        a.receive(wire, T0 + 7)  # acknowledges alice's three
    rows += [(e.lamport, e.message_id, e.sender_id, None, e.wire) for e in a.events() if hasattr(e, "wire")]
    changes = a.take_changes()
    assert {mid for mid, v in changes["entries"]["outgoing"].items() if v is None} == set(ids)
    assert set(changes["entries"]["watched"]) == set(ids)
    saved = apply_changes(saved, changes)
    revived = Channel.restore(cbor2.loads(cbor2.dumps(saved)), a.config, log=sorted(rows))
    assert revived.export_state() == a.export_state()


def test_state_saved_in_the_first_layout_still_loads():
    """Version 1 states (saved by earlier releases) are upgraded on restore."""
    alice, bob, bob_small = cbor2.loads((pathlib.Path(__file__).parent / "data/channel_states_v1.cbor").read_bytes())
    assert alice["version"] == bob["version"] == 1
    a, b = Channel.restore(alice), Channel.restore(bob)
    assert len(a.unacknowledged()) == 2 and b.waiting == 2 and len(b.log) == 3
    small = Channel.restore(bob_small, log=[(*row, b"") for row in bob["log"]])
    assert small.waiting == 2 and list(small.log) == list(b.log)
    a.handle_timer(T0 + 60_000)  # alice resends what bob lacks; bob catches up
    for wire in take(a):
        b.receive(wire, T0 + 60_001)
    assert b.waiting == 0 and len(b.log) == 7


def test_state_saved_with_the_filter_ids_as_one_list_still_loads():
    """Version 2 states (the filter's ids one list, rewritten every step;
    saved by the release before) come back with the same filter, bit for
    bit, and from then on each id is an entry of its own."""
    saved, filter_bytes = cbor2.loads((pathlib.Path(__file__).parent / "data/channel_state_v2.cbor").read_bytes())
    assert saved["version"] == 2 and len(saved["bloom"]["recent"]) == 20
    bob = Channel.restore(saved, Config(bloom_capacity=20))  # as it was made
    assert bob._bloom.to_bytes(T0 + 200) == filter_bytes
    state = bob.export_state(include_log=False)
    assert state["version"] == 4 and "recent" not in state["bloom"]
    assert sorted(state["bloom_ids"].values()) == sorted(saved["bloom"]["recent"])
    alice = make("alice")
    alice.send(b"one more", T0 + 300)
    (wire,) = take(alice)
    bob.receive(wire, T0 + 301)
    changed = bob.take_changes()["entries"]["bloom_ids"]
    assert list(changed.values()).count(None) == 1 and len(changed) == 2


def test_state_saved_with_the_repair_state_as_one_part_still_loads():
    """Version 3 states (missing ids, deadlines, SDS-R requests and
    responses and lost ids in one part, rewritten whole on every change;
    saved by the release before) come back with each as an entry of its
    own, and the channel goes on as it would have."""
    saved, config = cbor2.loads((pathlib.Path(__file__).parent / "data/channel_state_v3.cbor").read_bytes())
    repair = saved["repair"]
    assert saved["version"] == 3 and len(repair["missing"]) == 2 and len(repair["lost"]) == 4
    bob = Channel.restore(saved, Config(**config))
    state = bob.export_state(include_log=False)
    assert state["version"] == 4 and "repair" not in state
    missing = [(e.message_id, e.retrieval_hint, e.sender_id) for e in bob.missing()]
    assert missing == [tuple(m) for m in repair["missing"]]
    assert {mid: entry[5] for mid, entry in state["missing"].items()} == {mid: at for mid, *_, at in repair["requests"]}
    assert state["give_up"] == dict(repair["give_up_at"]) and state["responses"] == dict(repair["responses"])
    assert list(bob._log.lost) == repair["lost"]
    held = sorted(state["incoming"], key=lambda mid: state["incoming"][mid][3])
    owner, bare = (state["missing"][mid][2] for mid, _, _ in repair["missing"])
    assert owner == held[0] and bare is None  # charged to the first message that waits for it; a sync's, to no one
    assert bob._incoming.holdings.share("alice").missing == 1 and bob._incoming.holdings.share("").missing == 1

    (mid, at), = repair["responses"]
    bob.handle_timer(at)  # the response goes out when it was due
    assert [parse(w).message_id for w in take(bob)] == [mid]
    lost_for_good, _, _ = repair["missing"][0]
    bob.handle_timer(state["give_up"][lost_for_good])  # given up when it was due: both held messages come out
    events = list(bob.events())
    assert [e.entry.message_id for e in events if type(e).__name__ == "Lost"][:1] == [lost_for_good]
    assert bob.waiting == 0 and len(bob.log) == 9
    changes = bob.take_changes()
    assert "repair" not in changes["parts"] and lost_for_good in changes["entries"]["lost"]
