"""MVDS batch vs interactive: bytes on the wire and delivery latency, as a
function of how much of the time the recipient is online and of loss.

    python benchmarks/mvds.py [--seeds 3] [--messages 40] [--sizes 200 4000]

Alice writes ``--messages`` direct messages to bob at random moments over
20 minutes, every one in the same mode: batch, interactive, or the engine's
default ("auto": interactive for large bodies or when bob was not heard from
for 30 s, batch otherwise). Bob is online a fraction of the time:
one stretch in every 5-minute period, at a random place in it; discovery
finds him 1 s after he comes back, and while he is online alice's runtime
hears his keep-alive every 23 s (as the app's peers send one), telling her
engine he is there (``peer_seen``). The link loses the given share of
datagrams (either way) and delays each by 1-20 ms. Two real ``MvdsNode``s on
the in-memory link of the tests (``tests/mvds/pair.py``), default
``Config`` (300 ms epochs, backoff 2 epochs doubling to 128, then from 16).

Reported per message delivered: payload bytes both ways (UDP/IP headers not
counted) and datagrams, and delivery latency (median, 95th percentile) from
``send`` to bob's ``DmDelivered``. Every run checks delivery exactly once and
in order.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sync.mvds import Mode  # noqa: E402
from tests.mvds.pair import Conditions, Pair  # noqa: E402

SECOND, MINUTE = 1_000, 60_000
PERIOD = 5 * MINUTE
WRITING = 20 * MINUTE
HORIZON = 60 * MINUTE


def presence(fraction: float, rng: random.Random) -> list[tuple[int, int]] | None:
    """One online stretch of ``fraction * PERIOD`` in every period."""
    if fraction >= 1:
        return None
    span = int(fraction * PERIOD)
    spans = [(0, 0)]
    for start in range(0, HORIZON, PERIOD):
        at = start + rng.randrange(PERIOD - span)
        spans.append((at, at + span))
    return spans


def one_run(size: int, fraction: float, loss: float, mode: Mode | None, messages: int, seed: int) -> dict:
    rng = random.Random(seed)
    online = presence(fraction, rng)
    moments = sorted(rng.randrange(WRITING) for _ in range(messages))
    script = [(at, (b"%04d" % i) + bytes(size - 4), mode) for i, at in enumerate(moments)]
    pair = Pair(Conditions(loss=loss, online=online, keepalive_ms=23 * SECOND), seed=seed)
    outcome = pair.run(script, HORIZON)
    delivered = [body for body, _ in outcome.delivered]
    if delivered != [body for _, body, _ in script]:
        raise SystemExit(f"delivery broken: {len(delivered)} of {messages}, size={size} online={fraction} "
                         f"loss={loss} mode={mode} seed={seed}")
    return {"bytes": outcome.bytes_on_wire / messages, "datagrams": outcome.datagrams / messages,
            "latencies": outcome.latencies()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--messages", type=int, default=40)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 4000])
    parser.add_argument("--online", type=float, nargs="+", default=[0.1, 0.25, 0.5, 0.75, 1.0])
    parser.add_argument("--loss", type=float, nargs="+", default=[0.0, 0.1, 0.3])
    args = parser.parse_args()
    table(args.seeds, args.messages, args.sizes, args.online, args.loss)


def table(seeds: int, messages: int, sizes: list[int], online: list[float], losses: list[float]) -> None:
    """Print batch, interactive and the default mode side by side, one row
    per online fraction and loss, one table per body size."""
    print(f"{messages} messages over 20 min, {seeds} seeds per cell; "
          "bytes and datagrams per message delivered; latency send -> delivered")
    modes = {"batch": Mode.BATCH, "interactive": Mode.INTERACTIVE, "auto": None}
    for size in sizes:
        print(f"\nbody {size} bytes")
        print(f"{'':>12} |" + "|".join(f"{name:^27}" for name in modes))
        print(f"{'online':>6} {'loss':>5} |" + "|".join(f"{'B/msg':>7} {'dgrams':>6} {'p50 s':>5} {'p95 s':>6} "
                                                       for _ in modes))
        for fraction in online:
            for loss in losses:
                cells = []
                for mode in modes.values():
                    runs = [one_run(size, fraction, loss, mode, messages, seed) for seed in range(seeds)]
                    latencies = sorted(x for run in runs for x in run["latencies"])
                    p95 = latencies[int(0.95 * (len(latencies) - 1))]
                    cells.append(f"{statistics.mean(r['bytes'] for r in runs):>7,.0f} "
                                 f"{statistics.mean(r['datagrams'] for r in runs):>6.1f} "
                                 f"{statistics.median(latencies) / SECOND:>5.1f} {p95 / SECOND:>6.1f} ")
                print(f"{fraction:>6.0%} {loss:>5.0%} |" + "|".join(cells), flush=True)


if __name__ == "__main__":
    main()
