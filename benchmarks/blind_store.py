"""What keeping one datagram of a private channel costs a blind store, as the
channel fills up to its limit and past it.

    python benchmarks/blind_store.py [--held 1000 10000 100000] [--measure 500]

For each size, a fresh SQLite file is filled with that many 300-byte
datagrams of one channel, then ``--measure`` more are kept one at a time
(each its own transaction, as the running peer does), first with room to
spare and then with the limit equal to the size, so that every insert
pushes the oldest one out. Wall-clock ms per kept datagram.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chat_app.store import Store  # noqa: E402

TAG = bytes(16)


def per_insert(store: Store, measure: int, limit: int, first: int) -> float:
    data = os.urandom(300)
    start = time.perf_counter()
    for i in range(measure):
        store.blind.keep(TAG, f"{first + i:032x}", data, first + i, limit)
    return (time.perf_counter() - start) / measure * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--held", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--measure", type=int, default=500)
    args = parser.parse_args()
    print(f"{'held':>9} {'room to spare':>15} {'at the limit':>14}   (ms per kept datagram)")
    for held in args.held:
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "db.sqlite3")
            data = os.urandom(300)
            with closing(sqlite3.connect(store.path)) as conn, conn:
                conn.executemany("INSERT INTO blind (tag, blind_id, data, received_at) VALUES (?, ?, ?, ?)",
                                 [(TAG, f"{i:032x}", data, i) for i in range(held)])
            spare = per_insert(store, args.measure, 10 * held, held)
            full = per_insert(store, args.measure, held, held + args.measure)
            store.close()
        print(f"{held:>9,} {spare:>15.3f} {full:>14.3f}")


if __name__ == "__main__":
    main()
