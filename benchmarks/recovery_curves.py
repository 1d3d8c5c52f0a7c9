"""Recovery curves: how long a message takes to reach every peer, against
loss, for SDS and SVS channels, real peers on the test LAN beside the
simulator on the same workload.

    python benchmarks/recovery_curves.py [--peers 5 20] [--real-peers 5] [--loss 0 10 20 30 40 50]
        [--protocols sds svs] [--seconds 20 --rate 2] [--seeds 2] [--sim-only]
        [--svg docs/recovery-curves.svg]

Each point is one workload: every peer sends ``rate`` messages a second for
``seconds`` into one channel. The real side is ``benchmarks/lossy_lan.py``
(root: one host per peer, each dropping that share of the UDP it receives);
the simulator side is ``chat_app.sim`` running the runtime that ships on
links of 20 ms plus up to 30 ms of jitter, averaged over ``--seeds`` seeds.
Prints one markdown row per point (convergence p50/p99: from a message's
author storing it to the last peer storing it; bytes per delivery) with the
load average, and draws the p50 and p99 curves into ``--svg``: one panel per
protocol and channel size, real and simulated side by side.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.load import load_average, percentile  # noqa: E402
from chat_app.sim import Link, Scenario, simulate  # noqa: E402


@dataclass(frozen=True)
class Point:
    side: str  # "real" or "sim"
    protocol: str
    peers: int
    loss: int
    p50_s: float
    p99_s: float
    complete: bool
    bytes_per_delivery: float
    load: float


def real(protocol: str, peers: int, loss: int, args) -> Point:
    from benchmarks.lossy_lan import measure  # needs root and the test LAN; the simulator does not

    m = measure(loss, peers, int(args.seconds * args.rate), args.rate, args.converge, protocol)
    return Point("real", protocol, peers, loss, percentile(m.convergence_ms, 50) / 1000,
                 percentile(m.convergence_ms, 99) / 1000, m.identical, m.bytes_per_delivery, max(m.load))


def simulated(protocol: str, peers: int, loss: int, args) -> Point:
    reports = [simulate(Scenario(peers=peers, messages=int(args.seconds * args.rate) * peers,
                                 send_window_ms=int(args.seconds * 1000), link=Link(loss=loss / 100),
                                 protocol=protocol, seed=seed))
               for seed in range(args.seeds)]
    p50 = [r.convergence_p50_ms for r in reports if r.convergence_p50_ms is not None]
    return Point("sim", protocol, peers, loss, (sum(p50) / len(p50) if p50 else 0) / 1000,
                 max(r.convergence_p99_ms or 0 for r in reports) / 1000,
                 all(r.identical_logs and r.converged for r in reports),
                 sum(r.bytes_per_delivery for r in reports) / len(reports), load_average())


def draw(points: list[Point], path: Path) -> None:
    from matplotlib.figure import Figure

    panels = sorted({(p.protocol, p.peers) for p in points})
    fig = Figure(figsize=(4.2 * len(panels), 3.6))
    for i, (protocol, peers) in enumerate(panels, 1):
        ax = fig.add_subplot(1, len(panels), i)
        for side, colour in (("real", "tab:blue"), ("sim", "tab:orange")):
            line = sorted((p for p in points if (p.protocol, p.peers, p.side) == (protocol, peers, side)),
                          key=lambda p: p.loss)
            if line:
                losses = [p.loss for p in line]
                ax.plot(losses, [p.p50_s for p in line], "o-", color=colour, label=f"{side} p50")
                ax.plot(losses, [p.p99_s for p in line], "s--", color=colour, label=f"{side} p99")
        ax.set_title(f"{protocol.upper()}, {peers} peers")
        ax.set_xlabel("UDP loss (%)")
        ax.set_ylabel("to every peer (s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, format="svg")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peers", type=int, nargs="+", default=[5, 20])
    parser.add_argument("--loss", type=int, nargs="+", default=[0, 10, 20, 30, 40, 50], help="percent")
    parser.add_argument("--protocols", nargs="+", choices=("sds", "svs"), default=["sds", "svs"])
    parser.add_argument("--seconds", type=float, default=20, help="how long every peer sends")
    parser.add_argument("--rate", type=float, default=2, help="messages a second, per peer")
    parser.add_argument("--converge", type=float, default=90, help="seconds allowed after sending stops")
    parser.add_argument("--seeds", type=int, default=2, help="simulator runs per point")
    parser.add_argument("--sim-only", action="store_true", help="leave out the real peers (no root needed)")
    parser.add_argument("--real-peers", type=int, nargs="+",
                        help="channel sizes run with real peers too (default: every --peers); 20 real "
                             "peers need a machine of their own")
    parser.add_argument("--svg", type=Path, help="draw the curves here")
    args = parser.parse_args()
    real_sizes = () if args.sim_only else set(args.real_peers or args.peers)
    print(f"every peer sends {args.rate:g} messages a second for {args.seconds:g} s\n")
    print("| protocol | peers | loss | side | identical | to every peer p50 / p99 | bytes per delivery | load |")
    print("|---|---:|---:|---|:---:|---:|---:|---:|")
    points = []
    for protocol in args.protocols:
        for peers in args.peers:
            for loss in args.loss:
                for side in (real, simulated) if peers in real_sizes else (simulated,):
                    p = side(protocol, peers, loss, args)
                    points.append(p)
                    print(f"| {protocol} | {peers} | {loss}% | {p.side} | {'yes' if p.complete else 'NO'} "
                          f"| {p.p50_s:.2f} / {p.p99_s:.2f} s | {p.bytes_per_delivery:,.0f} | {p.load:.1f} |",
                          flush=True)
    if args.svg:
        draw(points, args.svg)
        print(f"\ncurves drawn in {args.svg}")


if __name__ == "__main__":
    main()
