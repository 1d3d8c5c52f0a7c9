"""SDS and SVS channels side by side through the real runtime, in the simulator.

    python benchmarks/protocols_runtime.py [--members 5 20 100] [--loss 0 0.1 0.3 0.5]
                                           [--messages 30] [--seed 1] [--protocols sds svs]

Unlike ``benchmarks/protocols.py`` (the two engines alone), every peer here
is the runtime that ships (``chat_app.sim``): signed envelopes, SQLite
stores, and the runtime's own help - for SDS fetching ``Missing`` messages,
for both catching up by replication with the peers it meets. Workload:
``--messages`` chat messages from random members over 30 s, then until every
member holds all of them (or 10 minutes). Links: 20 ms + up to 30 ms jitter,
each datagram lost with the given probability. Reported per protocol, group
size and loss: delivery ratio, whether every stored log is identical,
latency p50/p99 from send to delivery at the other members, convergence
p99 (until every member holds a message), bytes on the wire per delivered
message (every datagram to every address, and replication streams), and the
largest datagram. Then churn (10 members, 30% loss, three leave and come
back, two of them restarting) and a partition that heals (10 members, two
halves for 40 s, 5% loss).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chat_app.sim import Link, Outage, Partition, Scenario, simulate  # noqa: E402

SECOND = 1_000
HEADER = ("| members | loss | protocol | delivered | identical | latency p50 / p99 | convergence p99 "
          "| bytes per delivery | largest datagram | CPU |")


def run(label: str, protocol: str, scenario: Scenario) -> None:
    started = time.process_time()
    r = simulate(scenario)
    cpu = time.process_time() - started
    print(f"| {label} | {protocol} | {r.delivery_ratio:.1%} | {'yes' if r.identical_logs else 'NO'} "
          f"| {(r.latency_p50_ms or 0) / SECOND:.2f} / {(r.latency_p99_ms or 0) / SECOND:.1f} s "
          f"| {(r.convergence_p99_ms or 0) / SECOND:.1f} s | {r.bytes_per_delivery:,.0f} "
          f"| {r.largest_datagram:,} | {cpu:.0f} s |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, nargs="+", default=[5, 20, 100])
    parser.add_argument("--loss", type=float, nargs="+", default=[0.0, 0.1, 0.3, 0.5])
    parser.add_argument("--messages", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--protocols", nargs="+", choices=("sds", "svs"), default=["sds", "svs"])
    parser.add_argument("--no-scenarios", action="store_true", help="skip the churn and partition runs")
    parser.add_argument("--only-scenarios", action="store_true", help="only the churn and partition runs")
    args = parser.parse_args()
    print(HEADER)
    print("|---:|---:|---|---:|:---:|---:|---:|---:|---:|---:|")
    for n in [] if args.only_scenarios else args.members:
        for loss in args.loss:
            for protocol in args.protocols:
                run(f"{n} | {loss:.0%}", protocol, Scenario(
                    peers=n, messages=args.messages, send_window_ms=30 * SECOND, link=Link(loss=loss),
                    protocol=protocol, max_time_ms=600 * SECOND, seed=args.seed))
    if args.no_scenarios:
        return
    churn = (Outage(1, 5_000, 30_000), Outage(2, 10_000, 60_000), Outage(3, 15_000, 25_000, restart=False))
    halves = (frozenset(range(5)), frozenset(range(5, 10)))
    for protocol in args.protocols:
        run("10, churn | 30%", protocol, Scenario(
            peers=10, messages=args.messages, send_window_ms=30 * SECOND, link=Link(loss=0.3), outages=churn,
            protocol=protocol, max_time_ms=600 * SECOND, seed=args.seed))
    for protocol in args.protocols:
        run("10, partition | 5%", protocol, Scenario(
            peers=10, messages=args.messages, send_window_ms=30 * SECOND, link=Link(loss=0.05),
            partitions=(Partition(5_000, 45_000, halves),), protocol=protocol, max_time_ms=600 * SECOND,
            seed=args.seed))


if __name__ == "__main__":
    main()
