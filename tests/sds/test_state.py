"""Export/restore is exact: a channel rebuilt from its state after every
step behaves byte for byte like one that never stopped."""

import cbor2
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.sds import Channel, Config, Delivered

from .helpers import T0, take

PEERS = ("alice", "bob", "carol")
CONFIG = Config(sync_interval_ms=2_000, sync_backoff_ms=500, lost_after_ms=20_000,
                repair_t_min_ms=1_000, repair_t_max_ms=5_000, participant_timeout_ms=6_000)

op = st.one_of(
    st.tuples(st.just("send"), st.integers(0, 2), st.binary(min_size=1, max_size=20)),
    st.tuples(st.just("ephemeral"), st.integers(0, 2), st.just(b"typing")),
    st.tuples(st.just("deliver"), st.integers(0, 50), st.booleans(), st.booleans()),
    st.tuples(st.just("tick"), st.integers(1, 8_000)),
)


def run(ops, restore_every_step: bool):
    """Play ``ops`` over an in-memory network; return everything observable."""
    now = T0
    chans = [Channel("general", p, now, CONFIG) for p in PEERS]
    wire_queue: list[tuple[int, bytes]] = []  # (sender index, datagram)
    observed = []

    def pump(i):
        for w in take(chans[i]):
            wire_queue.append((i, w))
            observed.append(("tx", i, w))
        observed.extend(("ev", i, e) for e in chans[i].events())
        if restore_every_step:
            chans[i] = Channel.restore(cbor2.loads(cbor2.dumps(chans[i].export_state())), CONFIG)

    for step in ops:
        kind = step[0]
        if kind == "send":
            chans[step[1]].send(step[2], now)
            pump(step[1])
        elif kind == "ephemeral":
            chans[step[1]].send_ephemeral(step[2], now)
            pump(step[1])
        elif kind == "deliver" and wire_queue:
            src, wire = wire_queue.pop(step[1] % len(wire_queue))
            if step[3]:  # duplicate it for later
                wire_queue.append((src, wire))
            for j in range(len(chans)):
                if j != src and (step[2] or j == (src + 1) % 3):  # broadcast, or reach one peer only
                    chans[j].receive(wire, now)
                    pump(j)
        elif kind == "tick":
            now += step[1]
            for j, ch in enumerate(chans):
                if ch.get_timer() <= now:
                    ch.handle_timer(now)
                    pump(j)
    return observed, [list(ch.log) for ch in chans], [ch.export_state() for ch in chans]


@settings(max_examples=60, deadline=None)
@given(st.lists(op, max_size=60))
def test_restore_after_every_step_changes_nothing(ops):
    assert run(ops, restore_every_step=True) == run(ops, restore_every_step=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(op, max_size=80))
def test_logs_stay_ordered_without_duplicates_and_converge_after_healing(ops):
    observed, _, _ = run(ops, restore_every_step=False)
    # heal: replay with lossless delivery of everything until quiet
    now = T0
    chans = [Channel("general", p, now, CONFIG) for p in PEERS]
    sent = set()
    for step in ops:
        if step[0] == "send":
            sent.add(chans[step[1]].send(step[2], now))
        elif step[0] == "tick":
            now += step[1]
    # everything sent so far, delivered in reverse, then timers until quiet
    pending = [(i, w) for i, ch in enumerate(chans) for w in take(ch)]
    for _ in range(30):
        for src, wire in reversed(pending):
            for j, ch in enumerate(chans):
                if j != src:
                    ch.receive(wire, now)
        now += 1_000
        for ch in chans:
            if ch.get_timer() <= now:
                ch.handle_timer(now)
        pending = [(i, w) for i, ch in enumerate(chans) for w in take(ch)]
    logs = [list(ch.log) for ch in chans]
    assert all(set(log) == sent for log in logs)
    assert logs[0] == logs[1] == logs[2]
    for ch in chans:
        keys = list(ch._log.order)
        assert keys == sorted(keys) and len(set(keys)) == len(keys)
    # and in the lossy run, nobody delivered the same message twice
    for i in range(3):
        ids = [e.message_id for kind, j, e in observed if kind == "ev" and j == i and isinstance(e, Delivered)]
        assert len(ids) == len(set(ids))


def test_restore_from_external_log_rows_matches_full_restore():
    a, b = (Channel("general", p, T0, CONFIG) for p in ("alice", "bob"))
    rows = {"bob": []}
    for i in range(30):
        speaker, listener = (a, b) if i % 3 else (b, a)
        speaker.send(f"m{i}".encode(), T0 + i)
        for wire in take(speaker):
            listener.receive(wire, T0 + i)
    b.send(b"unacknowledged", T0 + 40)
    for e in b.events():
        if isinstance(e, Delivered):
            rows["bob"].append(e)
    rows_sorted = sorted(rows["bob"], key=lambda e: (e.lamport, e.message_id))
    log = [(e.lamport, e.message_id, e.sender_id, None, e.wire) for e in rows_sorted]
    small = b.export_state(include_log=False)
    assert "log" not in small and "repair_cache" not in small
    from_rows = Channel.restore(cbor2.loads(cbor2.dumps(small)), CONFIG, log=log)
    full = Channel.restore(b.export_state(), CONFIG)
    assert from_rows.export_state() == full.export_state()
