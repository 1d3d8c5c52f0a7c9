"""Reliability curves from the simulator: delivery and latency vs loss.

    python benchmarks/sim_curves.py [--peers 10] [--messages 200] [--seconds 120] [--seeds 3] [--app-only]

The workload of ``benchmarks/lossy_lan.py`` (5 real peers, 40 messages each
at 2 a second) is ``--peers 5 --messages 200 --seconds 20``: at 10 messages
a second in the channel a message is named by fewer later ones (each names
the last three of its author's log) than at the 1.7 a second of the default.

Every peer is the runtime that ships (``chat_app.sim``). For each loss rate,
runs the same workload with the runtime's own repair (fetching ``Missing``
messages and catching up by replication, as the app does) and with SDS
alone (resends, sync messages, SDS-R), and prints delivery ratio,
convergence time (until every peer holds a message) and per-peer delivery
latency, p50/p99, plus wire bytes per delivered message (every datagram to
every peer, and replication streams), and the CPU time one run takes (CPU,
not wall time: it does not count what others on a shared machine use).
Links: 20 ms + up to 30 ms jitter.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chat_app.sim import Link, Scenario, percentile, simulate  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peers", type=int, default=10)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=120, help="over which the messages are sent")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--app-only", action="store_true", help="leave out the SDS-only rows")
    parser.add_argument("--loss", type=float, nargs="+", default=[0.0, 0.1, 0.2, 0.3, 0.4, 0.5])
    args = parser.parse_args()
    print(f"{args.peers} peers, {args.messages} messages over {args.seconds:g} s, {args.seeds} seeds per point\n")
    print("| loss | repair | delivered | identical logs | convergence p50 / p99 "
          "| latency p50 / p99 | bytes per delivery | CPU per run |")
    print("|---:|---|---:|:---:|---:|---:|---:|---:|")
    for loss in args.loss:
        for fetch in (True,) if args.app_only else (True, False):
            started = time.process_time()
            reports = [
                simulate(Scenario(peers=args.peers, messages=args.messages, send_window_ms=int(args.seconds * 1000),
                                  link=Link(loss=loss), fetch=fetch, seed=seed))
                for seed in range(args.seeds)
            ]
            cpu = (time.process_time() - started) / len(reports)
            delivered = sum(r.delivery_ratio for r in reports) / len(reports)
            identical = sum(r.identical_logs and r.converged for r in reports)
            conv50 = percentile([r.convergence_p50_ms for r in reports if r.convergence_p50_ms is not None], 0.5)
            conv99 = max((r.convergence_p99_ms or 0) for r in reports)
            lat50 = percentile([r.latency_p50_ms for r in reports if r.latency_p50_ms is not None], 0.5)
            lat99 = max((r.latency_p99_ms or 0) for r in reports)
            per = sum(r.bytes_per_delivery for r in reports) / len(reports)
            mode = "fetch, catch-up + SDS" if fetch else "SDS only"
            print(f"| {loss:.0%} | {mode} | {delivered:.2%} | {identical}/{len(reports)} "
                  f"| {conv50 / 1000:.2f} s / {conv99 / 1000:.1f} s "
                  f"| {lat50 / 1000:.2f} s / {lat99 / 1000:.1f} s | {per:,.0f} | {cpu:.1f} s |", flush=True)


if __name__ == "__main__":
    main()
