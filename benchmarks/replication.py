"""Set reconciliation vs sending the full Have list: bytes and round trips.

    python benchmarks/replication.py

Two peers hold N logs; d of them differ in height. Bytes are the encoded
CBOR messages of the reconciliation (both directions), against one Have
message carrying all N log heights (what log-height mode sends each way).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sync.replication.messages import Have, decode, encode  # noqa: E402
from sync.replication.reconcile import Reconciler  # noqa: E402


def reconcile(a_items, b_items) -> tuple[int, int]:
    a, b = Reconciler(0, a_items), Reconciler(0, b_items)
    a.start()
    size = trips = 0
    while True:
        moved = False
        for src, dst in ((a, b), (b, a)):
            for msg in src.messages():
                data = encode(msg)
                size += len(data)
                dst.receive(decode(data))
                moved = True
        if not moved:
            break
        trips += 1
    assert a.finished and b.finished
    return size, trips


def main() -> None:
    print(f"{'N':>8} {'d':>6} {'reconcile bytes':>16} {'round trips':>12} {'Have list bytes':>16}")
    for n in (100, 1_000, 10_000, 100_000):
        items = [(f"{i:032x}", 7_000_000_000_000_000_000 + i % 7, 100) for i in range(n)]
        have = 2 * len(encode(Have(0, tuple(items))))  # each side sends one
        for d in (0, 1, 10, 100, 1_000):
            if d > n:
                continue
            other = list(items)
            for k in range(d):
                i = (k * 7919) % n
                other[i] = (other[i][0], other[i][1], 101)
            size, trips = reconcile(items, other)
            print(f"{n:>8,} {d:>6,} {size:>16,} {trips:>12} {have:>16,}")


if __name__ == "__main__":
    main()
