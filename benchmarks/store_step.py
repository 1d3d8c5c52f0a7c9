"""Cost of the runtime's per-datagram step: engine + state export + one
SQLite transaction (what the node does before any datagram may leave).

    python benchmarks/store_step.py [--history 10000] [--measure 3000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.sds_engine import T0, conversation  # noqa: E402
from chat_app.store import Store, StoredMessage  # noqa: E402
from sync.sds import Channel, Delivered  # noqa: E402


def step(carol: Channel, store: Store, wire: bytes, now: int) -> None:
    """What the node does per datagram: engine, state export, one commit."""
    carol.receive(wire, now)
    rows = [StoredMessage("general", e.message_id, e.lamport, e.sender_id, None, None, None, None,
                          None, e.wire, e.received_at, now, e.own)
            for e in carol.events() if isinstance(e, Delivered)]
    carol.datagrams_to_send(now)
    store.commit_step("general", carol.export_state(include_log=False), rows, now)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--history", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--measure", type=int, default=3_000)
    args = parser.parse_args()
    print(f"{'history':>9}  {'steps/s':>8}  {'ms/step':>8}  {'state bytes':>11}")
    for history in args.history:
        wires = conversation(history + args.measure, T0)
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "bench.sqlite3")
            carol = Channel("general", "carol", T0)
            for i, wire in enumerate(wires[:history]):
                step(carol, store, wire, T0 + i)
            start = time.perf_counter()
            for i, wire in enumerate(wires[history:]):
                step(carol, store, wire, T0 + history + i)
            elapsed = time.perf_counter() - start
            size = len(__import__("cbor2").dumps(carol.export_state(include_log=False)))
            assert store.count("general") == history + args.measure
            store.close()
        print(f"{history:>9,}  {args.measure / elapsed:>8,.0f}  {1000 * elapsed / args.measure:>8.2f}  {size:>11,}")


if __name__ == "__main__":
    main()
