"""The protocols side by side: SVS and SDS channels on one in-memory lossy
network, then MVDS direct messages in batch and interactive mode.

    python benchmarks/protocols.py [--members 5 20 100] [--loss 0 0.1 0.3 0.5]
                                   [--messages 60] [--seed 1] [--only channels|direct]

Both run through ``sync.svs.testbed`` (fake clock; each copy of a datagram
lost independently, 10 ms + up to 20 ms latency) with their default configs
and no help from a runtime beyond answering SVS ``DataWanted`` - SDS repairs
with its own resends, sync messages and SDS-R, SVS with sync interests and
data interests. Workload: ``--messages`` publications from random members
over 30 s, then 90 s to settle. Reported per protocol, group size and loss:

* delivery: the share of (publication, member) pairs delivered at the end;
* latency p50/p99 from publish to delivery, over delivered pairs (others' publications);
* bytes on the wire per delivered publication (a broadcast to n members is n copies);
* the largest broadcast datagram.

Then a churn run (10 members, 30% loss, members leaving and returning), and
the size of an SVS sync interest as the group grows (64-hex-character
NodeIDs, the form of the application's Ed25519 keys).

Last, direct messages: ``benchmarks/mvds.py``'s table - MVDS batch,
interactive and the app's default mode, bytes per message and latency as
a function of the share of time the recipient is online (10%-100%) and of
loss (0%, 10%, 30%), for 200-byte and 4 KB bodies.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import mvds  # noqa: E402  (benchmarks/mvds.py: the direct-message table)

from sync import sds, svs  # noqa: E402
from sync.svs import packets, vector  # noqa: E402
from sync.svs.testbed import Testbed  # noqa: E402

SECOND = 1_000
GROUP = "/sds-chat/general"


def node_id(i: int) -> str:
    return f"{i:064x}"


def svs_group(n: int, loss: float, seed: int) -> Testbed:
    config = svs.Config()
    return Testbed(n, lambda i, now: svs.Channel(GROUP, "/" + node_id(i), now, config),
                   lambda state: svs.Channel.restore(state, config), loss=loss, seed=seed)


def sds_group(n: int, loss: float, seed: int) -> Testbed:
    config = sds.Config()
    return Testbed(n, lambda i, now: sds.Channel("general", node_id(i), now, config),
                   lambda state: sds.Channel.restore(state, config), loss=loss, seed=seed)


def percentile(values: list[int], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(tb: Testbed) -> dict:
    latencies, delivered, expected = [], 0, 0
    for i in tb.online():
        got = tb.members[i].delivered
        for content, (author, sent_at) in tb.sent.items():
            expected += 1
            if content in got:
                delivered += 1
                if author != i:
                    latencies.append(got[content] - sent_at)
    others = max(1, len(latencies))
    return {"delivery": delivered / max(1, expected), "p50": percentile(latencies, 0.5) / SECOND,
            "p99": percentile(latencies, 0.99) / SECOND, "bytes": tb.wire.bytes / others,
            "largest": tb.wire.largest_broadcast}


def workload(tb: Testbed, messages: int, seed: int, churn: bool = False) -> Testbed:
    rng = random.Random(seed)
    n, away = len(tb.members), set()
    for k in range(messages):
        tb.run_until(tb.now + rng.randrange(0, 2 * 30 * SECOND // messages))
        if churn and rng.random() < 0.15:
            i = rng.randrange(n)
            if i in away:
                tb.rejoin(i)
                away.discard(i)
            elif len(away) < n // 3:
                tb.leave(i)
                away.add(i)
        author = rng.choice([i for i in range(n) if i not in away])
        tb.publish(author, f"publication {k} by {author}".encode())
    for i in sorted(away):
        tb.rejoin(i)
    tb.run_until(tb.now + 90 * SECOND)
    return tb


def row(label: str, n: int, loss: float, m: dict) -> str:
    return (f"{label:4} {n:4d} {loss:5.0%} {m['delivery']:9.1%} {m['p50']:8.2f} {m['p99']:8.2f}"
            f" {m['bytes']:11,.0f} {m['largest']:8d}")


def vector_sizes(counts: list[int], budget: int) -> None:
    print(f"\nSVS sync interest as the group grows (every producer published; {budget}-byte datagrams):")
    print(f"{'producers':>9} {'vector bytes':>13} {'datagrams':>10} {'largest':>8}")
    for n in counts:
        ch = svs.Channel(GROUP, "/" + node_id(0), 0, svs.Config(max_datagram_bytes=budget))
        ch.vector = {}
        for i in range(n):
            ch._set_entry(vector.Producer(svs.Name.parse("/" + node_id(i)), 1_700_000_000), 1 + i % 1000)
        ch._emit(0)
        out = ch.datagrams_to_send(0)
        whole = len(vector.encode(ch.vector))
        assert all(isinstance(packets.decode(o.data, ch.group), packets.SyncInterest) for o in out)
        print(f"{n:9d} {whole:13,d} {len(out):10d} {max(len(o.data) for o in out):8d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members", type=int, nargs="+", default=[5, 20, 100])
    parser.add_argument("--loss", type=float, nargs="+", default=[0.0, 0.1, 0.3, 0.5])
    parser.add_argument("--messages", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", choices=("channels", "direct"), help="one part of the comparison")
    args = parser.parse_args()
    if args.only != "direct":
        channels(args)
    if args.only != "channels":
        print("\ndirect messages: MVDS batch vs interactive vs the app's default (auto)")
        mvds.table(seeds=3, messages=40, sizes=[200, 4_000], online=[0.1, 0.25, 0.5, 0.75, 1.0],
                   losses=[0.0, 0.1, 0.3])


def channels(args: argparse.Namespace) -> None:
    header = f"{'':4} {'n':>4} {'loss':>5} {'delivery':>9} {'p50 s':>8} {'p99 s':>8} {'bytes/msg':>11} {'largest':>8}"
    print(header)
    for n in args.members:
        for loss in args.loss:
            for label, build in (("svs", svs_group), ("sds", sds_group)):
                tb = workload(build(n, loss, args.seed), args.messages, args.seed)
                print(row(label, n, loss, measure(tb)), flush=True)
    print("\nchurn: 10 members, 30% loss, up to a third away at a time")
    print(header)
    for label, build in (("svs", svs_group), ("sds", sds_group)):
        tb = workload(build(10, 0.3, args.seed), args.messages, args.seed, churn=True)
        print(row(label, 10, 0.3, measure(tb)), flush=True)
    vector_sizes([5, 20, 100, 1_000], svs.Config().max_datagram_bytes)


if __name__ == "__main__":
    main()
