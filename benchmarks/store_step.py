"""CPU cost of one message's step for a peer whose earlier messages are all still
unacknowledged (alone in the channel, or its peers are away), by backlog.

"changes" is the shipping runtime (``chat_app.runtime.Conversation``: the
step stores what ``take_changes()`` says changed). "whole" is how the state
was stored before: the whole engine state re-encoded and rewritten in one
blob every step, which made each message cost more than the one before.

``--received``: the other side, a peer receiving another's messages one step
each, by how many it received before; with the state bytes each step writes
(``take_changes()`` as CBOR). Past ``bloom_capacity`` (500) received messages
the filter is full: each id then adds one entry and removes one.

    python benchmarks/store_step.py [--backlog 0 1000 10000 100000] [--measure 500] [--whole-up-to 10000]
    python benchmarks/store_step.py --received [--backlog 0 1000 10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

import cbor2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chat_app.payload import Payload  # noqa: E402
from chat_app.runtime.conversation import Conversation  # noqa: E402
from chat_app.runtime.step import run_step  # noqa: E402
from chat_app.runtime.translate import translate  # noqa: E402
from chat_app.store import Store  # noqa: E402
from sync.sds import Channel, Config  # noqa: E402

T0 = 1_767_225_600_000
ME = "a" * 32
FILL_BATCH = 1_000


def changes_run(store: Store, backlog: int, measure: int) -> tuple[float, int]:
    conv = Conversation("general", store, ME, Config(), T0)
    now = T0
    for start in range(0, backlog, FILL_BATCH):  # the backlog, a batch per step
        for _ in range(min(FILL_BATCH, backlog - start)):
            now += 1
            conv.send("me", "x" * 40, "text", now)
        run_step(conv, now)
    began = time.process_time()
    for _ in range(measure):
        now += 1
        conv.send("me", "x" * 40, "text", now)
        run_step(conv, now)
    elapsed = time.process_time() - began
    assert len(conv.engine.unacknowledged()) == backlog + measure
    return elapsed, len(cbor2.dumps(conv.engine.export_state(include_log=False)))


def whole_run(store: Store, backlog: int, measure: int) -> tuple[float, int]:
    conv = Conversation("general", store, ME, Config(), T0)
    engine, conn, now, seq = conv.engine, store._conn, T0, 0

    def step(count: int) -> None:
        nonlocal now, seq
        for _ in range(count):
            now, seq = now + 1, seq + 1
            engine.send(Payload("text", "me", "x" * 40, seq, now).encode(), now)
        rows = translate("general", engine.events(), now).rows
        engine.datagrams_to_send(now)
        conn.execute("BEGIN IMMEDIATE")  # what commit_step did: the rows, and the whole state again
        placeholders = ", ".join("?" * len(rows[0].row()))
        conn.executemany(f"INSERT INTO messages VALUES ({placeholders})", [r.row() for r in rows])
        conn.execute("INSERT OR REPLACE INTO channel_state (channel, state, saved_at) VALUES (?, ?, ?)",
                     ("general", cbor2.dumps(engine.export_state(include_log=False)), now))
        conn.execute("COMMIT")

    for start in range(0, backlog, FILL_BATCH):
        step(min(FILL_BATCH, backlog - start))
    began = time.process_time()
    for _ in range(measure):
        step(1)
    elapsed = time.process_time() - began
    return elapsed, len(cbor2.dumps(engine.export_state(include_log=False)))


def received_run(store: Store, backlog: int, measure: int) -> tuple[float, float]:
    """CPU seconds for ``measure`` received messages, a step each, after
    ``backlog`` of them; and the state bytes a step writes, on average."""
    sender = Channel("general", "b" * 32, T0)  # the engine alone: nothing held back, nothing stored
    me = Conversation("general", store, ME, Config(), T0)
    written: deque[dict] = deque(maxlen=measure)  # the last steps' changes
    commit = store.commit_step

    def recorded(channel, changes, *rest, **kw):
        written.append(changes)  # kept, sized after the timing
        return commit(channel, changes, *rest, **kw)

    store.commit_step = recorded
    now, elapsed = T0, 0.0
    for i in range(backlog + measure):
        now += 1
        sender.send(Payload("text", "them", "x" * 40, i + 1, now).encode(), now)
        datagrams = sender.datagrams_to_send(now)
        began = time.process_time()
        for datagram in datagrams:
            me.engine.receive(datagram.data, now)
        run_step(me, now)
        if i >= backlog:
            elapsed += time.process_time() - began
    size = sum(len(cbor2.dumps(changes)) for changes in written) / measure
    assert me.engine.stats["delivered"] == backlog + measure
    return elapsed, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backlog", type=int, nargs="+", default=[0, 1_000, 10_000, 100_000])
    parser.add_argument("--measure", type=int, default=500)
    parser.add_argument("--whole-up-to", type=int, default=10_000,
                        help="the old way is quadratic: measure it only up to this backlog")
    parser.add_argument("--received", action="store_true", help="a receiving peer's step, by messages received")
    args = parser.parse_args()
    if args.received:
        print(f"{'received before':>15}  {'CPU ms/message':>14}  {'state bytes/step':>16}")
        for backlog in args.backlog:
            with tempfile.TemporaryDirectory() as tmp:
                store = Store(Path(tmp) / "bench.sqlite3")
                elapsed, size = received_run(store, backlog, args.measure)
                store.close()
            print(f"{backlog:>15,}  {1000 * elapsed / args.measure:>14.2f}  {size:>16,.0f}", flush=True)
        return
    print(f"{'unacknowledged':>14}  {'stored as':>9}  {'CPU ms/message':>14}  {'state bytes':>11}")
    for backlog in args.backlog:
        runs = [("changes", changes_run)] + ([("whole", whole_run)] if backlog <= args.whole_up_to else [])
        for name, run in runs:
            with tempfile.TemporaryDirectory() as tmp:
                store = Store(Path(tmp) / "bench.sqlite3")
                elapsed, size = run(store, backlog, args.measure)
                store.close()
            print(f"{backlog:>14,}  {name:>9}  {1000 * elapsed / args.measure:>14.2f}  {size:>11,}", flush=True)


if __name__ == "__main__":
    main()
