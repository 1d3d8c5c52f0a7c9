"""Set reconciliation against negentropy and against the full Have list.

    python benchmarks/replication.py          # 10^5 logs, and 10^6 at d = 0 and 200
    python benchmarks/replication.py --full   # also 10^6 at d = 20 and 2,000

Two peers hold N logs; d of them are held by one side only, half on each
side (negentropy's model). Bytes are every encoded CBOR reconciliation
message, both directions. Round trips are counted as negentropy counts them:
the initiator's round trips until it knows what to send; the responder knows
with the initiator's next message (in negentropy, the one naming the ids it
needs), and entries flow from then on. "Rounds" counts one-way flights until
both sides are done. A second table has d logs held by both sides at
different heights, the common case of a peer that was away.

The negentropy figures are its JavaScript implementation (16-way splits, id
lists below 32 items, 16-byte fingerprints), measured on this machine with
the same model; "before" is this project's previous design (halving splits,
one range per message exchange).
"""

from __future__ import annotations

import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sync.replication.messages import Have, decode, encode  # noqa: E402
from sync.replication.reconcile import Reconciler  # noqa: E402

# (N, d) -> (round trips, bytes)
NEGENTROPY = {(100_000, 0): (1, 321), (100_000, 20): (2, 25_789), (100_000, 200): (2, 202_854),
              (100_000, 2_000): (2, 1_314_757), (1_000_000, 200): (3, 307_552)}
BEFORE = {(100_000, 0): (2, 37), (100_000, 20): (9, 57_002), (100_000, 200): (9, 400_164),
          (100_000, 2_000): (10, 2_507_258)}


def model(n: int, d: int, heights: bool = False, seed: int = 1):
    rng = random.Random(seed)

    def key() -> str:
        return f"{rng.getrandbits(128):032x}"

    common = [(key(), 7_000_000_000_000_000_000 + i % 7, rng.randint(1, 500)) for i in range(n - d)]
    if heights:
        changed = [(key(), 9, rng.randint(1, 50)) for _ in range(d)]
        return common + changed, common + [(pk, log, seq + rng.randint(1, 9)) for pk, log, seq in changed]
    return common + [(key(), 7, 3) for _ in range(d // 2)], common + [(key(), 7, 3) for _ in range(d - d // 2)]


def reconcile(a_items, b_items) -> tuple[int, int, int, float]:
    """(bytes, round trips, rounds, seconds of reconciliation work)."""
    a, b = Reconciler(0, a_items), Reconciler(0, b_items)
    started = time.perf_counter()
    a.start()
    size = rounds = 0
    src, dst = a, b
    while msgs := src.messages():
        rounds += 1
        for msg in msgs:
            data = encode(msg)
            size += len(data)
            dst.receive(decode(data))
        src, dst = dst, src
    seconds = time.perf_counter() - started
    assert a.finished and b.finished
    trips = max(math.ceil(a.known_at / 2), math.ceil((b.known_at - 1) / 2))
    return size, trips, rounds, seconds


def cell(figures: tuple[int, int] | None) -> str:
    return f"{figures[0]} rt, {figures[1]:,} B" if figures else "-"


def main() -> None:
    full = "--full" in sys.argv
    cases = [(100_000, d) for d in (0, 1, 2, 20, 200, 2_000)]
    cases += [(1_000_000, d) for d in ((0, 20, 200, 2_000) if full else (0, 200))]
    print("d logs held by one side only, half on each side")
    print(f"{'N':>9} {'d':>6} | {'ours':>20} {'rounds':>6} {'B/diff':>7} {'time':>6} | {'negentropy':>20}"
          f" {'B/diff':>7} | {'before':>20} | {'Have lists':>11}")
    have = {}
    for n, d in cases:
        a_items, b_items = model(n, d)
        if n not in have:
            have[n] = 2 * len(encode(Have(0, tuple(a_items))))
        size, trips, rounds, seconds = reconcile(a_items, b_items)
        neg = NEGENTROPY.get((n, d))
        neg_per = f"{neg[1] // d:,}" if neg and d else "-"
        print(f"{n:>9,} {d:>6,} | {cell((trips, size)):>20} {rounds:>6} {size // max(d, 1):>7,} {seconds:>5.2f}s"
              f" | {cell(neg):>20} {neg_per:>7} | {cell(BEFORE.get((n, d))):>20} | {have[n]:>11,}")
    print()
    print("d logs held by both sides at different heights")
    print(f"{'N':>9} {'d':>6} | {'ours':>20} {'rounds':>6} {'B/diff':>7}")
    for d in (20, 200, 2_000):
        size, trips, rounds, _ = reconcile(*model(100_000, d, heights=True))
        print(f"{100_000:>9,} {d:>6,} | {cell((trips, size)):>20} {rounds:>6} {size // d:>7,}")


if __name__ == "__main__":
    main()
